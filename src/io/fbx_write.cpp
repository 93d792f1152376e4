// FBX 7.4 writer: Motion (+ the character read with it) -> an FBX document (see koma/io/fbx.hpp).
//
// Frames. koma's world is Y-up metres; the file's is `s` file units per metre with its axes
// rotated by C (identity for Y-up; +90 degrees about X for Z-up). Only the roots carry C: a root's
// local transform is [C R | s C t], every other joint keeps its local rotation and gets s t, so
// the file's bone world transforms are B_j(t) = [C R_j(t) | s C p_j(t)], the koma world transform
// K_j(t) = [R_j | p_j] seen in the file's frame.
//
// Skinning. glTF deforms v(t) = sum_j w_j J_j(t) IBM_j v with the joint's world matrix J_j =
// K_j S(a) (a = the uniform scale of the nodes above the skeleton, which koma folds into lengths).
// FBX deforms v(t) = sum_j w_j B_j(t) TransformLink_j^-1 G_mesh v. With the mesh at the origin
// (G_mesh = I) and its vertices stored as s C v, the two agree when TransformLink_j = [C L | s C b]
// for [L | b] = IBM_j^-1 S(1/a), the bone's bind pose in koma's frame: the cluster's
// TransformLink is exactly that, and its Transform is TransformLink^-1 G_mesh.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "fbx_document.hpp"
#include "gltf_scene.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/quat_sign.hpp"
#include "koma/core/rotation.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/io/fbx.hpp"

namespace koma::io {

namespace {

using fbx_detail::ObjectName;
using fbx_detail::p70;
using fbx_detail::Property;
using fbx_detail::RawBytes;
using fbx_detail::Record;
using Mat4 = Eigen::Matrix4d;
using Mat3 = Eigen::Matrix3d;

constexpr std::int64_t kTicksPerSecond = 46186158000;  // FBX time unit (KTime)

// The file's frame: rotation C and file units per metre s.
struct FileFrame {
  Mat3 c = Mat3::Identity();
  double s = 100.0;

