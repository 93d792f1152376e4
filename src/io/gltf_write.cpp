// glTF 2.0 writer: Motion -> nodes + skin + one animation (see koma/io/gltf.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gltf_scene.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/quat_sign.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/io/gltf.hpp"

namespace koma::io {

namespace gltf_detail {

int add_view(tinygltf::Model& model, std::vector<unsigned char>& bin, const void* data, size_t size, int target) {
  while (bin.size() % 4 != 0) bin.push_back(0);
  tinygltf::BufferView view;
  view.buffer = 0;
  view.byteOffset = bin.size();
  view.byteLength = size;
  view.target = target;
  const auto* p = static_cast<const unsigned char*>(data);
  bin.insert(bin.end(), p, p + size);
  model.bufferViews.push_back(view);
  return static_cast<int>(model.bufferViews.size()) - 1;
}

namespace {

template <typename T>
int typed_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<T>& values,
                   int component_type, int type, int components, bool with_bounds, int target) {
  tinygltf::Accessor a;
  a.bufferView = add_view(model, bin, values.data(), values.size() * sizeof(T), target);
  a.byteOffset = 0;
  a.componentType = component_type;
  a.type = type;
  a.count = values.size() / static_cast<size_t>(components);
  if (with_bounds) {
    a.minValues.assign(static_cast<size_t>(components), std::numeric_limits<double>::infinity());
    a.maxValues.assign(static_cast<size_t>(components), -std::numeric_limits<double>::infinity());
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t c = i % static_cast<size_t>(components);
      a.minValues[c] = std::min(a.minValues[c], static_cast<double>(values[i]));
      a.maxValues[c] = std::max(a.maxValues[c], static_cast<double>(values[i]));
    }
  }
  model.accessors.push_back(a);
  return static_cast<int>(model.accessors.size()) - 1;
}

}  // namespace

int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<float>& values, int type,
                 int components, bool with_bounds, int target) {
  return typed_accessor(model, bin, values, TINYGLTF_COMPONENT_TYPE_FLOAT, type, components, with_bounds, target);
}

int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<std::uint16_t>& values,
                 int type, int components, int target) {
  return typed_accessor(model, bin, values, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT, type, components, false, target);
}

int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<std::uint32_t>& values,
                 int type, int components, int target) {
  return typed_accessor(model, bin, values, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT, type, components, false, target);
}

int add_skin(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<Eigen::Matrix4d>& inverse_bind) {
  std::vector<float> ibm;
  ibm.reserve(inverse_bind.size() * 16);
  for (const Eigen::Matrix4d& m : inverse_bind) {
    const Eigen::Matrix4f f = m.cast<float>();
    ibm.insert(ibm.end(), f.data(), f.data() + 16);  // Eigen is column-major, as glTF
  }
  tinygltf::Skin skin;
  skin.name = "koma";
  skin.skeleton = 0;
  for (size_t j = 0; j < inverse_bind.size(); ++j) skin.joints.push_back(static_cast<int>(j));
  skin.inverseBindMatrices = add_accessor(model, bin, ibm, TINYGLTF_TYPE_MAT4, 16, false);
  model.skins.push_back(std::move(skin));
  return static_cast<int>(model.skins.size()) - 1;
}

void add_skeleton_nodes(const Skeleton& sk, tinygltf::Model& model) {
  const int joints = sk.joint_count();
  const int first = static_cast<int>(model.nodes.size());
  for (int j = 0; j < joints; ++j) {
    tinygltf::Node node;
    node.name = sk.names[static_cast<size_t>(j)];
    const Vec3& o = sk.offsets[static_cast<size_t>(j)];
    node.translation = {o.x(), o.y(), o.z()};
    model.nodes.push_back(node);
    const int p = sk.parents[static_cast<size_t>(j)];
    if (p >= 0) model.nodes[static_cast<size_t>(first + p)].children.push_back(first + j);
  }
  for (int e = 0; e < sk.end_site_count(); ++e) {
    const EndSite& site = sk.end_sites[static_cast<size_t>(e)];
    tinygltf::Node node;
    node.name = sk.point_name(joints + e);
    node.translation = {site.offset.x(), site.offset.y(), site.offset.z()};
    model.nodes.push_back(node);
    model.nodes[static_cast<size_t>(first + site.parent)].children.push_back(static_cast<int>(model.nodes.size()) - 1);
  }
}

}  // namespace gltf_detail

