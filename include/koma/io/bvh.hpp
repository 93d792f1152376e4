// BVH (Biovision Hierarchy) reading and writing.
//
// Reads every dialect seen in practice: 3 or 6 channels on any joint, any rotation order per joint
// (several in one file), CRLF or LF (or both), tabs, names with colons or spaces, End Sites,
// exponent notation, 1-frame files. Lengths are converted to metres and angles to radians at this
// boundary; the file's unit is recorded in Motion::source_unit so the writer restores it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::io {

/// How to read a BVH file.
struct BvhReadOptions {
  /// Length unit of the file. nullopt (default) detects it from the figure's size with
  /// detect_bvh_unit().
  std::optional<LengthUnit> unit;
  /// Metres per file unit, for a unit of its own (0.0254 / 0.45 for CMU, 0.056); > 0 overrides
  /// `unit` and is kept in Motion::source_scale. 0 (default): `unit` decides. Finite, >= 0.
  double scale = 0.0;
};

/// The non-motion part of a read glTF file: the whole document (nodes, meshes, skin, materials,
/// images) and the node behind each Motion joint. Opaque and immutable; hand it to
/// GltfWriteOptions::scene or WriteOptions::gltf_scene (io/gltf.hpp, io/motion_file.hpp) to write
/// the original character again with a new animation. Defined privately in src/io.
struct GltfScene;

/// A read motion and what the reader noticed but tolerated (each with file:line).
struct ReadResult {
  Motion motion;
  std::vector<std::string> warnings;  ///< e.g. "walk.bvh:4021: 1 motion row beyond the declared 3069 frames ignored"
  bool unit_detected = false;         ///< true when the unit came from detect_bvh_unit(), not the caller
  /// How the length unit was chosen, one sentence (the detection rule and its reading, or "given").
  std::string unit_rule;
  std::shared_ptr<const GltfScene> gltf_scene;  ///< glTF input only: the character around the motion
};

/// Unit guessed from the size of the figure (core's figure_size(): the median over the take of the
/// largest side of the bounding box of every point but the root joint, in file units), preferring
/// a human-sized reading: guess_length_unit() (core/units.hpp), whose rule for size h is
///   h < 7.2: metre;  7.2-45: CMU unit (1/0.45 in; cgspeed CMU, Xia, Truebones);  45-108: inch;
///   108-542: centimetre;  h >= 542: millimetre.
/// The reader warns, naming the unit and the height it gives, whenever the detected reading is
/// outside the human band 1.4-2.1 m (a child, a creature, a prop, or a unit of its own: pass
/// `scale`).
LengthUnit detect_bvh_unit(double size_in_file_units) noexcept;

/// Parses BVH text. `name` is used in messages ("name:line: ..."). Throws Error(bad_file) with
/// name:line and what was expected on any malformed input; never reads past the text.
/// A file whose motion section holds more rows than "Frames:" declares reads the declared count
/// and warns; fewer rows than declared is an error (truncated file).
ReadResult parse_bvh(std::string_view text, std::string_view name, const BvhReadOptions& options = {});

/// Reads a BVH file (read_file + parse_bvh). Throws Error(io) when it cannot be read.
ReadResult read_bvh(const std::filesystem::path& path, const BvhReadOptions& options = {});

/// How to write a BVH file.
struct BvhWriteOptions {
  /// Length unit to write; nullopt (default) restores Motion::source_unit.
  std::optional<LengthUnit> unit;
  /// Significant digits per value (default 9: read -> write -> read within 1e-8 relative).
  int significant_digits = 9;
};

/// BVH text of a motion: joint names, per-joint channel layout and Euler order and the frame time
/// are preserved; Euler angles are chosen continuous from frame to frame (nearest to the previous
/// frame), so angles read from a file are reproduced. Lossless up to the printed precision; scale is
/// not representable in BVH and is dropped.
std::string format_bvh(const Motion& motion, const BvhWriteOptions& options = {});

/// Writes format_bvh() atomically to `path`. Throws Error(io) on failure; nothing is left behind.
void write_bvh(const std::filesystem::path& path, const Motion& motion, const BvhWriteOptions& options = {});

}  // namespace koma::io
