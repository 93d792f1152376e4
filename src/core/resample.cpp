#include "koma/core/resample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/core/checked.hpp"
#include "koma/core/error.hpp"

namespace koma {

int resampled_frame_count(int frame_count, double from_rate, double to_rate) {
  if (frame_count <= 1) return frame_count;
  // Tolerance so that e.g. 121 frames at 120 fps -> 25 frames at 24 fps despite rounding.
  const double last = (frame_count - 1) * to_rate / from_rate;
  const auto whole = checked::whole(std::floor(last + 1e-9), 0, kMaxFrames - 1);
  if (!whole) {
    throw Error(ErrorCode::invalid_settings, "resample",
                fmt::format("{} frames at {:g} fps become {:g} frames at {:g} fps, more than koma's limit of {}",
                            frame_count, from_rate, std::floor(last) + 1, to_rate, kMaxFrames));
  }
  return static_cast<int>(*whole) + 1;
}

Motion resample(const Motion& motion, double rate) {
  if (!valid_frame_rate(rate)) {
    throw Error(ErrorCode::invalid_settings, "resample",
                fmt::format("frame rate {:g} must be within {:g} to {:g} fps", rate, kMinFrameRate, kMaxFrameRate));
  }
  if (rate == motion.frame_rate) return motion;
  check_motion_size(resampled_frame_count(motion.frame_count, motion.frame_rate, rate), motion.joint_count(),
                    fmt::format("resampling to {:g} fps", rate));
  // Output frame i is at time i / rate exactly, i.e. at source position (i / rate) * source rate.
  const int frames = resampled_frame_count(motion.frame_count, motion.frame_rate, rate);
  std::vector<double> positions(static_cast<size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    positions[i] = std::min((static_cast<double>(i) / rate) * motion.frame_rate, motion.frame_count - 1.0);
  }
  return sample_at_frames(motion, positions, rate);
}

Motion sample_at_frames(const Motion& motion, std::span<const double> frames, double rate) {
  if (!(rate > 0 && std::isfinite(rate))) {
    throw Error(ErrorCode::invalid_settings, "rate", fmt::format("frame rate {} must be > 0", rate));
  }
  if (frames.empty()) throw Error(ErrorCode::invalid_settings, "frames", "no frame to sample");
  const int n = motion.frame_count, joints = motion.joint_count();
  Motion out;
  out.skeleton = motion.skeleton;
  out.frame_rate = rate;
  out.frame_count = static_cast<int>(frames.size());
  out.source_unit = motion.source_unit;
  out.source_scale = motion.source_scale;
  out.name = motion.name;
  out.rotations.resize(frames.size() * joints);
  out.translations.resize(out.rotations.size());
  if (!motion.scales.empty()) out.scales.resize(out.rotations.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    const double s = frames[i];
    if (!(s >= -1e-9 && s <= n - 1 + 1e-9)) {
      throw Error(ErrorCode::invalid_settings, fmt::format("frame {}", i),
                  fmt::format("sample position {} outside 0 .. {}", s, n - 1));
    }
    // Tolerance so that a position a rounding error below a frame lands on it exactly.
    const int f0 = std::clamp(static_cast<int>(std::floor(s + 1e-9)), 0, n - 1);
    const int f1 = std::min(f0 + 1, n - 1);
    const double t = std::clamp(s - f0, 0.0, 1.0);
    for (int j = 0; j < joints; ++j) {
      const size_t o = i * joints + j, a = static_cast<size_t>(f0) * joints + j, b = static_cast<size_t>(f1) * joints + j;
      if (t < 1e-9 || f0 == f1) {
        out.rotations[o] = motion.rotations[a];
        out.translations[o] = motion.translations[a];
        if (!out.scales.empty()) out.scales[o] = motion.scales[a];
      } else {
        out.rotations[o] = slerp(motion.rotations[a], motion.rotations[b], t);
        out.translations[o] = (1.0 - t) * motion.translations[a] + t * motion.translations[b];
        if (!out.scales.empty()) out.scales[o] = (1.0 - t) * motion.scales[a] + t * motion.scales[b];
      }
    }
  }
  return out;
}

Motion cut(const Motion& motion, int begin, int end) {
  if (begin < 0 || end > motion.frame_count || begin >= end) {
    throw Error(ErrorCode::invalid_settings, fmt::format("range {}:{}", begin, end),
                fmt::format("must be a non-empty range within 0:{} (end exclusive)", motion.frame_count));
  }
  const size_t j = static_cast<size_t>(motion.joint_count());
  Motion out;
  out.skeleton = motion.skeleton;
  out.frame_rate = motion.frame_rate;
  out.frame_count = end - begin;
  out.source_unit = motion.source_unit;
  out.source_scale = motion.source_scale;
  out.name = motion.name;
  out.rotations.assign(motion.rotations.begin() + begin * j, motion.rotations.begin() + end * j);
  out.translations.assign(motion.translations.begin() + begin * j, motion.translations.begin() + end * j);
  if (!motion.scales.empty()) out.scales.assign(motion.scales.begin() + begin * j, motion.scales.begin() + end * j);
  return out;
}

}  // namespace koma