  Vec3 point(const Vec3& v) const { return s * (c * v); }
  Vec3 direction(const Vec3& v) const { return c * v; }
  // [C L | s C b] of a koma-frame transform [L | b].
  Mat4 transform(const Mat4& k) const {
    Mat4 out = Mat4::Identity();
    out.topLeftCorner<3, 3>() = c * k.topLeftCorner<3, 3>();
    out.topRightCorner<3, 1>() = s * (c * k.topRightCorner<3, 1>());
    return out;
  }
};

FileFrame file_frame(const FbxWriteOptions& o) {
  FileFrame f;
  f.s = 1.0 / metres_per_unit(o.unit);
  if (o.up == FbxUpAxis::z) f.c = Eigen::AngleAxisd(kPi / 2, Vec3::UnitX()).toRotationMatrix();
  return f;
}

std::vector<double> flat(const Mat4& m) {  // column-major, as FBX stores matrices
  return std::vector<double>(m.data(), m.data() + 16);
}

// FBX Euler XYZ (R = Rz Ry Rx) in degrees, nearest to `near` (degrees) so curves stay continuous.
Vec3 euler_degrees(const Quat& q, const Vec3& near) {
  const Vec3 zyx = quat_to_euler(q, EulerOrder::ZYX, Vec3(near.z(), near.y(), near.x()) * kDegToRad);
  return Vec3(zyx.z(), zyx.y(), zyx.x()) * kRadToDeg;
}

Quat rotation_of(const Mat3& l) {
  Eigen::JacobiSVD<Mat3> svd(l, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat3 r = svd.matrixU() * svd.matrixV().transpose();
  if (r.determinant() < 0) r = -r;
  return Quat(r).normalized();
}

// Object ids and the connections between objects.
struct Builder {
  std::int64_t next = 1000000;
  Record objects{"Objects", {}, {}};
  Record connections{"Connections", {}, {}};
  std::map<std::string, int> counts;  // object type -> count (Definitions)

  std::int64_t id() { return next++; }
  Record& object(const std::string& type, std::vector<Property> props) {
    ++counts[type];
    Record& r = objects.add(type, std::move(props));
    r.scope = true;
    return r;
  }
  void connect(std::int64_t child, std::int64_t parent) { connections.add("C", {std::string("OO"), child, parent}); }
  void connect(std::int64_t child, std::int64_t parent, const std::string& property) {
    connections.add("C", {std::string("OP"), child, parent, property});
  }
};

// ---------------------------------------------------------------- the character's data (glTF)

// The values of an accessor as doubles (normalised integers scaled to [0, 1]), `components` per
// element. Throws Error(bad_data) for an accessor that does not fit its buffer.
std::vector<double> accessor_values(const tinygltf::Model& model, int index, int& components) {
  const std::string where = fmt::format("accessor {}", index);
  if (index < 0 || index >= static_cast<int>(model.accessors.size()))
    throw Error(ErrorCode::bad_data, where, "the character refers to a missing accessor");
  const tinygltf::Accessor& a = model.accessors[static_cast<size_t>(index)];
  components = tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(a.type));
  const int size = tinygltf::GetComponentSizeInBytes(static_cast<std::uint32_t>(a.componentType));
  if (components <= 0 || size <= 0) throw Error(ErrorCode::bad_data, where, "unsupported accessor type");
  std::vector<double> out(a.count * static_cast<size_t>(components), 0.0);
  if (a.bufferView < 0) return out;  // all zeros (sparse accessors are not used by skins and meshes)
  const tinygltf::BufferView& view = model.bufferViews.at(static_cast<size_t>(a.bufferView));
  const auto& data = model.buffers.at(static_cast<size_t>(view.buffer)).data;
  const size_t stride = view.byteStride > 0 ? view.byteStride : static_cast<size_t>(components * size);
  const size_t start = view.byteOffset + a.byteOffset;
  if (a.count > 0 && (start + stride * (a.count - 1) + static_cast<size_t>(components * size) > data.size() ||
                      view.byteOffset + view.byteLength > data.size()))
    throw Error(ErrorCode::bad_data, where, "the accessor runs past its buffer");
  for (size_t e = 0; e < a.count; ++e)
    for (int c = 0; c < components; ++c) {
      const unsigned char* p = data.data() + start + e * stride + static_cast<size_t>(c * size);
      double v = 0;
      switch (a.componentType) {
        case TINYGLTF_COMPONENT_TYPE_FLOAT: { float f; std::memcpy(&f, p, 4); v = f; break; }
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: v = *p; if (a.normalized) v /= 255.0; break;
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: { std::uint16_t u; std::memcpy(&u, p, 2); v = u; if (a.normalized) v /= 65535.0; break; }
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: { std::uint32_t u; std::memcpy(&u, p, 4); v = u; break; }
        case TINYGLTF_COMPONENT_TYPE_BYTE: { std::int8_t i; std::memcpy(&i, p, 1); v = a.normalized ? std::max(i / 127.0, -1.0) : i; break; }
        case TINYGLTF_COMPONENT_TYPE_SHORT: { std::int16_t i; std::memcpy(&i, p, 2); v = a.normalized ? std::max(i / 32767.0, -1.0) : i; break; }
        default: throw Error(ErrorCode::bad_data, where, "unsupported component type");
      }
      out[e * static_cast<size_t>(components) + static_cast<size_t>(c)] = v;
    }
  return out;
}

// Bind poses K_j(bind) of the joints in koma's frame: from the skins' inverse bind matrices where a
// skin names the joint, else the parent's bind pose times the joint's rest offset.
std::vector<Mat4> bind_poses(const Motion& motion, const GltfScene* scene) {
  const Skeleton& sk = motion.skeleton;
  const int joints = sk.joint_count();
  std::vector<Mat4> bind(static_cast<size_t>(joints), Mat4::Identity());
  std::vector<char> known(static_cast<size_t>(joints), 0);
  if (scene) {
    std::unordered_map<int, int> joint_of_node;
    for (int j = 0; j < joints; ++j) joint_of_node[scene->joint_nodes[static_cast<size_t>(j)]] = j;
    const double a = scene->ancestor_scale;
    for (const tinygltf::Skin& skin : scene->model.skins) {
      if (skin.inverseBindMatrices < 0) continue;
      int comps = 0;
      const std::vector<double> ibm = accessor_values(scene->model, skin.inverseBindMatrices, comps);
      for (size_t k = 0; k < skin.joints.size() && comps == 16 && (k + 1) * 16 <= ibm.size(); ++k) {
        const auto it = joint_of_node.find(skin.joints[k]);
        if (it == joint_of_node.end() || known[static_cast<size_t>(it->second)]) continue;
        Mat4 m;
        for (int i = 0; i < 16; ++i) m.data()[i] = ibm[k * 16 + static_cast<size_t>(i)];
        Mat4 unscale = Mat4::Identity();
        unscale.topLeftCorner<3, 3>() /= a;
        bind[static_cast<size_t>(it->second)] = m.inverse() * unscale;
        known[static_cast<size_t>(it->second)] = 1;
      }
    }
  }
  for (int j = 0; j < joints; ++j) {
    if (known[static_cast<size_t>(j)]) continue;
    const int p = sk.parents[static_cast<size_t>(j)];
    Mat4 local = Mat4::Identity();
    local.topRightCorner<3, 1>() = sk.offsets[static_cast<size_t>(j)];
    bind[static_cast<size_t>(j)] = p >= 0 ? Mat4(bind[static_cast<size_t>(p)] * local) : local;
  }
  return bind;
}


// ---------------------------------------------------------------- skeleton

// The models of the joints and end sites; returns the joints' model ids.
std::vector<std::int64_t> add_skeleton(const Motion& motion, const std::vector<Mat4>& bind, const FileFrame& ff,
                                       Builder& b) {
  const Skeleton& sk = motion.skeleton;
  const int joints = sk.joint_count();
  std::vector<std::int64_t> ids(static_cast<size_t>(joints));
  auto limb = [&](const std::string& name, const Vec3& t, const Vec3& r, std::int64_t parent) {
    const std::int64_t id = b.id(), attr = b.id();
    Record& model = b.object("Model", {id, ObjectName{"Model", name}, std::string("LimbNode")});
    model.add("Version", {std::int32_t{232}});
    Record& props = model.add("Properties70");
    props.children.push_back(p70("Lcl Translation", "Lcl Translation", "", "A", {t.x(), t.y(), t.z()}));
    props.children.push_back(p70("Lcl Rotation", "Lcl Rotation", "", "A", {r.x(), r.y(), r.z()}));
    props.children.push_back(p70("Lcl Scaling", "Lcl Scaling", "", "A", {1.0, 1.0, 1.0}));
    props.children.push_back(p70("DefaultAttributeIndex", "int", "Integer", "", {std::int32_t{0}}));
    model.add("Shading", {std::string("Y")});
    model.add("Culling", {std::string("CullingOff")});
    Record& na = b.object("NodeAttribute", {attr, ObjectName{"NodeAttribute", name}, std::string("LimbNode")});
    na.add("Properties70").children.push_back(p70("Size", "double", "Number", "", {1.0}));
    na.add("TypeFlags", {std::string("Skeleton")});
    b.connect(attr, id);
    b.connect(id, parent);
    return id;
  };
  for (int j = 0; j < joints; ++j) {
    const int p = sk.parents[static_cast<size_t>(j)];
    // Static values: the rest offset, and the bind pose's local rotation.
    const Mat4 local = p >= 0 ? Mat4(bind[static_cast<size_t>(p)].inverse() * bind[static_cast<size_t>(j)])
                              : bind[static_cast<size_t>(j)];
    Quat q = rotation_of(local.topLeftCorner<3, 3>());
    Vec3 t = ff.s * sk.offsets[static_cast<size_t>(j)];
    if (p < 0) {
      q = Quat(ff.c) * q;
      t = ff.point(sk.offsets[static_cast<size_t>(j)]);
    }
    ids[static_cast<size_t>(j)] =
        limb(sk.names[static_cast<size_t>(j)], t, euler_degrees(q, Vec3::Zero()), p >= 0 ? ids[static_cast<size_t>(p)] : 0);
  }
  for (int e = 0; e < sk.end_site_count(); ++e) {
    const EndSite& site = sk.end_sites[static_cast<size_t>(e)];
    limb(sk.point_name(joints + e), ff.s * site.offset, Vec3::Zero(), ids[static_cast<size_t>(site.parent)]);
  }
  return ids;
}

// ---------------------------------------------------------------- animation

// One curve node (T, R or S) on a model with its three curves.
void add_curve_node(Builder& b, std::int64_t model, std::int64_t layer, const char* short_name, const char* property,
                    const std::vector<std::int64_t>& times, const std::vector<Vec3>& values, bool step) {
  const std::int64_t node = b.id();
  Record& cn = b.object("AnimationCurveNode", {node, ObjectName{"AnimCurveNode", short_name}, std::string()});
  Record& props = cn.add("Properties70");
  const char* axes[3] = {"d|X", "d|Y", "d|Z"};
  for (int c = 0; c < 3; ++c) props.children.push_back(p70(axes[c], "Number", "", "A", {values.front()[c]}));
  b.connect(node, layer);
  b.connect(node, model, property);
  // Interpolation flags: constant (0x2) for held drawings, linear (0x4) otherwise.
  const std::int32_t flags = step ? 0x00000002 : 0x00000004;
  for (int c = 0; c < 3; ++c) {
    const std::int64_t curve = b.id();
    std::vector<float> keys(values.size());
    for (size_t k = 0; k < values.size(); ++k) keys[k] = static_cast<float>(values[k][c]);
    Record& ac = b.object("AnimationCurve", {curve, ObjectName{"AnimCurve", ""}, std::string()});
    ac.add("Default", {values.front()[c]});
    ac.add("KeyVer", {std::int32_t{4009}});
    ac.add("KeyTime", {times});
    ac.add("KeyValueFloat", {keys});
    ac.add("KeyAttrFlags", {std::vector<std::int32_t>{flags}});
    ac.add("KeyAttrDataFloat", {std::vector<float>{0, 0, 0, 0}});
    ac.add("KeyAttrRefCount", {std::vector<std::int32_t>{static_cast<std::int32_t>(values.size())}});
    b.connect(curve, node, axes[c]);
  }
}

// Frames that get a key (every frame), after checking step_keys as the glTF writer does.
void check_step_keys(const std::vector<int>& keys, int frames) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] < 0 || keys[i] >= frames)
      throw Error(ErrorCode::invalid_settings, "step_keys",
                  fmt::format("kept frame {} is outside the motion's frames 0..{}", keys[i], frames - 1));
    if (i > 0 && keys[i] <= keys[i - 1])
      throw Error(ErrorCode::invalid_settings, "step_keys",
                  fmt::format("kept frames must increase, but {} follows {}", keys[i], keys[i - 1]));
  }
}

