// `koma keys` on a video input: the options the keys command hands to the video pipeline.
#pragma once

#include <cstdint>
#include <string>

namespace koma::cli {

struct VideoKeysArgs {
  std::string input, output, fps, selector, metric, interp, lock, schedule, report, xsheet, contact_sheet;
  std::string regions = "auto", flow = "dis";
  bool metric_given = false;  ///< --metric was given (video defaults to velocity)
  int keys = 0, on = 0, min_hold = 1, max_hold = 0, iterations = 200000;
  double ratio = 0, max_error = -1;
  std::uint64_t seed = 1;
  std::string anneal_eval = "delta";
  bool json = false;
  std::string skeleton_only;  ///< name of a skeleton-only option that was given ("" = none)
  bool max_hold_given = false;  ///< --max-hold was given (0 then means unlimited, not the 2 s default)
};

/// Runs key selection on a video and writes the held video and the asked-for reports.
void run_video_keys(const VideoKeysArgs& args);

}  // namespace koma::cli
