#include "koma/core/checked.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

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

void check_sample_budget(std::int64_t frames, std::int64_t joints, std::uint64_t file_bytes, const std::string& where,
                         const std::string& cause) {
  if (frames < 1) throw Error(ErrorCode::bad_file, where, fmt::format("{}: {} frames; at least 1 is needed", cause, frames));
  if (frames > kMaxFrames)
    throw Error(ErrorCode::bad_file, where,
                fmt::format("{}: more than koma's limit of {} frames (ten hours at 120 fps)", cause, kMaxFrames));
  const auto samples = checked::mul(static_cast<std::uint64_t>(frames), static_cast<std::uint64_t>(joints < 0 ? 0 : joints));
  const std::uint64_t budget = std::min<std::uint64_t>(sample_budget(file_bytes), kMaxSamples);
  if (!samples || *samples > budget)
    throw Error(ErrorCode::bad_file, where,
                fmt::format("{}: {} frames x {} joints = {} joint-frames, more than a file of {} bytes can hold "
                            "(koma reads at most {}: 1,048,576 + 4 per byte); a key time, duration or frame rate in "
                            "the file is wrong",
                            cause, frames, joints, samples ? std::to_string(*samples) : "over 2^64", file_bytes,
                            budget));
}

void check_frame_rate(double rate, const std::string& where) {
  if (!valid_frame_rate(rate)) {
    throw Error(ErrorCode::bad_data, where,
                fmt::format("frame rate {:g} fps; expected {:g} to {:g} fps (a frame time of 10 us to 60 s)", rate,
                            kMinFrameRate, kMaxFrameRate));
  }
}

}  // namespace koma