// The take: an AnimationStack with one layer, keyed at every frame. Returns the stack's length in ticks.
std::int64_t add_take(const Motion& motion, const std::vector<std::int64_t>& ids, const std::string& name, bool step,
                      const FileFrame& ff, Builder& b) {
  const Skeleton& sk = motion.skeleton;
  const int joints = motion.joint_count(), frames = motion.frame_count;
  std::vector<std::int64_t> times(static_cast<size_t>(frames));
  for (int f = 0; f < frames; ++f)
    times[static_cast<size_t>(f)] = std::llround(static_cast<double>(f) * static_cast<double>(kTicksPerSecond) / motion.frame_rate);
  const std::int64_t stop = times.back();
  const std::int64_t stack = b.id(), layer = b.id();
  Record& st = b.object("AnimationStack", {stack, ObjectName{"AnimStack", name}, std::string()});
  Record& sp = st.add("Properties70");
  for (const char* p : {"LocalStart", "ReferenceStart"}) sp.children.push_back(p70(p, "KTime", "Time", "", {std::int64_t{0}}));
  for (const char* p : {"LocalStop", "ReferenceStop"}) sp.children.push_back(p70(p, "KTime", "Time", "", {stop}));
  // The layer is named after the take too: Blender then names the action "<armature>|<take>".
  b.object("AnimationLayer", {layer, ObjectName{"AnimLayer", name}, std::string()});
  b.connect(layer, stack);
  for (int j = 0; j < joints; ++j) {
    const bool root = sk.parents[static_cast<size_t>(j)] < 0;
    std::vector<Quat> qs(static_cast<size_t>(frames));
    for (int f = 0; f < frames; ++f) qs[static_cast<size_t>(f)] = (root ? Quat(ff.c) * motion.rotation(f, j) : motion.rotation(f, j)).normalized();
    std::vector<Vec3> r(static_cast<size_t>(frames));
    Vec3 near = Vec3::Zero();
    for (int f = 0; f < frames; ++f) near = r[static_cast<size_t>(f)] = euler_degrees(qs[static_cast<size_t>(f)], near);
    add_curve_node(b, ids[static_cast<size_t>(j)], layer, "R", "Lcl Rotation", times, r, step);
    bool moves = root || sk.has_position_channels(j);
    for (int f = 0; f < frames && !moves; ++f) moves = motion.translation(f, j) != sk.offsets[static_cast<size_t>(j)];
    if (moves) {
      std::vector<Vec3> t(static_cast<size_t>(frames));
      for (int f = 0; f < frames; ++f)
        t[static_cast<size_t>(f)] = root ? ff.point(motion.translation(f, j)) : Vec3(ff.s * motion.translation(f, j));
      add_curve_node(b, ids[static_cast<size_t>(j)], layer, "T", "Lcl Translation", times, t, step);
    }
    if (!motion.scales.empty()) {
      std::vector<Vec3> sc(static_cast<size_t>(frames));
      for (int f = 0; f < frames; ++f)
        sc[static_cast<size_t>(f)] = motion.scales[static_cast<size_t>(f) * static_cast<size_t>(joints) + static_cast<size_t>(j)];
      add_curve_node(b, ids[static_cast<size_t>(j)], layer, "S", "Lcl Scaling", times, sc, step);
    }
  }
  return stop;
}


