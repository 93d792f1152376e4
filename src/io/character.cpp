// The carried character as drawable arrays (see koma/io/character.hpp).
//
// glTF skinning: v(t) = sum_k w_k G_{joint_k}(t) IBM_k v, with G the file's global joint
// transform. koma's Motion bakes the nodes above the skeleton into its root and scales every
// length by their scale s, so the Motion's world transform W_j(t) (T R S down the chain) equals
// G_j(t) with the scale s taken out: G_j = W_j S(s). Each bone's inverse_bind is therefore
// S(s) IBM. A mesh without skin below joint node J moves rigidly with it: its bind is
// S(s) G_J(rest)^-1 G_mesh(rest).
#include "koma/io/character.hpp"

#include <fmt/format.h>
#include <stb/stb_image.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>

#include "gltf_scene.hpp"
#include "koma/core/error.hpp"
#include "koma/core/text.hpp"

namespace koma::io {

std::size_t CharacterMesh::triangle_count() const noexcept {
  std::size_t n = 0;
  for (const CharacterPart& p : parts) n += p.indices.size() / 3;
  return n;
}

void CharacterMesh::validate(int joint_count) const {
  auto fail = [](size_t part, const std::string& what) {
    throw Error(ErrorCode::bad_data, fmt::format("character part {}", part), what);
  };
  for (size_t b = 0; b < bones.size(); ++b) {
    if (bones[b].joint < 0 || bones[b].joint >= joint_count || !bones[b].inverse_bind.allFinite())
      throw Error(ErrorCode::bad_data, fmt::format("character bone {}", b),
                  fmt::format("joint {} is not one of the {} joints, or its bind is not finite", bones[b].joint,
                              joint_count));
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const CharacterPart& p = parts[i];
    const size_t n = p.positions.size() / 3;
    if (p.positions.size() != n * 3 || p.normals.size() != n * 3 || p.uvs.size() != n * 2 || p.bones.size() != n * 4 ||
        p.weights.size() != n * 4)
      fail(i, "its vertex arrays disagree in length");
    if (p.indices.size() % 3 != 0) fail(i, "its index count is not a multiple of 3");
    for (std::uint32_t v : p.indices)
      if (v >= n) fail(i, fmt::format("index {} is past its {} vertices", v, n));
    for (std::uint16_t b : p.bones)
      if (b >= bones.size()) fail(i, fmt::format("bone {} is past the {} bones", b, bones.size()));
    if (p.material < 0 || p.material >= static_cast<int>(materials.size()))
      fail(i, fmt::format("material {} does not exist", p.material));
    for (float f : p.positions)
      if (!std::isfinite(f)) fail(i, "a position is not finite");
  }
  for (const CharacterMaterial& m : materials) {
    if (m.texture >= static_cast<int>(textures.size()))
      throw Error(ErrorCode::bad_data, m.name, fmt::format("texture {} does not exist", m.texture));
  }
  for (const CharacterTexture& t : textures) {
    if (t.width < 1 || t.height < 1 || t.rgba.size() != static_cast<size_t>(t.width) * t.height * 4)
      throw Error(ErrorCode::bad_data, "character texture", "its size and pixels disagree");
  }
}

CharacterTexture decode_texture(const std::vector<std::uint8_t>& bytes, const std::string& context) {
  if (bytes.empty() || bytes.size() > (std::size_t{1} << 30))
    throw Error(ErrorCode::bad_file, context, fmt::format("{} bytes are not a picture", bytes.size()));
  int w = 0, h = 0, channels = 0;
  const int size = static_cast<int>(bytes.size());
  if (!stbi_info_from_memory(bytes.data(), size, &w, &h, &channels))
    throw Error(ErrorCode::bad_file, context,
                fmt::format("not a PNG or JPEG picture ({})", printable(stbi_failure_reason())));
  if (w < 1 || h < 1 || w > 16384 || h > 16384)
    throw Error(ErrorCode::bad_file, context, fmt::format("{}x{} pixels: expected 1 .. 16384 on a side", w, h));
  stbi_uc* pixels = stbi_load_from_memory(bytes.data(), size, &w, &h, &channels, 4);
  if (!pixels)
    throw Error(ErrorCode::bad_file, context,
                fmt::format("cannot decode: {}", printable(stbi_failure_reason())));
  CharacterTexture t;
  t.width = w;
  t.height = h;
  t.rgba.assign(pixels, pixels + static_cast<size_t>(w) * h * 4);
  stbi_image_free(pixels);
  return t;
}

namespace {

Eigen::Matrix4d trs_matrix(const tinygltf::Node& node) {
  const gltf_detail::Trs t = gltf_detail::node_trs(node);
  Eigen::Affine3d a = Eigen::Translation3d(t.translation) * t.rotation * Eigen::Scaling(t.scale);
  return a.matrix();
}

// Everything the meshes of one document need: node parents, rest globals, the joint of each node.
struct Doc {
  const tinygltf::Model& model;
  const std::string& file;
  std::vector<int> parent;
  std::vector<int> joint_of_node;  // Motion joint of each node, or -1
  Eigen::Matrix4d scale_fix = Eigen::Matrix4d::Identity();  // S(ancestor_scale)
  CharacterMeshResult out;
  std::map<int, int> material_done;
  std::map<int, int> texture_done;