namespace {

using gltf_detail::add_accessor;
using gltf_detail::add_skeleton_nodes;
using gltf_detail::add_view;

std::string lower_ext(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// Sets extras[key] = value, keeping the other extras of an object.
void set_extra(tinygltf::Value& extras, const std::string& key, tinygltf::Value value) {
  tinygltf::Value::Object object;
  if (extras.IsObject()) object = extras.Get<tinygltf::Value::Object>();
  object[key] = std::move(value);
  extras = tinygltf::Value(std::move(object));
}

void write_bytes(const AtomicFile& file, const void* data, size_t size) {
  std::ofstream out(file.temp_path(), std::ios::binary);
  if (!out) throw Error(ErrorCode::io, file.destination().string(), "cannot open for writing");
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.flush();
  if (!out) throw Error(ErrorCode::io, file.destination().string(), "write failed (disk full?)");
}

std::string image_mime(const std::vector<unsigned char>& bytes) {
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8) return "image/jpeg";
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P' && bytes[2] == 'N' &&
      bytes[3] == 'G')
    return "image/png";
  return "application/octet-stream";
}

// The source document without its animations, its kept data gathered into one buffer `bin`.
// Accessors used by meshes and skins stay (re-indexed); images become bufferView images so the
// output needs no side files.
tinygltf::Model strip_animations(const tinygltf::Model& source, std::vector<unsigned char>& bin) {
  tinygltf::Model out = source;
  out.animations.clear();
  out.buffers.clear();
  out.bufferViews.clear();
  out.accessors.clear();

  // Accessors to keep, in their old order.
  std::set<int> keep_acc;
  for (const auto& mesh : source.meshes)
    for (const auto& prim : mesh.primitives) {
      for (const auto& [name, a] : prim.attributes) keep_acc.insert(a);
      if (prim.indices >= 0) keep_acc.insert(prim.indices);
      for (const auto& target : prim.targets)
        for (const auto& [name, a] : target) keep_acc.insert(a);
    }
  for (const auto& skin : source.skins)
    if (skin.inverseBindMatrices >= 0) keep_acc.insert(skin.inverseBindMatrices);
  std::vector<int> acc_map(source.accessors.size(), -1);
  std::vector<int> view_map(source.bufferViews.size(), -1);
  auto copy_view = [&](int v) {
    if (v < 0 || v >= static_cast<int>(source.bufferViews.size())) return -1;
    if (view_map[static_cast<size_t>(v)] >= 0) return view_map[static_cast<size_t>(v)];
    tinygltf::BufferView view = source.bufferViews[static_cast<size_t>(v)];
    const auto& data = source.buffers.at(static_cast<size_t>(view.buffer)).data;
    while (bin.size() % 8 != 0) bin.push_back(0);
    const size_t offset = bin.size();
    bin.insert(bin.end(), data.begin() + static_cast<std::ptrdiff_t>(view.byteOffset),
               data.begin() + static_cast<std::ptrdiff_t>(view.byteOffset + view.byteLength));
    view.buffer = 0;
    view.byteOffset = offset;
    out.bufferViews.push_back(view);
    return view_map[static_cast<size_t>(v)] = static_cast<int>(out.bufferViews.size()) - 1;
  };
  for (int a : keep_acc) {
    if (a < 0 || a >= static_cast<int>(source.accessors.size())) continue;
    tinygltf::Accessor acc = source.accessors[static_cast<size_t>(a)];
    acc.bufferView = copy_view(acc.bufferView);
    if (acc.sparse.isSparse) {
      acc.sparse.indices.bufferView = copy_view(acc.sparse.indices.bufferView);
      acc.sparse.values.bufferView = copy_view(acc.sparse.values.bufferView);
    }
    out.accessors.push_back(acc);
    acc_map[static_cast<size_t>(a)] = static_cast<int>(out.accessors.size()) - 1;
  }
  auto remap = [&](int a) {
    return a >= 0 && a < static_cast<int>(acc_map.size()) ? acc_map[static_cast<size_t>(a)] : -1;
  };
  for (auto& mesh : out.meshes)
    for (auto& prim : mesh.primitives) {
      for (auto& [name, a] : prim.attributes) a = remap(a);
      if (prim.indices >= 0) prim.indices = remap(prim.indices);
      for (auto& target : prim.targets)
        for (auto& [name, a] : target) a = remap(a);
    }
  for (auto& skin : out.skins)
    if (skin.inverseBindMatrices >= 0) skin.inverseBindMatrices = remap(skin.inverseBindMatrices);
  for (size_t i = 0; i < out.images.size(); ++i) {
    auto& image = out.images[i];
    const auto& src = source.images[i];
    if (src.bufferView >= 0) {
      image.bufferView = copy_view(src.bufferView);
      image.uri.clear();
    } else if (!src.image.empty() && src.as_is) {
      image.bufferView = add_view(out, bin, src.image.data(), src.image.size());
      image.mimeType = src.mimeType.empty() ? image_mime(src.image) : src.mimeType;
      image.uri.clear();
    }
    image.image.clear();
    image.as_is = false;
  }
  return out;
}

}  // namespace

