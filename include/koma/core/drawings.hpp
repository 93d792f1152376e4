// Drawings of a held clip: which kept output frame (drawing) each output frame shows. The keys
// selector's layers, the exposure sheets, the comparison video and the reports all number
// drawings with this one function.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace koma {

/// Checks a list of kept output frames against a clip of `frame_count` output frames: non-empty,
/// strictly increasing, first = 0, all < frame_count. Throws Error(mismatch) with `context` (e.g.
/// "report.json") saying which entry breaks it.
void check_kept_frames(std::span<const int> kept_frames, int frame_count, const std::string& context);

/// Drawing number (1-based) shown on each of `frame_count` output frames: drawing d starts at
/// kept_frames[d - 1] and is held until the next kept frame, as an exposure sheet lists it.
/// Validates as check_kept_frames (context "kept frames").
std::vector<int> drawing_numbers(std::span<const int> kept_frames, int frame_count);

}  // namespace koma