  Eigen::Matrix4d rest_global(int node) const {
    Eigen::Matrix4d g = Eigen::Matrix4d::Identity();
    for (int n = node, guard = 0; n >= 0 && guard <= static_cast<int>(parent.size()); n = parent[n], ++guard)
      g = trs_matrix(model.nodes[static_cast<size_t>(n)]) * g;
    return g;
  }
  // The Motion joint at or above `node`, or -1.
  int joint_above(int node) const {
    for (int n = node, guard = 0; n >= 0 && guard <= static_cast<int>(parent.size()); n = parent[n], ++guard)
      if (joint_of_node[static_cast<size_t>(n)] >= 0) return joint_of_node[static_cast<size_t>(n)];
    return -1;
  }
};

int texture_of(Doc& doc, int texture_index, const std::string& material_name) {
  if (const auto it = doc.texture_done.find(texture_index); it != doc.texture_done.end()) return it->second;
  const auto& model = doc.model;
  int result = -1;
  const std::string where = fmt::format("{}: material '{}' base colour texture {}", doc.file, material_name, texture_index);
  try {
    if (texture_index < 0 || texture_index >= static_cast<int>(model.textures.size()))
      throw Error(ErrorCode::bad_file, where, "does not exist");
    const tinygltf::Texture& tex = model.textures[static_cast<size_t>(texture_index)];
    if (tex.source < 0 || tex.source >= static_cast<int>(model.images.size()))
      throw Error(ErrorCode::bad_file, where, fmt::format("names image {}, which does not exist", tex.source));
    const tinygltf::Image& image = model.images[static_cast<size_t>(tex.source)];
    std::vector<std::uint8_t> bytes(image.image.begin(), image.image.end());
    if (bytes.empty() && image.bufferView >= 0 && image.bufferView < static_cast<int>(model.bufferViews.size())) {
      const auto& view = model.bufferViews[static_cast<size_t>(image.bufferView)];
      if (view.buffer >= 0 && view.buffer < static_cast<int>(model.buffers.size())) {
        const auto& data = model.buffers[static_cast<size_t>(view.buffer)].data;
        if (view.byteOffset <= data.size() && view.byteLength <= data.size() - view.byteOffset)
          bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(view.byteOffset),
                       data.begin() + static_cast<std::ptrdiff_t>(view.byteOffset + view.byteLength));
      }
    }
    CharacterTexture t = decode_texture(bytes, image.uri.empty() ? fmt::format("{} (image {})", where, tex.source)
                                                                 : fmt::format("{} ({})", where, image.uri));
    if (tex.sampler >= 0 && tex.sampler < static_cast<int>(model.samplers.size()))
      t.repeat = model.samplers[static_cast<size_t>(tex.sampler)].wrapS != TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE;
    doc.out.mesh.textures.push_back(std::move(t));
    result = static_cast<int>(doc.out.mesh.textures.size()) - 1;
  } catch (const Error& e) {
    doc.out.warnings.push_back(fmt::format("{}: {}; drawn in its base colour", e.context(), e.message()));
  }
  return doc.texture_done[texture_index] = result;
}

int material_of(Doc& doc, int index) {
  if (const auto it = doc.material_done.find(index); it != doc.material_done.end()) return it->second;
  CharacterMaterial m;
  if (index >= 0 && index < static_cast<int>(doc.model.materials.size())) {
    const tinygltf::Material& src = doc.model.materials[static_cast<size_t>(index)];
    m.name = src.name.empty() ? fmt::format("material {}", index) : src.name;
    const auto& f = src.pbrMetallicRoughness.baseColorFactor;
    if (f.size() == 4)
      for (int c = 0; c < 4; ++c) m.base_colour[static_cast<size_t>(c)] = static_cast<float>(std::clamp(f[c], 0.0, 1.0));
    m.double_sided = src.doubleSided;
    if (src.alphaMode == "MASK") m.alpha_cutoff = static_cast<float>(src.alphaCutoff);
    if (src.pbrMetallicRoughness.baseColorTexture.index >= 0)
      m.texture = texture_of(doc, src.pbrMetallicRoughness.baseColorTexture.index, m.name);
  } else {
    m.name = "default";
  }
  doc.out.mesh.materials.push_back(m);
  return doc.material_done[index] = static_cast<int>(doc.out.mesh.materials.size()) - 1;
}

std::vector<float> to_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// Smooth normals from the triangles (area-weighted), for primitives that carry none.
std::vector<float> computed_normals(const std::vector<float>& pos, const std::vector<std::uint32_t>& idx) {
  const size_t n = pos.size() / 3;
  std::vector<Eigen::Vector3d> acc(n, Eigen::Vector3d::Zero());
  auto p = [&](std::uint32_t i) { return Eigen::Vector3d(pos[i * 3], pos[i * 3 + 1], pos[i * 3 + 2]); };
  for (size_t t = 0; t + 2 < idx.size(); t += 3) {
    const Eigen::Vector3d fn = (p(idx[t + 1]) - p(idx[t])).cross(p(idx[t + 2]) - p(idx[t]));
    for (int k = 0; k < 3; ++k) acc[idx[t + static_cast<size_t>(k)]] += fn;
  }
  std::vector<float> out(n * 3);
  for (size_t i = 0; i < n; ++i) {
    const Eigen::Vector3d u = acc[i].norm() > 0 ? acc[i].normalized() : Eigen::Vector3d::UnitY();
    for (int c = 0; c < 3; ++c) out[i * 3 + static_cast<size_t>(c)] = static_cast<float>(u[c]);
  }
  return out;
}

// Bone indices of a skin: one bone per skin joint, bound to the Motion joint at or above it.
std::vector<std::uint16_t> skin_bones(Doc& doc, int skin_index, int* count) {
  const tinygltf::Skin& skin = doc.model.skins[static_cast<size_t>(skin_index)];
  std::vector<double> ibm;
  if (skin.inverseBindMatrices >= 0) {
    int n = 0, comps = 0;
    ibm = gltf_detail::read_accessor(doc.model, skin.inverseBindMatrices, {TINYGLTF_TYPE_MAT4},
                                     fmt::format("skin {} inverseBindMatrices", skin_index), doc.file, &n, &comps);
    if (n < static_cast<int>(skin.joints.size()))
      throw Error(ErrorCode::bad_file, fmt::format("{}: skin {}", doc.file, skin_index), "too few inverse bind matrices");
  }
  std::vector<std::uint16_t> bones;
  for (size_t k = 0; k < skin.joints.size(); ++k) {
    const int node = skin.joints[k];
    if (node < 0 || node >= static_cast<int>(doc.model.nodes.size()))
      throw Error(ErrorCode::bad_file, fmt::format("{}: skin {}", doc.file, skin_index),
                  fmt::format("joint node {} does not exist", node));
    CharacterBone b;
    const int direct = doc.joint_of_node[static_cast<size_t>(node)];
    b.joint = direct >= 0 ? direct : std::max(doc.joint_above(node), 0);
    Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
    if (!ibm.empty())
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) m(r, c) = ibm[k * 16 + static_cast<size_t>(c * 4 + r)];
    if (direct < 0 && b.joint >= 0) {
      // A skin joint outside the skeleton keeps its rest placement relative to the joint above it.
      const int jn = static_cast<int>(std::find(doc.joint_of_node.begin(), doc.joint_of_node.end(), b.joint) -
                                      doc.joint_of_node.begin());
      m = doc.rest_global(jn).inverse() * doc.rest_global(node) * m;
    }
    b.inverse_bind = doc.scale_fix * m;
    doc.out.mesh.bones.push_back(b);
    bones.push_back(static_cast<std::uint16_t>(doc.out.mesh.bones.size() - 1));
  }
  *count = static_cast<int>(bones.size());
  return bones;
}