// ---------------------------------------------------------------- the character

// What the meshes share: the document, which joint each node is, the bones' bind poses (file
// frame) and model ids, materials already written, and the bind pose's entries.
struct Character {
  const tinygltf::Model& model;
  std::unordered_map<int, int> joint_of_node;
  std::vector<Mat4> link;  // TransformLink_j: the bone's bind pose in the file's frame
  const std::vector<std::int64_t>& bones;
  const FileFrame& ff;
  std::map<int, std::int64_t> materials;  // glTF material -> FBX material
  std::vector<std::pair<std::int64_t, Mat4>> pose;
  std::set<std::string> names;            // model names in use (joints and meshes)
};

std::string unique_name(std::string name, std::set<std::string>& used) {
  const std::string base = name;
  for (int k = 2; used.count(name) > 0; ++k) name = fmt::format("{}.{:03d}", base, k);
  used.insert(name);
  return name;
}

// An embedded image of the document: its bytes and a file name with the right extension.
std::pair<std::string, std::string> image_of(const tinygltf::Model& model, int index) {
  const tinygltf::Image& image = model.images.at(static_cast<size_t>(index));
  std::string bytes;
  if (image.bufferView >= 0) {
    const tinygltf::BufferView& v = model.bufferViews.at(static_cast<size_t>(image.bufferView));
    const auto& data = model.buffers.at(static_cast<size_t>(v.buffer)).data;
    if (v.byteOffset + v.byteLength <= data.size())
      bytes.assign(reinterpret_cast<const char*>(data.data() + v.byteOffset), v.byteLength);
  } else if (image.as_is) {
    bytes.assign(image.image.begin(), image.image.end());
  }
  const bool png = bytes.size() >= 4 && bytes.compare(1, 3, "PNG") == 0;
  std::string name = image.name;
  if (name.empty() && !image.uri.empty() && image.uri.rfind("data:", 0) != 0)
    name = std::filesystem::path(image.uri).stem().string();
  if (name.empty()) name = fmt::format("texture_{}", index);
  return {bytes, name + (png ? ".png" : ".jpg")};
}

