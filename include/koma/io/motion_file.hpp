// Reading and writing motions by file extension: the one entry point the CLI and Python use.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "koma/io/bvh.hpp"
#include "koma/io/fbx.hpp"

namespace koma::io {

/// Options for read_motion(); each applies to the formats that have the notion.
struct ReadOptions {
  std::optional<LengthUnit> unit;  ///< BVH: the file's length unit; nullopt detects it.
  /// glTF, FBX: animation (FBX: stack) name or index; empty = the first (FBX: the first that is
  /// longer than one frame interval).
  std::string animation;
  /// glTF, FBX: sampling rate in fps; 0 (default) = glTF: from the key times
  /// (GltfReadOptions::frame_rate); FBX: the clip's own rate.
  double frame_rate = 0.0;
  /// BVH: metres per file unit for a unit of its own (BvhReadOptions::scale); > 0 overrides unit.
  double scale = 0.0;
  /// glTF: the folder its buffer and image URIs must stay inside (GltfReadOptions::asset_root);
  /// empty (default) = the file's own folder.
  std::filesystem::path asset_root;
};

/// Options for write_motion().
struct WriteOptions {
  std::optional<LengthUnit> unit;  ///< BVH: unit to write; nullopt restores the source unit.
  /// glTF: kept frames (drawings), strictly increasing frame indices. Non-empty: every channel is a
  /// STEP sampler with one key per kept frame (held poses). Empty (default): one LINEAR key per
  /// frame. BVH ignores it (a BVH holds every frame).
  std::vector<int> step_keys;
  /// glTF: the character read with the input (ReadResult::gltf_scene) to write the motion onto,
  /// keeping its mesh, skin and materials; null (default) writes the skeleton only.
  std::shared_ptr<const GltfScene> gltf_scene;
  /// glTF, FBX: name of the written animation (FBX: take); empty (default) = Motion::name, the
  /// source animation's, or when that is empty the output file's stem. BVH has no names.
  std::string animation_name;
  /// FBX: false (default) = binary FBX 7.4, true = ASCII.
  bool fbx_ascii = false;
  /// FBX: the file's length unit (default centimetres, as Maya and Unity expect).
  LengthUnit fbx_unit = LengthUnit::centimetre;
  /// FBX: the file's up axis (default Y).
  FbxUpAxis fbx_up = FbxUpAxis::y;
};

/// Reads a motion, choosing the reader by extension (.bvh, .gltf, .glb, .fbx). Throws Error(bad_file) for an
/// unsupported extension, naming the ones supported.
ReadResult read_motion(const std::filesystem::path& path, const ReadOptions& options = {});

/// Writes a motion atomically, choosing the writer by extension (.bvh, .gltf, .glb, .fbx). Nothing
/// is written on error.
void write_motion(const std::filesystem::path& path, const Motion& motion, const WriteOptions& options = {});

/// True if read_motion() has a reader for this path's extension.
bool is_motion_file(const std::filesystem::path& path);

}  // namespace koma::io