// One triangle primitive of a mesh node, skinned by `bones` (the skin's) or rigidly on `rigid_bone`.
void add_primitive(Doc& doc, const tinygltf::Primitive& prim, const std::string& label,
                   const std::vector<std::uint16_t>& bones, int rigid_bone) {
  if (prim.mode != -1 && prim.mode != TINYGLTF_MODE_TRIANGLES) {
    doc.out.warnings.push_back(fmt::format("{}: {} is not a triangle list (mode {}); left out", doc.file, label, prim.mode));
    return;
  }
  const auto attr = [&](const char* name) {
    const auto it = prim.attributes.find(name);
    return it == prim.attributes.end() ? -1 : it->second;
  };
  const int pos_acc = attr("POSITION");
  if (pos_acc < 0) return;
  CharacterPart part;
  int n = 0, comps = 0;
  part.positions = to_floats(gltf_detail::read_accessor(doc.model, pos_acc, {TINYGLTF_TYPE_VEC3}, label + " POSITION",
                                                        doc.file, &n, &comps));
  if (n == 0) return;
  const size_t nv = static_cast<size_t>(n);
  if (prim.indices >= 0) {
    int ni = 0;
    const std::vector<double> idx = gltf_detail::read_accessor(doc.model, prim.indices, {TINYGLTF_TYPE_SCALAR},
                                                               label + " indices", doc.file, &ni, &comps);
    for (double v : idx) {
      if (v < 0 || v >= static_cast<double>(nv))
        throw Error(ErrorCode::bad_file, fmt::format("{}: {}", doc.file, label),
                    fmt::format("index {} is past its {} vertices", v, nv));
      part.indices.push_back(static_cast<std::uint32_t>(v));
    }
  } else {
    for (size_t i = 0; i < nv; ++i) part.indices.push_back(static_cast<std::uint32_t>(i));
  }
  part.indices.resize(part.indices.size() / 3 * 3);
  if (const int a = attr("NORMAL"); a >= 0) {
    part.normals = to_floats(gltf_detail::read_accessor(doc.model, a, {TINYGLTF_TYPE_VEC3}, label + " NORMAL", doc.file, &n, &comps));
  }
  if (part.normals.size() != nv * 3) part.normals = computed_normals(part.positions, part.indices);
  if (const int a = attr("TEXCOORD_0"); a >= 0)
    part.uvs = to_floats(gltf_detail::read_accessor(doc.model, a, {TINYGLTF_TYPE_VEC2}, label + " TEXCOORD_0", doc.file, &n, &comps));
  if (part.uvs.size() != nv * 2) part.uvs.assign(nv * 2, 0.0f);
  part.bones.assign(nv * 4, 0);
  part.weights.assign(nv * 4, 0.0f);
  const int ja = attr("JOINTS_0"), wa = attr("WEIGHTS_0");
  std::vector<double> js, ws;
  if (!bones.empty() && ja >= 0 && wa >= 0) {
    js = gltf_detail::read_accessor(doc.model, ja, {TINYGLTF_TYPE_VEC4}, label + " JOINTS_0", doc.file, &n, &comps);
    ws = gltf_detail::read_accessor(doc.model, wa, {TINYGLTF_TYPE_VEC4}, label + " WEIGHTS_0", doc.file, &n, &comps);
    if (js.size() != nv * 4 || ws.size() != nv * 4) js.clear(), ws.clear();
  }
  for (size_t v = 0; v < nv; ++v) {
    double sum = 0;
    for (size_t k = 0; k < 4 && !js.empty(); ++k) {
      const double j = js[v * 4 + k], w = ws[v * 4 + k];
      if (!(w > 0) || j < 0 || j >= static_cast<double>(bones.size())) continue;
      part.bones[v * 4 + k] = bones[static_cast<size_t>(j)];
      part.weights[v * 4 + k] = static_cast<float>(w);
      sum += w;
    }
    if (sum > 0) {
      for (size_t k = 0; k < 4; ++k) part.weights[v * 4 + k] = static_cast<float>(part.weights[v * 4 + k] / sum);
      doc.out.weighted = true;
    } else {
      part.bones[v * 4] = static_cast<std::uint16_t>(rigid_bone);
      part.weights[v * 4] = 1.0f;
      if (js.empty() && bones.empty()) doc.out.weighted = true;  // a rigid mesh below a joint moves with it
    }
  }
  part.material = material_of(doc, prim.material);
  doc.out.mesh.parts.push_back(std::move(part));
}

}  // namespace

