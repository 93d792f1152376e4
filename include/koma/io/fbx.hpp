// FBX input (binary and ASCII FBX 7.x, read through assimp) and output (FBX 7.4, binary or ASCII,
// written by koma's own writer: docs/fbx.md says why not assimp's exporter or Blender's).
//
// Reading turns the file's skeleton and one animation stack (a "clip") into a dense Motion:
//  - the skeleton is every deforming bone (a bone that weights at least one vertex of a mesh) and
//    its ancestors up to their lowest common ancestor, extended upward through the ancestors that
//    any clip animates (a Blender "Armature" object, a Mixamo "Armature" node), in the file's
//    depth-first order, so the joint order is the same on every run and for every clip. A file
//    without skinned meshes (a "without skin" export) uses the animated nodes instead;
//  - leaf children of joints (Blender "_end" tails, Mixamo "HeadTop_End", Maya's last joint)
//    become end sites; IK helpers (names with "pole", "target" or an "IK" prefix) are dropped;
//  - the file's axis system (GlobalSettings Up/Front/CoordAxis) and UnitScaleFactor (centimetres
//    per file unit), together with the static transform of the nodes above the skeleton, are baked
//    into the root, so the Motion is in koma's right-handed Y-up metres; a uniform scale on a node
//    (Blender's 100 on an armature) scales the lengths below it, since koma's FK has no scale;
//  - the clip is sampled at its own rate, the file's frame rate (TimeMode, or CustomFrameRate such
//    as 14.985 fps), from its start to the last whole frame at or before its end: a clip that ends
//    between frames is not padded with an invented frame. Keys at fractional times are
//    interpolated (linear position and scale, shortest-path slerp rotation);
//  - each joint gets a BVH channel layout: 6 channels on the root, Zrotation Xrotation Yrotation
//    elsewhere, plus position channels on joints whose translation is animated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/io/bvh.hpp"

namespace koma::io {

/// One animation stack of an FBX file, as list_fbx_animations() reports it.
struct FbxAnimationInfo {
  int index = 0;           ///< Position among the file's stacks (what `animation` may name).
  std::string name;        ///< Its name, e.g. "Armature|Walk"; may be empty.
  double frame_rate = 0;   ///< The file's frame rate, frames per second (14.985 for a custom rate).
  double duration = 0;     ///< Stack length as the file defines it, seconds (may end between frames).
  int frame_count = 0;     ///< Frames read_fbx() samples: whole frames from 0 to duration.
  int channel_count = 0;   ///< Nodes the stack animates.
  int max_keys = 0;        ///< Largest key count of one channel (2 for a held pose).
  bool junk = false;       ///< At most one frame interval long (a rest pose kept by the exporter).
};

/// How to read an FBX file.
struct FbxReadOptions {
  /// Animation stack to read: its name, or its index as a decimal number. Empty (default) = the
  /// first stack that is not junk (longer than one frame interval), else the first.
  std::string animation;
  /// Sampling rate in frames per second; 0 (default) = the clip's own rate (the file's).
  double frame_rate = 0.0;
};

/// Lists the animation stacks of an FBX file. Throws as read_fbx() does for a missing, truncated
/// or unsupported file (it does not require an animation).
std::vector<FbxAnimationInfo> list_fbx_animations(const std::filesystem::path& path);

/// Reads the skeleton and one animation stack of an FBX file into a Motion (metres, radians,
/// Y up). Motion::source_unit is the file's unit (UnitScaleFactor 1 = cm, 100 = m, ...).
/// Warnings: the default stack skipped junk stacks, a non-uniform joint scale (dropped).
/// Throws Error(io) when the file cannot be opened; Error(bad_file) naming the file and what was
/// found for: a file assimp cannot parse (truncated, FBX 6.1 or older, not FBX), no animation
/// stack, an unknown stack name or index, no skeleton (no skinned mesh and no animated node), and
/// deforming bones in several unconnected hierarchies (naming the hierarchies' top nodes).
/// Throws Error(invalid_settings) for a negative or non-finite frame_rate.
ReadResult read_fbx(const std::filesystem::path& path, const FbxReadOptions& options = {});

/// True for the .fbx extension (any case).
bool is_fbx_file(const std::filesystem::path& path);

/// The up axis an FBX file is written with: Y (Maya, Unity, Unreal's importer; default) or Z
/// (3ds Max). Either way the GlobalSettings say which, so importers convert.
enum class FbxUpAxis : std::uint8_t { y, z };
/// "y-up", "z-up" (parsed in any case).
inline constexpr EnumNames<FbxUpAxis, 2> kFbxUpAxisNames{{{{FbxUpAxis::y, "y-up"}, {FbxUpAxis::z, "z-up"}}},
                                                        NameCase::ignore, "y-up"};

/// How to write an FBX file.
struct FbxWriteOptions {
  /// Kept frames (drawings), strictly increasing frame indices, as GltfWriteOptions::step_keys.
  /// Non-empty: the motion is held (limited animation); every output frame still gets a key, and
  /// every key has constant interpolation, so importers that ignore the flag (Blender) hold too.
  /// Empty (default): a key per frame with linear interpolation.
  std::vector<int> step_keys;
  /// The character read with the input (ReadResult::gltf_scene of a glTF or FBX file): its skinned
  /// meshes (skin weights, bind pose), materials and textures are written with the skeleton. Null
  /// (default): the skeleton alone (a BVH input). Joints must match the motion's, else
  /// Error(mismatch).
  std::shared_ptr<const GltfScene> scene;
  /// Name of the take (animation stack); empty (default) = Motion::name, or the output's stem.
  std::string animation_name;
  /// false (default): binary FBX 7.4; true: ASCII FBX 7.4.
  bool ascii = false;
  /// Length unit of the file (GlobalSettings UnitScaleFactor); default centimetres, as Maya and
  /// Unity expect.
  LengthUnit unit = LengthUnit::centimetre;
  /// Up axis of the file; default Y.
  FbxUpAxis up = FbxUpAxis::y;
};

/// Writes the motion as FBX 7.4: the skeleton as LimbNode models (end sites as leaf bones), the
/// character's skinned meshes when `options.scene` is set (one mesh model per primitive, a skin
/// with one cluster per bone it uses, a bind pose, a material per primitive with its base colour
/// and base-colour texture embedded), and one take (AnimationStack, one layer) keyed at every
/// frame: Lcl Rotation on every joint (Euler XYZ degrees, continuous), Lcl Translation on the roots
/// and joints that move, Lcl Scaling when the motion has scales. GlobalSettings state the unit,
/// the axes and the frame rate (TimeMode, CustomFrameRate for other rates). Lossless up to float32
/// keys. Atomic: on any error nothing is written. Throws Error(invalid_settings) for bad step_keys,
/// Error(mismatch) for a scene of another skeleton, Error(bad_data) for a character whose mesh
/// data cannot be read, Error(io) when the file cannot be written.
void write_fbx(const std::filesystem::path& path, const Motion& motion, const FbxWriteOptions& options = {});

/// The bytes write_fbx would write (for tests and in-memory use). `name` names the output in
/// messages and is the take's name when neither options.animation_name nor Motion::name is set.
std::string fbx_bytes(const Motion& motion, const FbxWriteOptions& options = {}, const std::string& name = "koma");

}  // namespace koma::io
