// FBX input (binary and ASCII FBX 7.x, read through assimp). koma reads FBX; it does not write it
// (write glTF/GLB instead: Blender, Unity, Unreal and three.js import it).
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

#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace koma::io
