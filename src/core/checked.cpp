#include "koma/core/checked.hpp"

#include <fmt/format.h>

#include "koma/core/error.hpp"

namespace koma {

void check_motion_size(std::int64_t frames, std::int64_t joints, const std::string& where) {
  if (frames < 1) throw Error(ErrorCode::bad_data, where, fmt::format("{} frames; at least 1 is needed", frames));
  if (frames > kMaxFrames) {
    throw Error(ErrorCode::bad_data, where,
                fmt::format("{} frames, more than koma's limit of {} (ten hours at 120 fps)", frames, kMaxFrames));
  }
  const auto samples = checked::mul(static_cast<std::uint64_t>(frames), static_cast<std::uint64_t>(joints < 0 ? 0 : joints));
  if (!samples || *samples > static_cast<std::uint64_t>(kMaxSamples)) {
    throw Error(ErrorCode::bad_data, where,
                fmt::format("{} frames of {} joints is more than koma's limit of {} joint-frames", frames, joints,
                            kMaxSamples));
  }
}

void check_frame_rate(double rate, const std::string& where) {
  if (!valid_frame_rate(rate)) {
    throw Error(ErrorCode::bad_data, where,
                fmt::format("frame rate {:g} fps; expected {:g} to {:g} fps (a frame time of 10 us to 60 s)", rate,
                            kMinFrameRate, kMaxFrameRate));
  }
}

}  // namespace koma