std::string gltf_detail::scene_glb(const tinygltf::Model& model) {
  std::vector<unsigned char> bin;
  tinygltf::Model out = strip_animations(model, bin);
  while (bin.size() % 4 != 0) bin.push_back(0);
  out.buffers.clear();  // a GLB may not hold an empty BIN chunk: no data, no buffer
  if (!bin.empty()) {
    tinygltf::Buffer buffer;
    buffer.data = std::move(bin);
    out.buffers.push_back(std::move(buffer));
  }
  tinygltf::TinyGLTF writer;
  std::ostringstream stream;
  if (!writer.WriteGltfSceneToStream(&out, stream, false, true))
    throw Error(ErrorCode::io, "", "tinygltf could not serialise the character");
  return stream.str();
}

namespace {

// The steps of write_gltf(), in order: the frames that get a key, the document (the read
// character's, or a skeleton of nodes and a skin), the channel layout in extras, the animation,
// then the files.

// Frames that get a key: options.step_keys (checked: in range, increasing), else every frame.
std::vector<int> key_frames(const std::vector<int>& step_keys, int frames) {
  std::vector<int> keys = step_keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] < 0 || keys[i] >= frames)
      throw Error(
          ErrorCode::invalid_settings, "step_keys",
          fmt::format("kept frame {} is outside the motion's frames 0..{}", keys[i], frames - 1));
    if (i > 0 && keys[i] <= keys[i - 1])
      throw Error(
          ErrorCode::invalid_settings, "step_keys",
          fmt::format("kept frames must increase, but {} follows {}", keys[i], keys[i - 1]));
  }
  if (keys.empty()) {
    keys.resize(static_cast<size_t>(frames));
    for (int f = 0; f < frames; ++f) keys[static_cast<size_t>(f)] = f;
  }
  return keys;
}

// The read character must be the motion's: same joints, same names, same order.
void check_scene_matches(const GltfScene& scene, const Skeleton& sk, const std::filesystem::path& path) {
  const int joints = sk.joint_count();
  if (static_cast<int>(scene.joint_names.size()) != joints)
    throw Error(ErrorCode::mismatch, path.string(),
                fmt::format("the glTF character has {} joints, the motion {}",
                            scene.joint_names.size(), joints));
  for (int j = 0; j < joints; ++j)
    if (scene.joint_names[static_cast<size_t>(j)] != sk.names[static_cast<size_t>(j)])
      throw Error(ErrorCode::mismatch, fmt::format("joint {}", j),
                  fmt::format("the glTF character's joint is '{}', the motion's '{}'",
                              scene.joint_names[static_cast<size_t>(j)],
                              sk.names[static_cast<size_t>(j)]));
}

// The document the animation goes into, the node of each joint and the transform above the
// skeleton (identity for a new document).
struct Document {
  tinygltf::Model model;
  std::vector<int> joint_nodes;
  Quat ar = Quat::Identity();
  Vec3 at = Vec3::Zero();
  double as = 1.0;
};

// The read character without its animations. Animated nodes must not carry a matrix (glTF 2.0
// 5.25): any joint matrix becomes TRS.
Document scene_document(const GltfScene& scene, std::vector<unsigned char>& bin) {
  Document doc;
  doc.model = strip_animations(scene.model, bin);
  doc.joint_nodes = scene.joint_nodes;
  for (int n : doc.joint_nodes) {
    tinygltf::Node& node = doc.model.nodes[static_cast<size_t>(n)];
    if (node.matrix.size() != 16) continue;
    const gltf_detail::Trs trs = gltf_detail::node_trs(node);
    node.matrix.clear();
    node.translation = {trs.translation.x(), trs.translation.y(), trs.translation.z()};
    node.rotation = {trs.rotation.x(), trs.rotation.y(), trs.rotation.z(), trs.rotation.w()};
    node.scale = {trs.scale.x(), trs.scale.y(), trs.scale.z()};
  }
  doc.ar = scene.ancestor_rotation;
  doc.at = scene.ancestor_translation;
  doc.as = scene.ancestor_scale;
  return doc;
}

