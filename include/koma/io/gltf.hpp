// glTF 2.0 reading and writing (.gltf with .bin or data: URIs, and binary .glb).
//
// Reading turns one skin's joints and one animation into a dense Motion:
//  - the skeleton is the skin's joints (plus any node between them and their common ancestor), in
//    parent-before-child order; leaf nodes below a joint that carry nothing (no mesh, camera,
//    children or animation) become end sites;
//  - the static transform of the nodes above the skeleton (an "Armature" or Z_UP node) is baked
//    into the root, so the Motion is in glTF's Y-up metres whatever the file nests it in; a uniform
//    scale there scales every length;
//  - every sampler (LINEAR, STEP, CUBICSPLINE) is sampled at one uniform rate: the reader option if
//    set; else the rate koma wrote into the file; else the rate of the keys' common time grid (the
//    smallest key gap, or a subdivision of it up to 60 fps); else the rate of the most frequent key
//    gap when at least half the gaps share it; else 30 fps (docs/gltf.md has the details);
//  - a glTF skeleton has no BVH channel layout, so each joint gets one: 6 channels on the root,
//    Zrotation Xrotation Yrotation elsewhere, plus position channels on joints whose translation is
//    animated (files written by koma carry the original layout in node extras and restore it).
// The parts of the file that are not motion (meshes, skins, materials, textures) come back in an
// opaque GltfScene, which the writer uses to write the character again with the new animation.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/io/bvh.hpp"

namespace koma::io {

/// One animation of a glTF file, as list_gltf_animations() reports it.
struct GltfAnimationInfo {
  int index = 0;                            ///< Position in the file's animations array.
  std::string name;                         ///< Its name; may be empty.
  int channel_count = 0;                    ///< Number of channels (node + path targets).
  int max_keys = 0;                         ///< Largest key count of its samplers.
  double start = 0.0;                       ///< Earliest key time, seconds.
  double end = 0.0;                         ///< Latest key time, seconds.
  std::vector<std::string> interpolations;  ///< Distinct sampler interpolations ("LINEAR", ...).
};

/// How to read a glTF file.
struct GltfReadOptions {
  /// Animation to read: its name, or its index as a decimal number. Empty (default) = the first.
  std::string animation;
  /// Sampling rate in frames per second; 0 (default) = from the keys, as the file comment says
  /// (their grid's rate when they have one, else the most common gap's, else 30 fps).
  double frame_rate = 0.0;
  /// The folder the file's buffer and image URIs must resolve inside (after percent-decoding,
  /// `..` and symbolic links). Empty (default): the file's own folder. A URI that is absolute,
  /// a URL (http:, file:), escapes this folder or names a device or a /proc file is refused
  /// (Error(bad_file)); nothing is looked up in the working directory. Widen it on purpose for
  /// assets that share textures or buffers with a sibling folder.
  std::filesystem::path asset_root;
};

/// Lists the animations of a .gltf or .glb file. Throws Error(io) when the file (or a buffer it
/// names) cannot be read, Error(bad_file) when it is not valid glTF or names a URI outside
/// `asset_root` (GltfReadOptions::asset_root; empty: the file's folder).
std::vector<GltfAnimationInfo> list_gltf_animations(const std::filesystem::path& path,
                                                    const std::filesystem::path& asset_root = {});

/// Reads one skin and one animation of a .gltf (external .bin or embedded data: URIs) or .glb
/// file into a Motion (metres, radians, Y up). ReadResult::gltf_scene holds the rest of the file.
/// Warnings: animation channels on nodes outside the skeleton (ignored), non-unit joint scale
/// (kept: koma's forward kinematics passes it on as glTF does, but a BVH output cannot store it),
/// rates that were guessed.
/// Every image is decoded and checked (a PNG or JPEG within 8192 x 8192 pixels; WebP and KTX2 by
/// signature) before koma keeps it to carry into an output; one that fails is left out of the
/// scene with a warning (its textures lose it, so their materials keep their base colour).
/// Throws Error(io) for an unreadable file or missing .bin; Error(bad_file) for a URI outside
/// options.asset_root; Error(bad_file) naming the accessor,
/// sampler, node or animation for: out-of-range or wrongly typed accessors, key times that do not
/// increase, no skin, no animation, an unknown animation name/index, a skin whose joints are not
/// one hierarchy.
ReadResult read_gltf(const std::filesystem::path& path, const GltfReadOptions& options = {});

/// How to write a glTF file.
struct GltfWriteOptions {
  /// Kept frames (drawings) for limited animation, strictly increasing frame indices of the motion.
  /// When non-empty every channel is written as a STEP sampler with exactly one key per kept
  /// frame, holding that frame's pose until the next kept frame. Empty (default): one LINEAR key
  /// per frame.
  std::vector<int> step_keys;
  /// The character to write the animation onto (from ReadResult::gltf_scene). Null (default):
  /// write the skeleton only, as nodes with a skin (no mesh). Its joints must match the motion's
  /// skeleton by name, count and order, else Error(mismatch).
  std::shared_ptr<const GltfScene> scene;
  /// Name of the written animation; empty (default) = Motion::name (the source animation's), or
  /// when that is empty the output file's stem ("walk_keys.glb" -> "walk_keys").
  std::string animation_name;
};

/// Writes a motion as glTF 2.0, binary when the extension is .glb, else JSON .gltf with the
/// buffer in "<stem>.bin" beside it. Y-up metres; rotations as quaternions; translation channels
/// on the root and on joints with position channels (or translations that differ from the rest
/// offset); scale channels on every joint when Motion::scales is present. The BVH channel layout
/// and source unit are kept in extras so glTF -> BVH restores them. Lossless up to float32.
/// Atomic: on any error nothing is written. Throws Error(invalid_settings) for bad step_keys,
/// Error(mismatch) for a scene of another skeleton, Error(io) when the files cannot be written.
void write_gltf(const std::filesystem::path& path, const Motion& motion,
                const GltfWriteOptions& options = {});

/// The binary glTF (.glb) bytes write_gltf would write for a .glb path, in memory (for pages that
/// inline the character). `name` names the output in messages. Throws as write_gltf, except that
/// nothing is written.
std::string gltf_glb_bytes(const Motion& motion, const GltfWriteOptions& options = {},
                           std::string_view name = "glb");

/// True for the .gltf and .glb extensions (any case).
bool is_gltf_file(const std::filesystem::path& path);

}  // namespace koma::io
