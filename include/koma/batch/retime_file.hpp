// The retime pipeline of one file (`koma retime`, `koma batch retime`, Python): read the input and
// the example's timing, re-time, write the motion and the report. Stateless; outputs atomic and
// together (see pipelines.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "koma/batch/pipelines.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/timing/retime.hpp"
#include "koma/timing/source.hpp"

namespace koma::batch {

/// Settings of the retime pipeline.
struct RetimeJob {
  /// The re-timing (default RetimeSettings'); retime.output_rate 0 (default) = the input's rate.
  timing::RetimeSettings retime;
  /// The timing to take: an example motion file, a folder of them (one skeleton topology) or a
  /// saved timing source (.json). Required.
  std::filesystem::path like;
  /// A roles file ({"left_ankle": "LFoot", ...}) for the input and the examples; empty (default) =
  /// roles found by name.
  std::filesystem::path roles;
  /// The input's unit and animation. The unit (or scale) applies to the examples too; they are
  /// read with their own first animation.
  io::ReadOptions read;
  /// How the output is written; the pipeline sets the input's character (glTF/FBX input).
  io::WriteOptions write;
  std::filesystem::path report;  ///< Non-empty: also write the JSON report (with the warp) here.
  /// Called with each reader warning as it arises (before any later step can fail), e.g. to print
  /// it; the result's `warnings` hold them too. Empty (default) = collected only.
  std::function<void(const std::string&)> on_warning;

  /// Throws Error(invalid_settings, "like") when `like` is empty, and RetimeSettings::validate()'s errors.
  void validate() const;
};

/// What run_retime_file() did.
struct RetimeFileResult {
  timing::RetimeReport report;  ///< retime()'s report
  /// The report as JSON (timing::retime_report() with the warp, plus "input" and "output"): what
  /// job.report holds.
  nlohmann::json summary;
  std::vector<std::string> warnings;  ///< the readers' warnings: the input's, then the examples'
};

/// The timing source `like` names, read as the retime pipeline reads it (timing::load_timing_source
/// with io's readers; `read`'s unit or scale for every example; roles from `roles`). Calls `warn`
/// with each example's reader warnings.
timing::TimingSource load_timing_source(const std::filesystem::path& like, const std::filesystem::path& roles,
                                        const io::ReadOptions& read,
                                        const std::function<void(const std::string&)>& warn);

/// Reads `input`, loads the timing source, re-times, and writes `output` (format by extension; the
/// input's glTF/FBX character carries over to a glTF output) and job.report. Everything is computed
/// before anything is written. Throws what reading, the roles file, the timing source, the
/// settings and retime() throw (Error), and whatever `progress` throws.
RetimeFileResult run_retime_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                 const RetimeJob& job, const FileProgress& progress = {});

/// The figures of a retime run (the summary without the per-frame warp): what `koma retime --json`
/// prints and a batch report records.
nlohmann::json retime_figures(const RetimeFileResult& result);


}  // namespace koma::batch