// The skeleton as nodes in its rest pose (identity rotations, rest offsets) with a skin whose
// inverse bind matrices match that pose; end sites as leaf nodes.
Document skeleton_document(const Skeleton& sk, std::vector<unsigned char>& bin) {
  const int joints = sk.joint_count();
  Document doc;
  tinygltf::Model& model = doc.model;
  doc.joint_nodes.resize(static_cast<size_t>(joints));
  model.asset.version = "2.0";
  add_skeleton_nodes(sk, model);
  for (int j = 0; j < joints; ++j) doc.joint_nodes[static_cast<size_t>(j)] = j;
  std::vector<Vec3> world(static_cast<size_t>(joints));
  std::vector<Eigen::Matrix4d> inverse_bind(static_cast<size_t>(joints), Eigen::Matrix4d::Identity());
  for (int j = 0; j < joints; ++j) {
    const int p = sk.parents[static_cast<size_t>(j)];
    world[static_cast<size_t>(j)] = (p >= 0 ? world[static_cast<size_t>(p)] : Vec3::Zero()) +
                                    sk.offsets[static_cast<size_t>(j)];
    inverse_bind[static_cast<size_t>(j)].topRightCorner<3, 1>() = -world[static_cast<size_t>(j)];
  }
  gltf_detail::add_skin(model, bin, inverse_bind);
  tinygltf::Scene s;
  s.nodes = {0};
  model.scenes.push_back(s);
  model.defaultScene = 0;
  return doc;
}

// Channel layout in extras, so glTF -> BVH restores it.
void write_channel_layout(const Skeleton& sk, Document& doc) {
  for (int j = 0; j < sk.joint_count(); ++j) {
    std::string text;
    for (Channel c : sk.channels[static_cast<size_t>(j)]) {
      if (!text.empty()) text += ' ';
      text += to_string(c);
    }
    set_extra(doc.model.nodes[static_cast<size_t>(doc.joint_nodes[static_cast<size_t>(j)])].extras,
              gltf_detail::kChannelsExtra, tinygltf::Value(text));
  }
}

// Animation: one shared time accessor, one sampler per joint and path (rotation always;
// translation when the joint moves; scale when the motion has scales), STEP for kept frames.
tinygltf::Animation make_animation(const Motion& motion, const std::vector<int>& keys, bool step,
                                   const std::string& name, Document& doc,
                                   std::vector<unsigned char>& bin) {
  const Skeleton& sk = motion.skeleton;
  const int joints = motion.joint_count();
  const int frames = motion.frame_count;
  tinygltf::Model& model = doc.model;
  tinygltf::Animation anim;
  anim.name = name.empty() ? "koma" : name;
  set_extra(anim.extras, gltf_detail::kFrameRateExtra, tinygltf::Value(motion.frame_rate));
  set_extra(anim.extras, gltf_detail::kFrameCountExtra, tinygltf::Value(frames));
  set_extra(anim.extras, gltf_detail::kSourceUnitExtra,
            tinygltf::Value(std::string(to_string(motion.source_unit))));
  std::vector<float> times;
  for (int f : keys) times.push_back(static_cast<float>(f / motion.frame_rate));
  const int time_accessor = add_accessor(model, bin, times, TINYGLTF_TYPE_SCALAR, 1, true);
  const Quat ar_inv = doc.ar.conjugate();
  auto add_channel = [&](int node, const char* target, const std::vector<float>& values, int type,
                         int components) {
    tinygltf::AnimationSampler sampler;
    sampler.input = time_accessor;
    sampler.output = add_accessor(model, bin, values, type, components, false);
    sampler.interpolation = step ? "STEP" : "LINEAR";
    anim.samplers.push_back(sampler);
    tinygltf::AnimationChannel channel;
    channel.sampler = static_cast<int>(anim.samplers.size()) - 1;
    channel.target_node = node;
    channel.target_path = target;
    anim.channels.push_back(channel);
  };
  for (int j = 0; j < joints; ++j) {
    const int node = doc.joint_nodes[static_cast<size_t>(j)];
    // Rotation, sign-continuous so per-component interpolation (Blender) does not flip.
    std::vector<Quat> qs;
    for (int f : keys) {
      Quat q = motion.rotation(f, j);
      if (j == 0) q = ar_inv * q;
      q.normalize();
      qs.push_back(q);
    }
    make_sign_continuous(qs);
    std::vector<float> rot;
    for (const Quat& q : qs)
      rot.insert(rot.end(), {static_cast<float>(q.x()), static_cast<float>(q.y()),
                             static_cast<float>(q.z()), static_cast<float>(q.w())});
    add_channel(node, "rotation", rot, TINYGLTF_TYPE_VEC4, 4);
    bool moves = j == 0 || sk.has_position_channels(j);
    for (int f = 0; f < frames && !moves; ++f)
      moves = motion.translation(f, j) != sk.offsets[static_cast<size_t>(j)];
    if (moves) {
      std::vector<float> pos;
      for (int f : keys) {
        Vec3 t = motion.translation(f, j);
        t = j == 0 ? Vec3(ar_inv * (t - doc.at) / doc.as) : Vec3(t / doc.as);
        pos.insert(pos.end(), {static_cast<float>(t.x()), static_cast<float>(t.y()),
                               static_cast<float>(t.z())});
      }
      add_channel(node, "translation", pos, TINYGLTF_TYPE_VEC3, 3);
    }
    if (!motion.scales.empty()) {
      std::vector<float> scl;
      for (int f : keys) {
        const Vec3& s = motion.scales[static_cast<size_t>(f) * static_cast<size_t>(joints) +
                                      static_cast<size_t>(j)];
        scl.insert(scl.end(), {static_cast<float>(s.x()), static_cast<float>(s.y()),
                               static_cast<float>(s.z())});
      }
      add_channel(node, "scale", scl, TINYGLTF_TYPE_VEC3, 3);
    }
  }
  return anim;
}

