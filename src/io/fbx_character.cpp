// The skinned character of an FBX file as a glTF document (see fbx_character.hpp).
//
// Skinning in the FBX file: v(t) = sum_j w_j G_j(t) O_j v_mesh, with G_j the bone's global
// transform and O_j = G_j(bind)^-1 G_mesh its offset (assimp's aiBone::mOffsetMatrix). koma's
// Motion is the same skeleton in Y-up metres: with M the file-to-koma matrix, M G_j(t) is joint j's
// rigid world transform K_j(t) times its accumulated uniform scale c_j. Storing the vertices as
// V = M G_mesh v_mesh, glTF's v(t) = sum_j w_j K_j(t) IBM_j V gives the file's skinning exactly
// when IBM_j = K_j(bind)^-1, the inverse of the bind pose with its scale taken out.
#include "fbx_character.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace koma::io::fbx_detail {

namespace {

using gltf_detail::add_accessor;

Eigen::Matrix4d global_of(const aiNode* node) {
  Eigen::Matrix4d g = Eigen::Matrix4d::Identity();
  for (const aiNode* n = node; n != nullptr; n = n->mParent) g = to_eigen(n->mTransformation) * g;
  return g;
}

// The rigid part of a transform with a (nearly) uniform scale: rotation and translation.
Eigen::Matrix4d rigid_part(const Eigen::Matrix4d& x) {
  Eigen::Matrix3d l = x.topLeftCorner<3, 3>();
  const double c = std::cbrt(std::abs(l.determinant()));
  if (c > 0) l /= c;
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(l, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix4d r = Eigen::Matrix4d::Identity();
  r.topLeftCorner<3, 3>() = svd.matrixU() * svd.matrixV().transpose();
  r.topRightCorner<3, 1>() = x.topRightCorner<3, 1>();
  return r;
}

// Everything the meshes need to know about the skeleton.
struct Rig {
  std::unordered_map<const aiNode*, int> joint_of_node;
  std::unordered_map<std::string, int> joint_of_name;
  std::vector<Eigen::Matrix4d> bind;  // K_j(bind), koma frame; from the bones' offsets where known
  std::vector<bool> bind_from_bone;
};

// The skeleton joint a mesh node hangs below, or -1.
int joint_above(const aiNode* node, const Rig& rig) {
  for (const aiNode* n = node; n != nullptr; n = n->mParent) {
    const auto it = rig.joint_of_node.find(n);
    if (it != rig.joint_of_node.end()) return it->second;
  }
  return -1;
}

// A material's base colour and opacity (textures are not carried: docs/fbx.md).
int material_of(const aiScene& scene, unsigned index, tinygltf::Model& model, std::map<unsigned, int>& done) {
  if (index >= scene.mNumMaterials) return -1;
  if (const auto it = done.find(index); it != done.end()) return it->second;
  const aiMaterial& m = *scene.mMaterials[index];
  tinygltf::Material out;
  aiString name;
  if (m.Get(AI_MATKEY_NAME, name) == AI_SUCCESS) out.name = name.C_Str();
  aiColor4D colour(0.8f, 0.8f, 0.8f, 1.0f);
  if (m.Get(AI_MATKEY_BASE_COLOR, colour) != AI_SUCCESS) m.Get(AI_MATKEY_COLOR_DIFFUSE, colour);
  float opacity = 1.0f;
  if (m.Get(AI_MATKEY_OPACITY, opacity) != AI_SUCCESS || !(opacity > 0.0f)) opacity = 1.0f;
  out.pbrMetallicRoughness.baseColorFactor = {colour.r, colour.g, colour.b, std::min(1.0f, colour.a * opacity)};
  out.pbrMetallicRoughness.metallicFactor = 0.0;
  out.pbrMetallicRoughness.roughnessFactor = 0.8;
  if (out.pbrMetallicRoughness.baseColorFactor[3] < 1.0) out.alphaMode = "BLEND";
  model.materials.push_back(out);
  return done[index] = static_cast<int>(model.materials.size()) - 1;
}

// Per vertex the four largest (joint, weight) pairs, normalised. Unskinned meshes weigh 1 on `rigid`.
void vertex_weights(const aiMesh& mesh, Rig& rig, const Eigen::Matrix4d& mesh_global, const Eigen::Matrix4d& to_koma,
                    int rigid, std::vector<std::uint16_t>& joints, std::vector<float>& weights) {
  const unsigned nv = mesh.mNumVertices;
  std::vector<std::vector<std::pair<float, int>>> per(nv);
  for (unsigned b = 0; b < mesh.mNumBones; ++b) {
    const aiBone& bone = *mesh.mBones[b];
    const auto it = rig.joint_of_name.find(bone.mName.C_Str());
    if (it == rig.joint_of_name.end()) continue;
    const int j = it->second;
    if (!rig.bind_from_bone[j]) {
      // G_j(bind) = G_mesh O_j^-1, in koma's frame without its scale.
      rig.bind[j] = rigid_part(to_koma * mesh_global * to_eigen(bone.mOffsetMatrix).inverse());
      rig.bind_from_bone[j] = true;
    }
    for (unsigned w = 0; w < bone.mNumWeights; ++w) {
      const aiVertexWeight& vw = bone.mWeights[w];
      if (vw.mVertexId < nv && vw.mWeight > 0) per[vw.mVertexId].emplace_back(vw.mWeight, j);
    }
  }
  joints.assign(static_cast<size_t>(nv) * 4, 0);
  weights.assign(static_cast<size_t>(nv) * 4, 0.0f);
  for (unsigned v = 0; v < nv; ++v) {
    auto& list = per[v];
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (list.size() > 4) list.resize(4);
    float sum = 0;
    for (const auto& [w, j] : list) sum += w;
    if (list.empty() || !(sum > 0)) list = {{1.0f, std::max(rigid, 0)}}, sum = 1.0f;
    for (size_t k = 0; k < list.size(); ++k) {
      joints[v * 4 + k] = static_cast<std::uint16_t>(list[k].second);
      weights[v * 4 + k] = list[k].first / sum;
    }
  }
}

// One FBX mesh as one glTF primitive.
tinygltf::Primitive primitive(const aiMesh& mesh, const Eigen::Matrix4d& placed, Rig& rig, const Eigen::Matrix4d& mesh_global,
                              const Eigen::Matrix4d& to_koma, int rigid, tinygltf::Model& model,
                              std::vector<unsigned char>& bin) {
  tinygltf::Primitive prim;
  prim.mode = TINYGLTF_MODE_TRIANGLES;
  const unsigned nv = mesh.mNumVertices;
  const Eigen::Matrix3d normal_matrix = placed.topLeftCorner<3, 3>().inverse().transpose();
  std::vector<float> pos, nor, uv;
  for (unsigned v = 0; v < nv; ++v) {
    const aiVector3D& p = mesh.mVertices[v];
    const Eigen::Vector4d q = placed * Eigen::Vector4d(p.x, p.y, p.z, 1.0);
    pos.insert(pos.end(), {static_cast<float>(q.x()), static_cast<float>(q.y()), static_cast<float>(q.z())});
    if (mesh.HasNormals()) {
      Vec3 n = normal_matrix * Vec3(mesh.mNormals[v].x, mesh.mNormals[v].y, mesh.mNormals[v].z);
      n = n.norm() > 0 ? n.normalized() : Vec3::UnitY();
      nor.insert(nor.end(), {static_cast<float>(n.x()), static_cast<float>(n.y()), static_cast<float>(n.z())});
    }
    if (mesh.HasTextureCoords(0)) {
      // FBX puts v = 0 at the bottom of the image, glTF at the top.
      uv.insert(uv.end(), {mesh.mTextureCoords[0][v].x, 1.0f - mesh.mTextureCoords[0][v].y});
    }
  }
  constexpr int kVertices = TINYGLTF_TARGET_ARRAY_BUFFER;
  prim.attributes["POSITION"] = add_accessor(model, bin, pos, TINYGLTF_TYPE_VEC3, 3, true, kVertices);
  if (!nor.empty()) prim.attributes["NORMAL"] = add_accessor(model, bin, nor, TINYGLTF_TYPE_VEC3, 3, false, kVertices);
  if (!uv.empty()) prim.attributes["TEXCOORD_0"] = add_accessor(model, bin, uv, TINYGLTF_TYPE_VEC2, 2, false, kVertices);
  std::vector<std::uint16_t> joints;
  std::vector<float> weights;
  vertex_weights(mesh, rig, mesh_global, to_koma, rigid, joints, weights);
  prim.attributes["JOINTS_0"] = add_accessor(model, bin, joints, TINYGLTF_TYPE_VEC4, 4, kVertices);
  prim.attributes["WEIGHTS_0"] = add_accessor(model, bin, weights, TINYGLTF_TYPE_VEC4, 4, false, kVertices);
  std::vector<std::uint32_t> indices;
  for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
    const aiFace& face = mesh.mFaces[f];
    for (unsigned k = 1; k + 1 < face.mNumIndices; ++k) {  // a fan, should a polygon be left
      const unsigned tri[3] = {face.mIndices[0], face.mIndices[k], face.mIndices[k + 1]};
      if (tri[0] < nv && tri[1] < nv && tri[2] < nv) indices.insert(indices.end(), tri, tri + 3);
    }
  }
  prim.indices = add_accessor(model, bin, indices, TINYGLTF_TYPE_SCALAR, 1, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
  return prim;
}

}  // namespace

std::shared_ptr<const GltfScene> fbx_character(const aiScene& scene, const std::vector<const aiNode*>& joint_nodes,
                                               const Skeleton& sk, const Eigen::Matrix4d& to_koma,
                                               std::vector<std::string>& warnings, const std::string& file) {
  const int joints = sk.joint_count();
  Rig rig;
  rig.bind.resize(static_cast<size_t>(joints));
  rig.bind_from_bone.assign(static_cast<size_t>(joints), false);
  for (int j = 0; j < joints; ++j) {
    rig.joint_of_node[joint_nodes[static_cast<size_t>(j)]] = j;
    rig.joint_of_name[sk.names[static_cast<size_t>(j)]] = j;
    rig.bind[static_cast<size_t>(j)] = rigid_part(to_koma * global_of(joint_nodes[static_cast<size_t>(j)]));
  }
  auto out = std::make_shared<GltfScene>();
  tinygltf::Model& model = out->model;
  model.asset.version = "2.0";
  gltf_detail::add_skeleton_nodes(sk, model);
  std::vector<unsigned char> bin;
  tinygltf::Mesh mesh;
  mesh.name = "character";
  std::map<unsigned, int> materials;
  std::string left_out;
  std::vector<const aiNode*> stack = {scene.mRootNode};
  while (!stack.empty()) {
    const aiNode* node = stack.back();
    stack.pop_back();
    for (unsigned c = node->mNumChildren; c-- > 0;) stack.push_back(node->mChildren[c]);
    if (node->mNumMeshes == 0) continue;
    const Eigen::Matrix4d global = global_of(node);
    const int rigid = joint_above(node, rig);
    for (unsigned k = 0; k < node->mNumMeshes; ++k) {
      if (node->mMeshes[k] >= scene.mNumMeshes) continue;
      const aiMesh& m = *scene.mMeshes[node->mMeshes[k]];
      if (m.mNumBones == 0 && rigid < 0) {
        left_out += fmt::format("{}'{}'", left_out.empty() ? "" : ", ", m.mName.C_Str());
        continue;
      }
      if ((m.mPrimitiveTypes & (aiPrimitiveType_TRIANGLE | aiPrimitiveType_POLYGON)) == 0 || m.mNumVertices == 0)
        continue;
      tinygltf::Primitive prim = primitive(m, to_koma * global, rig, global, to_koma, rigid, model, bin);
      prim.material = material_of(scene, m.mMaterialIndex, model, materials);
      mesh.primitives.push_back(std::move(prim));
    }
  }
  if (!left_out.empty())
    warnings.push_back(fmt::format("{}: meshes {} neither deform with the skeleton nor hang below it; a glTF "
                                   "output leaves them out",
                                   file, left_out));
  if (mesh.primitives.empty()) return nullptr;
  std::vector<Eigen::Matrix4d> inverse_bind;
  for (const Eigen::Matrix4d& bind : rig.bind) inverse_bind.push_back(bind.inverse());
  gltf_detail::add_skin(model, bin, inverse_bind);
  model.meshes.push_back(std::move(mesh));
  tinygltf::Node mesh_node;
  mesh_node.name = "character";
  mesh_node.mesh = 0;
  mesh_node.skin = 0;
  model.nodes.push_back(mesh_node);
  tinygltf::Scene s;
  s.nodes = {0, static_cast<int>(model.nodes.size()) - 1};
  model.scenes.push_back(s);
  model.defaultScene = 0;
  while (bin.size() % 4 != 0) bin.push_back(0);
  tinygltf::Buffer buffer;
  buffer.data = std::move(bin);
  model.buffers.push_back(std::move(buffer));
  out->joint_nodes.resize(static_cast<size_t>(joints));
  for (int j = 0; j < joints; ++j) out->joint_nodes[static_cast<size_t>(j)] = j;
  out->joint_names = sk.names;
  return out;
}

}  // namespace koma::io::fbx_detail