CharacterMeshResult character_mesh(const GltfScene& scene, int joint_count, const std::string& file) {
  if (static_cast<int>(scene.joint_nodes.size()) != joint_count)
    throw Error(ErrorCode::mismatch, file,
                fmt::format("the character has {} joints, the motion {}", scene.joint_nodes.size(), joint_count));
  const tinygltf::Model& model = scene.model;
  // scale_fix is given, not `{}`: `{}` would replace its initialiser by Eigen's default constructor,
  // which leaves a matrix uninitialised (its off-diagonal was stack garbage, drawn under ASan).
  Doc doc{model, file, std::vector<int>(model.nodes.size(), -1), std::vector<int>(model.nodes.size(), -1),
          Eigen::Matrix4d::Identity(), {}, {}, {}};
  for (size_t n = 0; n < model.nodes.size(); ++n)
    for (int c : model.nodes[n].children)
      if (c >= 0 && c < static_cast<int>(model.nodes.size())) doc.parent[static_cast<size_t>(c)] = static_cast<int>(n);
  for (int j = 0; j < joint_count; ++j) {
    const int node = scene.joint_nodes[static_cast<size_t>(j)];
    if (node >= 0 && node < static_cast<int>(model.nodes.size())) doc.joint_of_node[static_cast<size_t>(node)] = j;
  }
  const double s = scene.ancestor_scale;
  doc.scale_fix = Eigen::Vector4d(s, s, s, 1.0).asDiagonal();
  std::map<int, std::vector<std::uint16_t>> skins;
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const tinygltf::Node& node = model.nodes[n];
    if (node.mesh < 0 || node.mesh >= static_cast<int>(model.meshes.size())) continue;
    const std::string mesh_name = model.meshes[static_cast<size_t>(node.mesh)].name;
    const std::string label = fmt::format("mesh {}{}", node.mesh, mesh_name.empty() ? "" : " '" + mesh_name + "'");
    std::vector<std::uint16_t> bones;
    int rigid = -1;
    if (node.skin >= 0 && node.skin < static_cast<int>(model.skins.size())) {
      auto it = skins.find(node.skin);
      if (it == skins.end()) {
        int count = 0;
        it = skins.emplace(node.skin, skin_bones(doc, node.skin, &count)).first;
      }
      bones = it->second;
      if (bones.empty()) continue;
      rigid = bones.front();
    } else {
      const int j = doc.joint_above(static_cast<int>(n));
      if (j < 0) {
        doc.out.warnings.push_back(fmt::format("{}: {} is neither skinned nor below a joint; left out", file, label));
        continue;
      }
      const int jn = scene.joint_nodes[static_cast<size_t>(j)];
      CharacterBone b{j, doc.scale_fix * doc.rest_global(jn).inverse() * doc.rest_global(static_cast<int>(n))};
      doc.out.mesh.bones.push_back(b);
      rigid = static_cast<int>(doc.out.mesh.bones.size()) - 1;
    }
    const auto& prims = model.meshes[static_cast<size_t>(node.mesh)].primitives;
    for (size_t p = 0; p < prims.size(); ++p)
      add_primitive(doc, prims[p], fmt::format("{} primitive {}", label, p), bones, rigid);
  }
  doc.out.mesh.validate(joint_count);
  return std::move(doc.out);
}

}  // namespace koma::io