// The files: a .glb as one file; a .gltf as JSON plus "<stem>.bin" beside it, both written to
// temporaries and renamed only when both are complete.
void write_document(const std::filesystem::path& path, tinygltf::Model& model) {
  const bool binary = lower_ext(path) == ".glb";
  tinygltf::TinyGLTF writer;
  std::ostringstream stream;
  if (!writer.WriteGltfSceneToStream(&model, stream, !binary, binary))
    throw Error(ErrorCode::io, path.string(), "tinygltf could not serialise the document");
  if (binary) {
    write_file_atomic(path, stream.str());
    return;
  }
  // .gltf: tinygltf embeds the buffer as a data: URI; move it to "<stem>.bin" beside the file.
  nlohmann::json doc = nlohmann::json::parse(stream.str());
  const std::string bin_name = path.stem().string() + ".bin";
  doc["buffers"][0]["uri"] = bin_name;
  const auto& data = model.buffers[0].data;
  AtomicFile bin_file(path.parent_path().empty() ? std::filesystem::path(bin_name)
                                                 : path.parent_path() / bin_name);
  AtomicFile json_file(path);
  write_bytes(bin_file, data.data(), data.size());
  const std::string text = doc.dump(2) + "\n";
  write_bytes(json_file, text.data(), text.size());
  bin_file.commit();
  json_file.commit();
}

}  // namespace

namespace {

// The whole document of write_gltf / gltf_glb_bytes: the character (or a bare skeleton) plus one
// animation, in one buffer. `where` names the output in messages.
tinygltf::Model build_model(const Motion& motion, const GltfWriteOptions& options, const std::filesystem::path& where) {
  motion.validate();
  const Skeleton& sk = motion.skeleton;
  const std::vector<int> keys = key_frames(options.step_keys, motion.frame_count);
  const bool step = !options.step_keys.empty();
  const GltfScene* scene = options.scene.get();
  if (scene) check_scene_matches(*scene, sk, where);

  std::vector<unsigned char> bin;
  Document doc = scene ? scene_document(*scene, bin) : skeleton_document(sk, bin);
  doc.model.asset.generator = "koma";
  write_channel_layout(sk, doc);
  // Named after the clip: the name asked for, else the motion's (its source animation), else the
  // output's stem, so Blender lists "Walk", not "koma" or a temporary file's name.
  const std::string name = !options.animation_name.empty() ? options.animation_name
                           : !motion.name.empty()          ? motion.name
                                                           : clip_name_from_path(where);
  doc.model.animations.push_back(make_animation(motion, keys, step, name, doc, bin));

  // The one buffer.
  while (bin.size() % 4 != 0) bin.push_back(0);
  doc.model.buffers.clear();
  tinygltf::Buffer buffer;
  buffer.data = std::move(bin);
  doc.model.buffers.push_back(std::move(buffer));
  return std::move(doc.model);
}

}  // namespace

void write_gltf(const std::filesystem::path& path, const Motion& motion,
                const GltfWriteOptions& options) {
  tinygltf::Model model = build_model(motion, options, path);
  write_document(path, model);
}

std::string gltf_glb_bytes(const Motion& motion, const GltfWriteOptions& options, std::string_view name) {
  tinygltf::Model model = build_model(motion, options, std::filesystem::path(std::string(name)));
  tinygltf::TinyGLTF writer;
  std::ostringstream stream;
  if (!writer.WriteGltfSceneToStream(&model, stream, false, true))
    throw Error(ErrorCode::io, std::string(name), "tinygltf could not serialise the document");
  return stream.str();
}

}  // namespace koma::io
