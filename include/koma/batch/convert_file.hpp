// The convert pipeline of one file (`koma convert`, `koma batch convert`, Python): read, cut a
// frame range, change the rate, write in another format or unit. Stateless; the output is atomic.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/batch/pipelines.hpp"
#include "koma/io/motion_file.hpp"

namespace koma::batch {

/// Input frames [first, end) to keep; negative values count from the end (-1 = the last frame).
struct FrameRange {
  int first = 0;              ///< First frame kept; default 0.
  std::optional<int> end;     ///< One past the last frame kept; nullopt (default) = the end of the take.
};

/// Parses "A:B" (B excluded; either side may be empty, "100:" or ":50"; negative counts from the
/// end). Throws Error(invalid_settings, "range") for anything else.
FrameRange parse_frame_range(std::string_view text);

/// Settings of the convert pipeline.
struct ConvertJob {
  std::optional<FrameRange> range;  ///< Input frames to keep (cut first); nullopt (default) = all.
  double output_rate = 0.0;         ///< Output fps after the cut; 0 (default) = the input's (no resampling).
  io::ReadOptions read;             ///< The input's unit and animation.
  /// How the output is written: write.unit is the unit a BVH is written in (default the input's);
  /// the pipeline sets the input's character (glTF/FBX input).
  io::WriteOptions write;
  /// Called with each reader warning as it arises (before any later step can fail), e.g. to print
  /// it; the result's `warnings` hold them too. Empty (default) = collected only.
  std::function<void(const std::string&)> on_warning;

  /// Throws Error(invalid_settings, "output_rate") for a rate outside [0, 1000] or not finite.
  void validate() const;
};

/// What run_convert_file() did.
struct ConvertFileResult {
  int frames = 0;            ///< output frames
  double frame_rate = 0.0;   ///< output fps
  std::vector<std::string> warnings;  ///< the reader's warnings
};

/// Reads `input`, keeps job.range, resamples to job.output_rate and writes `output` (format by
/// extension; a glTF/FBX input's character carries over to a glTF output). Throws what reading,
/// the range (Error(invalid_settings, "range") or cut()'s errors), resampling and writing throw,
/// and whatever `progress` throws.
ConvertFileResult run_convert_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                   const ConvertJob& job, const FileProgress& progress = {});

/// The figures of a convert run: {"frames", "fps"}.
nlohmann::json convert_figures(const ConvertFileResult& result);


}  // namespace koma::batch
