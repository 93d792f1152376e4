// Private to src/io: the tinygltf document behind io::GltfScene and helpers shared by the glTF
// reader and writer. tinygltf stays out of every public header.
#pragma once

#include <tiny_gltf.h>

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

// Names of the extras koma writes and reads back.
inline constexpr const char* kChannelsExtra = "koma_channels";
inline constexpr const char* kFrameRateExtra = "koma_frame_rate";
inline constexpr const char* kFrameCountExtra = "koma_frame_count";
inline constexpr const char* kSourceUnitExtra = "koma_source_unit";

}  // namespace gltf_detail
}  // namespace koma::io