// The FBX material of a glTF material (base colour, opacity, base-colour texture embedded).
std::int64_t add_material(int index, Character& ch, Builder& b) {
  if (const auto it = ch.materials.find(index); it != ch.materials.end()) return it->second;
  const std::int64_t id = b.id();
  tinygltf::Material gm;
  if (index >= 0 && index < static_cast<int>(ch.model.materials.size())) gm = ch.model.materials[static_cast<size_t>(index)];
  std::vector<double> rgba = gm.pbrMetallicRoughness.baseColorFactor;
  if (rgba.size() != 4) rgba = {1, 1, 1, 1};
  const std::string name = gm.name.empty() ? fmt::format("material_{}", index < 0 ? 0 : index) : gm.name;
  Record& m = b.object("Material", {id, ObjectName{"Material", name}, std::string()});
  m.add("Version", {std::int32_t{102}});
  m.add("ShadingModel", {std::string("lambert")});
  m.add("MultiLayer", {std::int32_t{0}});
  Record& props = m.add("Properties70");
  props.children.push_back(p70("DiffuseColor", "Color", "", "A", {rgba[0], rgba[1], rgba[2]}));
  props.children.push_back(p70("DiffuseFactor", "Number", "", "A", {1.0}));
  props.children.push_back(p70("TransparentColor", "Color", "", "A", {1.0, 1.0, 1.0}));
  props.children.push_back(p70("TransparencyFactor", "Number", "", "A", {1.0 - rgba[3]}));
  props.children.push_back(p70("Opacity", "double", "Number", "", {rgba[3]}));
  const int texture = gm.pbrMetallicRoughness.baseColorTexture.index;
  if (texture >= 0 && texture < static_cast<int>(ch.model.textures.size())) {
    const int source = ch.model.textures[static_cast<size_t>(texture)].source;
    if (source >= 0 && source < static_cast<int>(ch.model.images.size())) {
      const auto [bytes, file] = image_of(ch.model, source);
      if (!bytes.empty()) {
        const std::int64_t tex = b.id(), video = b.id();
        const std::string stem = std::filesystem::path(file).stem().string();
        Record& v = b.object("Video", {video, ObjectName{"Video", stem}, std::string("Clip")});
        v.add("Type", {std::string("Clip")});
        v.add("Properties70").children.push_back(p70("Path", "KString", "XRefUrl", "", {file}));
        v.add("UseMipMap", {std::int32_t{0}});
        v.add("Filename", {file});
        v.add("RelativeFilename", {file});
        v.add("Content", {RawBytes{bytes}});
        Record& t = b.object("Texture", {tex, ObjectName{"Texture", stem}, std::string()});
        t.add("Type", {std::string("TextureVideoClip")});
        t.add("Version", {std::int32_t{202}});
        t.add("TextureName", {ObjectName{"Texture", stem}});
        t.add("Media", {ObjectName{"Video", stem}});
        t.add("FileName", {file});
        t.add("RelativeFilename", {file});
        t.add("ModelUVTranslation", {0.0, 0.0});
        t.add("ModelUVScaling", {1.0, 1.0});
        t.add("Texture_Alpha_Source", {std::string("None")});
        t.add("Cropping", {std::int32_t{0}, std::int32_t{0}, std::int32_t{0}, std::int32_t{0}});
        b.connect(video, tex);
        b.connect(tex, id, "DiffuseColor");
      }
    }
  }
  return ch.materials[index] = id;
}

// A primitive's vertex data in the file's frame, and its weights per joint.
struct Primitive {
  std::vector<double> vertices, normals, uvs;
  std::vector<std::int32_t> polygon_index, uv_index;
  std::map<int, std::pair<std::vector<std::int32_t>, std::vector<double>>> weights;  // joint -> (vertex, weight)
};

Primitive primitive_data(const tinygltf::Primitive& prim, const std::vector<int>& skin_joints, const Character& ch) {
  Primitive out;
  const auto attribute = [&](const char* name, int& comps) {
    const auto it = prim.attributes.find(name);
    return it == prim.attributes.end() ? std::vector<double>{} : accessor_values(ch.model, it->second, comps);
  };
  int pc = 0, nc = 0, tc = 0;
  const std::vector<double> pos = attribute("POSITION", pc);
  const std::vector<double> nor = attribute("NORMAL", nc);
  const std::vector<double> uv = attribute("TEXCOORD_0", tc);
  const size_t n = pc == 3 ? pos.size() / 3 : 0;
  for (size_t v = 0; v < n; ++v) {
    const Vec3 p = ch.ff.point(Vec3(pos[3 * v], pos[3 * v + 1], pos[3 * v + 2]));
    out.vertices.insert(out.vertices.end(), {p.x(), p.y(), p.z()});
  }
  std::vector<size_t> index;
  if (prim.indices >= 0) {
    int ic = 0;
    for (double i : accessor_values(ch.model, prim.indices, ic)) index.push_back(static_cast<size_t>(i));
  } else {
    for (size_t v = 0; v < n; ++v) index.push_back(v);
  }
  for (size_t k = 0; k + 2 < index.size(); k += 3) {
    if (index[k] >= n || index[k + 1] >= n || index[k + 2] >= n)
      throw Error(ErrorCode::bad_data, fmt::format("accessor {}", prim.indices), "a triangle index is past the vertices");
    for (size_t c = 0; c < 3; ++c) {
      const auto i = static_cast<std::int32_t>(index[k + c]);
      out.polygon_index.push_back(c == 2 ? ~i : i);  // the last corner of a polygon is stored as -(i + 1)
      if (nc == 3 && nor.size() >= 3 * n) {
        const Vec3 d = ch.ff.direction(Vec3(nor[3 * index[k + c]], nor[3 * index[k + c] + 1], nor[3 * index[k + c] + 2]));
        out.normals.insert(out.normals.end(), {d.x(), d.y(), d.z()});
      }
      if (tc == 2 && uv.size() >= 2 * n) out.uv_index.push_back(i);
    }
  }
  if (tc == 2 && uv.size() >= 2 * n)
    for (size_t v = 0; v < n; ++v) out.uvs.insert(out.uvs.end(), {uv[2 * v], 1.0 - uv[2 * v + 1]});  // glTF v runs down
  for (const char* set : {"0", "1"}) {
    int jc = 0, wc = 0;
    const std::vector<double> js = attribute((std::string("JOINTS_") + set).c_str(), jc);
    const std::vector<double> ws = attribute((std::string("WEIGHTS_") + set).c_str(), wc);
    if (jc != 4 || wc != 4 || js.size() < 4 * n || ws.size() < 4 * n) continue;
    for (size_t v = 0; v < n; ++v)
      for (size_t c = 0; c < 4; ++c) {
        const double w = ws[4 * v + c];
        const auto k = static_cast<size_t>(js[4 * v + c]);
        if (w <= 0 || k >= skin_joints.size()) continue;
        auto& [vs, wts] = out.weights[skin_joints[k]];
        vs.push_back(static_cast<std::int32_t>(v));
        wts.push_back(w);
      }
  }
  return out;
}

