// What the toon renderer draws for a motion: the character its file carries (glTF, FBX), or a
// generated mannequin when there is none (BVH) or it cannot be skinned; and the per-frame bone
// matrices that pose it.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/io/character.hpp"

namespace koma::io {
struct GltfScene;
}

namespace koma::toon {

/// A character ready for Renderer::add_character().
struct ToonCharacter {
  io::CharacterMesh mesh;
  bool generated = false;             ///< True for the mannequin.
  std::vector<std::string> warnings;  ///< Why the mannequin replaced the file's mesh, textures dropped, ...
};

/// Proportions and colours of the generated mannequin. Sizes are fractions of the figure's size
/// (the largest side of its first frame's bounding box).
struct MannequinSettings {
  double limb = 1.0;    ///< Scales every limb's thickness; (0.2, 4]; 1.
  double torso = 1.0;   ///< Scales the trunk's thickness; (0.2, 4]; 1.
  double head = 0.075;  ///< Head radius; (0, 0.3]; 0.075 (a head about 1/7 of the height).
  std::array<float, 4> body{0.88f, 0.85f, 0.80f, 1.0f};   ///< Trunk, neck and head: warm ivory.
  std::array<float, 4> left{0.93f, 0.50f, 0.38f, 1.0f};   ///< Left limbs: soft vermilion (as the sticks').
  std::array<float, 4> right{0.42f, 0.60f, 0.88f, 1.0f};  ///< Right limbs: soft cobalt.

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// A body for a skeleton without a mesh: tapered capsules sized from the bone lengths (thighs,
/// shins, upper arms, forearms, a trunk along the spine, a neck), an ellipsoid head with a nose
/// that shows where the face points, mitten hands and wedge feet, each rigidly bound to its joint
/// (one bone per joint, identity inverse bind: the geometry is built in each joint's frame of
/// `motion`'s first frame). Bones without a recognised role get capsules as thick as a fifth of
/// their length (a tail, a quadruped's legs). Lossless of nothing: the motion is not changed.
/// Throws Error(invalid_settings) for bad settings, Error(bad_data) for a motion without frames.
io::CharacterMesh make_mannequin(const Motion& motion, const MannequinSettings& settings = {});

/// The character to draw for `motion`: the mesh of `scene` (from io::ReadResult::gltf_scene; may
/// be null) when it has triangles weighted to the skeleton, else the mannequin, with a warning
/// saying why (no mesh is not a warning for a BVH: `scene` null). `file` names the source.
ToonCharacter make_character(const Motion& motion, const std::shared_ptr<const io::GltfScene>& scene,
                             const std::string& file, const MannequinSettings& mannequin = {});

/// World transforms of every joint of frame `frame` (glTF's parent * T * R * S down the chain,
/// scale included), written into `out` (joint_count matrices). Asserts sizes.
void joint_transforms(const Motion& motion, int frame, std::span<Eigen::Matrix4d> out);

/// Skinning matrices (16 floats per bone, column-major) of `mesh` for joints posed as `joints`
/// (from joint_transforms), written into `out` (16 * bones floats). Asserts sizes.
void bone_matrices(const io::CharacterMesh& mesh, std::span<const Eigen::Matrix4d> joints, std::span<float> out);

/// The motion as limited animation: on every frame f, joint j takes its local transform from the
/// latest key at or before f of its layer joint_layer[j] in layer_keys (one layer: every joint 0
/// and layer_keys = {kept frames}). Lossy. Throws Error(mismatch) when joint_layer has not one
/// entry per joint or names a missing layer, or a layer's keys do not start at 0 and increase
/// within the motion's frames.
Motion held_motion(const Motion& motion, std::span<const int> joint_layer,
                   const std::vector<std::vector<int>>& layer_keys);

}  // namespace koma::toon
