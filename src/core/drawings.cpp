#include "koma/core/drawings.hpp"

#include <fmt/format.h>

#include "koma/core/error.hpp"

namespace koma {

void check_kept_frames(std::span<const int> kept, int frame_count, const std::string& context) {
  if (frame_count < 1) throw Error(ErrorCode::mismatch, context, "the motion has no frames");
  if (kept.empty()) throw Error(ErrorCode::mismatch, context, "no kept frames: a clip needs at least its first drawing");
  if (kept[0] != 0) {
    throw Error(ErrorCode::mismatch, context,
                fmt::format("the first kept frame is {}, expected 0 (the first frame is always a drawing)", kept[0]));
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] < 0 || kept[i] >= frame_count) {
      throw Error(ErrorCode::mismatch, context,
                  fmt::format("kept frame {} (entry {}) is outside the motion's {} output frames (0 .. {}); "
                              "was the report made for another motion or frame rate?",
                              kept[i], i, frame_count, frame_count - 1));
    }
    if (i > 0 && kept[i] <= kept[i - 1]) {
      throw Error(ErrorCode::mismatch, context,
                  fmt::format("kept frames must increase: entry {} is {} after {}", i, kept[i], kept[i - 1]));
    }
  }
}

std::vector<int> drawing_numbers(std::span<const int> kept, int frame_count) {
  check_kept_frames(kept, frame_count, "kept frames");
  std::vector<int> d(static_cast<size_t>(frame_count));
  size_t k = 0;
  for (int f = 0; f < frame_count; ++f) {
    while (k + 1 < kept.size() && kept[k + 1] <= f) ++k;
    d[f] = static_cast<int>(k) + 1;
  }
  return d;
}

}  // namespace koma