// The geometry of a primitive with its layers (normals, UVs, one material).
std::int64_t add_geometry(const std::string& name, const Primitive& p, Builder& b) {
  const std::int64_t id = b.id();
  Record& g = b.object("Geometry", {id, ObjectName{"Geometry", name}, std::string("Mesh")});
  g.add("GeometryVersion", {std::int32_t{124}});
  g.add("Vertices", {p.vertices});
  g.add("PolygonVertexIndex", {p.polygon_index});
  Record layer{"Layer", {std::int32_t{0}}, {}};
  layer.add("Version", {std::int32_t{100}});
  auto element = [&](const char* type, int version, const char* mapping, const char* reference) -> Record& {
    Record& e = g.add(type, {std::int32_t{0}});
    e.add("Version", {std::int32_t{version}});
    e.add("Name", {std::string(std::string(type) == "LayerElementUV" ? "UVMap" : "")});
    e.add("MappingInformationType", {std::string(mapping)});
    e.add("ReferenceInformationType", {std::string(reference)});
    Record& le = layer.add("LayerElement");
    le.add("Type", {std::string(type)});
    le.add("TypedIndex", {std::int32_t{0}});
    return e;
  };
  if (!p.normals.empty()) element("LayerElementNormal", 102, "ByPolygonVertex", "Direct").add("Normals", {p.normals});
  if (!p.uvs.empty()) {
    Record& uv = element("LayerElementUV", 101, "ByPolygonVertex", "IndexToDirect");
    uv.add("UV", {p.uvs});
    uv.add("UVIndex", {p.uv_index});
  }
  element("LayerElementMaterial", 101, "AllSame", "IndexToDirect").add("Materials", {std::vector<std::int32_t>{0}});
  g.children.push_back(std::move(layer));
  return id;
}

// One skinned primitive: a mesh model at the origin, its geometry, material, skin and clusters.
void add_primitive(const std::string& name, const tinygltf::Primitive& prim, const std::vector<int>& skin_joints,
                   Character& ch, Builder& b) {
  const Primitive data = primitive_data(prim, skin_joints, ch);
  if (data.polygon_index.empty()) return;
  const std::int64_t model = b.id();
  Record& m = b.object("Model", {model, ObjectName{"Model", name}, std::string("Mesh")});
  m.add("Version", {std::int32_t{232}});
  Record& props = m.add("Properties70");
  props.children.push_back(p70("DefaultAttributeIndex", "int", "Integer", "", {std::int32_t{0}}));
  m.add("Shading", {std::string("T")});
  m.add("Culling", {std::string("CullingOff")});
  b.connect(model, 0);
  const std::int64_t geometry = add_geometry(name, data, b);
  b.connect(geometry, model);
  b.connect(add_material(prim.material, ch, b), model);
  ch.pose.emplace_back(model, Mat4::Identity());
  if (data.weights.empty()) return;
  const std::int64_t skin = b.id();
  Record& sd = b.object("Deformer", {skin, ObjectName{"Deformer", name}, std::string("Skin")});
  sd.add("Version", {std::int32_t{101}});
  sd.add("Link_DeformAcuracy", {50.0});
  b.connect(skin, geometry);
  for (const auto& [joint, vw] : data.weights) {
    const std::int64_t cluster = b.id();
    const Mat4& link = ch.link[static_cast<size_t>(joint)];
    Record& c = b.object("Deformer", {cluster, ObjectName{"SubDeformer", ""}, std::string("Cluster")});
    c.add("Version", {std::int32_t{100}});
    c.add("UserData", {std::string(), std::string()});
    c.add("Indexes", {vw.first});
    c.add("Weights", {vw.second});
    c.add("Transform", {flat(link.inverse())});
    c.add("TransformLink", {flat(link)});
    b.connect(cluster, skin);
    b.connect(ch.bones[static_cast<size_t>(joint)], cluster);
  }
}


