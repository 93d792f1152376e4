// Private to src/io: the tinygltf document behind io::GltfScene and helpers shared by the glTF
// reader and writer. tinygltf stays out of every public header.
#pragma once

#include <tiny_gltf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "koma/core/rotation.hpp"
#include "koma/io/bvh.hpp"

namespace koma::io {

/// A read glTF document and how its nodes map onto the Motion read from it.
///
/// The Motion's root joint holds the static transform of the nodes above it baked in:
///   world(x) = ancestor_translation + ancestor_scale * ancestor_rotation * x,
/// and every other length of the Motion is ancestor_scale times the file's.
struct GltfScene {
  tinygltf::Model model;                 ///< The whole document as read (animations included).
  std::vector<int> joint_nodes;          ///< Node index of each Motion joint.
  std::vector<std::string> joint_names;  ///< Motion joint names (to check a motion matches).
  Quat ancestor_rotation = Quat::Identity();
  Vec3 ancestor_translation = Vec3::Zero();
  double ancestor_scale = 1.0;
};

namespace gltf_detail {

/// Local transform of a node (its TRS, or its matrix decomposed; a matrix with shear keeps the
/// closest rotation).
struct Trs {
  Vec3 translation = Vec3::Zero();
  Quat rotation = Quat::Identity();
  Vec3 scale = Vec3::Ones();
};
Trs node_trs(const tinygltf::Node& node);

/// Accessor `index` of `model` read as doubles (count x components, row-major), with every range
/// checked as the reader checks animation data (normalised integers scaled to 0..1 or -1..1).
/// `types` are the accepted TINYGLTF_TYPE_*; `role` and `file` name it in errors. Throws
/// Error(bad_file) for a missing, mistyped, out-of-range or non-finite accessor.
std::vector<double> read_accessor(const tinygltf::Model& model, int index, const std::vector<int>& types,
                                  const std::string& role, const std::string& file, int* count, int* components);

/// Appends `size` bytes to the one output buffer `bin` as a new bufferView (4-byte aligned, with
/// `target`: 0 = none, or TINYGLTF_TARGET_ARRAY_BUFFER / _ELEMENT_ARRAY_BUFFER); returns its index.
int add_view(tinygltf::Model& model, std::vector<unsigned char>& bin, const void* data, size_t size, int target = 0);
/// Float accessor of values.size() / components elements of `type` over a new bufferView; min/max
/// per component when `with_bounds` (glTF requires them on POSITION and animation inputs).
int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<float>& values, int type,
                 int components, bool with_bounds, int target = 0);
/// Integer accessor (JOINTS_0 as unsigned short, indices as unsigned int) over a new bufferView.
int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<std::uint16_t>& values,
                 int type, int components, int target);
int add_accessor(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<std::uint32_t>& values,
                 int type, int components, int target);
/// The one skin koma writes (bare skeletons and FBX characters alike): named "koma", skeleton
/// node 0, joints = nodes 0..J-1 (joint j = node j, as add_skeleton_nodes makes them), and one
/// inverse bind matrix per joint (koma's frame; stored as float, column-major like glTF) in a new
/// accessor. Returns the skin's index.
int add_skin(tinygltf::Model& model, std::vector<unsigned char>& bin, const std::vector<Eigen::Matrix4d>& inverse_bind);
/// The skeleton's joints as nodes 0..J-1 (names, rest offsets as translations, children) and its
/// end sites as leaf nodes after them.
void add_skeleton_nodes(const Skeleton& skeleton, tinygltf::Model& model);

/// A read character as one GLB, for the trip from the reader's child process
/// (isolation_detail::pack): the document without its animations (the writer drops them too),
/// its data in one buffer, every image in a bufferView.
std::string scene_glb(const tinygltf::Model& model);
/// The model of a scene_glb() GLB. It came from koma's child process, which had checked the file;
/// images are not decoded again. Throws Error(bad_file, file) when it does not load.
tinygltf::Model load_scene_glb(const std::string& glb, const std::string& file);

// Names of the extras koma writes and reads back.
inline constexpr const char* kChannelsExtra = "koma_channels";
inline constexpr const char* kFrameRateExtra = "koma_frame_rate";
inline constexpr const char* kFrameCountExtra = "koma_frame_count";
inline constexpr const char* kSourceUnitExtra = "koma_source_unit";

}  // namespace gltf_detail
}  // namespace koma::io
