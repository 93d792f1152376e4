// Reading the kept frames out of the JSON report `koma keys` writes, tolerantly: only the fields
// the renderer needs are read, everything else in the report is ignored, so the report can grow.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace koma::io {

/// What the renderer takes from a key-pose report.
struct KeptFramesReport {
  std::vector<int> kept_frames;        ///< Output frames that start a new drawing, as written.
  std::optional<double> frame_rate;    ///< Output rate, when the report states one.
  std::optional<int> frame_count;      ///< Output frame count, when the report states one.
  /// The error-vs-keys curve of the first layer ("layers"[0]."curve": key count and mean squared
  /// error in m^2 per point), when the report has one; entries that are not {keys, error_m2}
  /// numbers are skipped. Empty otherwise.
  std::vector<std::pair<int, double>> curve;
  /// One body-part layer of a layered report: the joints it drives and its own kept frames.
  struct Layer {
    std::string name;
    std::vector<std::string> joints;  ///< joint names (empty for a main layer that drives none)
    std::vector<int> keys;            ///< its kept frames
  };
  /// Every layer when the report lists more than one ("layers" with "joints" and "keys"); then
  /// kept_frames is the union of their keys (every frame where some part changes). Else empty.
  std::vector<Layer> layers;
};

/// Parses report text. "kept_frames" (an array of non-negative integers) is looked up at the top
/// level, then in any object one level down (e.g. {"selection": {"kept_frames": [...]}}), then as
/// "layers"[0]."keys" (reports that list keys per body-part layer; the first is the whole body).
/// The rate comes from the first of "output_fps", "output_rate", "fps", "frame_rate" that is a
/// positive number, the count from "output_frames" / "output_frame_count" / "frames" (both at the
/// level where the frames were found, then the top level); koma keys selects on the motion
/// resampled to the output rate, so its "frames" and "fps" are the output's. Throws Error(bad_file) naming `name` for invalid
/// JSON, a missing or non-array kept_frames, or an entry that is not a non-negative integer.
/// A "layers" array of two or more objects with "joints" (names) and "keys" fills `layers`, and
/// kept_frames becomes the sorted union of the layers' keys. A spaced report (`koma keys --chart`:
/// "spacing": {"drawings": [{"frame", ...}]}) gives its drawings' frames, keys and inbetweens.
/// Whether the frames fit a motion is checked by the caller (koma::check_kept_frames, core/drawings.hpp).
KeptFramesReport parse_kept_frames_report(std::string_view text, std::string_view name);

/// Reads and parses a report file. Throws Error(io) when it cannot be read, else as above.
KeptFramesReport read_kept_frames_report(const std::filesystem::path& path);

}  // namespace koma::io