// Every skinned mesh of the character whose skin is the motion's skeleton, one model per primitive;
// then the bind pose (bones and meshes).
void add_character(const GltfScene& scene, const std::vector<Mat4>& bind, const std::vector<std::int64_t>& bones,
                   const Skeleton& sk, const FileFrame& ff, Builder& b) {
  Character ch{scene.model, {}, {}, bones, ff, {}, {}, {}};
  for (int j = 0; j < sk.joint_count(); ++j) {
    ch.joint_of_node[scene.joint_nodes[static_cast<size_t>(j)]] = j;
    ch.link.push_back(ff.transform(bind[static_cast<size_t>(j)]));
    ch.names.insert(sk.names[static_cast<size_t>(j)]);
  }
  for (int e = 0; e < sk.end_site_count(); ++e) ch.names.insert(sk.point_name(sk.joint_count() + e));
  for (const tinygltf::Node& node : scene.model.nodes) {
    if (node.mesh < 0 || node.skin < 0 || node.mesh >= static_cast<int>(scene.model.meshes.size()) ||
        node.skin >= static_cast<int>(scene.model.skins.size()))
      continue;
    std::vector<int> skin_joints;
    for (int n : scene.model.skins[static_cast<size_t>(node.skin)].joints) {
      const auto it = ch.joint_of_node.find(n);
      skin_joints.push_back(it == ch.joint_of_node.end() ? -1 : it->second);
    }
    if (std::count(skin_joints.begin(), skin_joints.end(), -1) > 0) continue;  // another skeleton's mesh
    const tinygltf::Mesh& mesh = scene.model.meshes[static_cast<size_t>(node.mesh)];
    const std::string base = !mesh.name.empty() ? mesh.name : !node.name.empty() ? node.name : "mesh";
    for (size_t p = 0; p < mesh.primitives.size(); ++p) {
      const tinygltf::Primitive& prim = mesh.primitives[p];
      if (prim.mode != -1 && prim.mode != TINYGLTF_MODE_TRIANGLES) continue;
      const std::string name = unique_name(mesh.primitives.size() > 1 ? fmt::format("{}_{}", base, p) : base, ch.names);
      add_primitive(name, prim, skin_joints, ch, b);
    }
  }
  if (ch.pose.empty()) return;
  for (int j = 0; j < sk.joint_count(); ++j) ch.pose.emplace_back(bones[static_cast<size_t>(j)], ch.link[static_cast<size_t>(j)]);
  const std::int64_t id = b.id();
  Record& pose = b.object("Pose", {id, ObjectName{"Pose", "BIND_POSES"}, std::string("BindPose")});
  pose.add("Type", {std::string("BindPose")});
  pose.add("Version", {std::int32_t{100}});
  pose.add("NbPoseNodes", {static_cast<std::int32_t>(ch.pose.size())});
  for (const auto& [node, matrix] : ch.pose) {
    Record& pn = pose.add("PoseNode");
    pn.add("Node", {node});
    pn.add("Matrix", {flat(matrix)});
  }
}

// ---------------------------------------------------------------- the document

// FBX TimeMode of a frame rate (14 = custom: CustomFrameRate holds the rate).
std::int32_t time_mode(double rate) {
  static const std::pair<double, std::int32_t> kModes[] = {{120, 1}, {100, 2}, {60, 3},  {50, 4}, {48, 5},
                                                           {30, 6},  {25, 10}, {24, 11}, {1000, 12}, {96, 15}, {72, 16}};
  for (const auto& [r, mode] : kModes)
    if (std::abs(rate - r) < 1e-9 * r) return mode;
  return 14;
}

Record global_settings(const FbxWriteOptions& o, double rate, std::int64_t stop) {
  const bool z = o.up == FbxUpAxis::z;
  const double cm_per_unit = 100.0 * metres_per_unit(o.unit);
  Record g{"GlobalSettings", {}, {}};
  g.add("Version", {std::int32_t{1000}});
  Record& p = g.add("Properties70");
  const auto integer = [&](const char* name, int v) { p.children.push_back(p70(name, "int", "Integer", "", {std::int32_t{v}})); };
  integer("UpAxis", z ? 2 : 1);
  integer("UpAxisSign", 1);
  integer("FrontAxis", z ? 1 : 2);
  integer("FrontAxisSign", z ? -1 : 1);
  integer("CoordAxis", 0);
  integer("CoordAxisSign", 1);
  integer("OriginalUpAxis", z ? 2 : 1);
  integer("OriginalUpAxisSign", 1);
  p.children.push_back(p70("UnitScaleFactor", "double", "Number", "", {cm_per_unit}));
  p.children.push_back(p70("OriginalUnitScaleFactor", "double", "Number", "", {cm_per_unit}));
  p.children.push_back(p70("AmbientColor", "ColorRGB", "Color", "", {0.0, 0.0, 0.0}));
  p.children.push_back(p70("DefaultCamera", "KString", "", "", {std::string("Producer Perspective")}));
  p.children.push_back(p70("TimeMode", "enum", "", "", {time_mode(rate)}));
  p.children.push_back(p70("TimeProtocol", "enum", "", "", {std::int32_t{2}}));
  p.children.push_back(p70("SnapOnFrameMode", "enum", "", "", {std::int32_t{0}}));
  p.children.push_back(p70("TimeSpanStart", "KTime", "Time", "", {std::int64_t{0}}));
  p.children.push_back(p70("TimeSpanStop", "KTime", "Time", "", {stop}));
  p.children.push_back(p70("CustomFrameRate", "double", "Number", "", {rate}));
  p.children.push_back(p70("CurrentTimeMarker", "KTime", "Time", "", {std::int64_t{-1}}));
  return g;
}

Record header_extension() {
  Record h{"FBXHeaderExtension", {}, {}};
  h.add("FBXHeaderVersion", {std::int32_t{1003}});
  h.add("FBXVersion", {std::int32_t{7400}});
  h.add("EncryptionType", {std::int32_t{0}});
  Record& t = h.add("CreationTimeStamp");
  for (const auto& [field, value] : std::vector<std::pair<const char*, int>>{
           {"Version", 1000}, {"Year", 1970}, {"Month", 1}, {"Day", 1}, {"Hour", 10}, {"Minute", 0}, {"Second", 0}, {"Millisecond", 0}})
    t.add(field, {std::int32_t{value}});
  h.add("Creator", {std::string("koma")});
  return h;
}

void check_scene(const GltfScene& scene, const Skeleton& sk, const std::string& where) {
  if (scene.joint_names.size() != static_cast<size_t>(sk.joint_count()))
    throw Error(ErrorCode::mismatch, where,
                fmt::format("the character has {} joints, the motion {}", scene.joint_names.size(), sk.joint_count()));
  for (int j = 0; j < sk.joint_count(); ++j)
    if (scene.joint_names[static_cast<size_t>(j)] != sk.names[static_cast<size_t>(j)])
      throw Error(ErrorCode::mismatch, fmt::format("joint {}", j),
                  fmt::format("the character's joint is '{}', the motion's '{}'", scene.joint_names[static_cast<size_t>(j)],
                              sk.names[static_cast<size_t>(j)]));
}

std::vector<Record> document(const Motion& motion, const FbxWriteOptions& o, const std::string& take, const std::string& where) {
  if (motion.joint_count() == 0)
    throw Error(ErrorCode::bad_data, where, "the motion has no skeleton; an FBX output needs joints to animate");
  motion.validate();
  check_step_keys(o.step_keys, motion.frame_count);
  const GltfScene* scene = o.scene.get();
  if (scene) check_scene(*scene, motion.skeleton, where);
  const FileFrame ff = file_frame(o);
  const std::vector<Mat4> bind = bind_poses(motion, scene);
  Builder b;
  const std::vector<std::int64_t> bones = add_skeleton(motion, bind, ff, b);
  if (scene) add_character(*scene, bind, bones, motion.skeleton, ff, b);
  const std::int64_t stop = add_take(motion, bones, take, !o.step_keys.empty(), ff, b);

  std::vector<Record> top;
  top.push_back(header_extension());
  top.push_back(global_settings(o, motion.frame_rate, stop));
  Record docs{"Documents", {}, {}};
  docs.add("Count", {std::int32_t{1}});
  Record& doc = docs.add("Document", {b.id(), std::string(""), std::string("Scene")});
  Record& dp = doc.add("Properties70");
  dp.children.push_back(p70("SourceObject", "object", "", "", {}));
  dp.children.push_back(p70("ActiveAnimStackName", "KString", "", "", {take}));
  doc.add("RootNode", {std::int64_t{0}});
  top.push_back(std::move(docs));
  top.push_back(Record{"References", {}, {}});
  Record defs{"Definitions", {}, {}};
  defs.add("Version", {std::int32_t{100}});
  int total = 1;
  for (const auto& [type, count] : b.counts) total += count;
  defs.add("Count", {std::int32_t{total}});
  defs.add("ObjectType", {std::string("GlobalSettings")}).add("Count", {std::int32_t{1}});
  for (const auto& [type, count] : b.counts) defs.add("ObjectType", {type}).add("Count", {std::int32_t{count}});
  top.push_back(std::move(defs));
  top.push_back(std::move(b.objects));
  top.push_back(std::move(b.connections));
  Record takes{"Takes", {}, {}};
  takes.add("Current", {take});
  Record& t = takes.add("Take", {take});
  t.add("FileName", {take + ".tak"});
  t.add("LocalTime", {std::int64_t{0}, stop});
  t.add("ReferenceTime", {std::int64_t{0}, stop});
  top.push_back(std::move(takes));
  return top;
}

std::string take_name(const Motion& motion, const FbxWriteOptions& o, const std::filesystem::path& path) {
  if (!o.animation_name.empty()) return o.animation_name;
  if (!motion.name.empty()) return motion.name;
  return clip_name_from_path(path);
}

}  // namespace

std::string fbx_bytes(const Motion& motion, const FbxWriteOptions& options, const std::string& name) {
  const std::vector<Record> top = document(motion, options, take_name(motion, options, name + ".fbx"), name);
  return options.ascii ? fbx_detail::encode_ascii(top) : fbx_detail::encode_binary(top);
}

void write_fbx(const std::filesystem::path& path, const Motion& motion, const FbxWriteOptions& options) {
  const std::vector<Record> top = document(motion, options, take_name(motion, options, path), path.string());
  write_file_atomic(path, options.ascii ? fbx_detail::encode_ascii(top) : fbx_detail::encode_binary(top));
}

}  // namespace koma::io
