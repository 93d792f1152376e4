// Resampling to another frame rate, and cutting a frame range.
#pragma once

#include <span>

#include "koma/core/motion.hpp"

namespace koma {

/// Number of frames of `frame_count` frames at `from_rate` resampled to `to_rate`: the samples at
/// i / to_rate for every i with i / to_rate <= (frame_count - 1) / from_rate (first frame kept; the
/// last kept whenever the rates divide the duration).
int resampled_frame_count(int frame_count, double from_rate, double to_rate);

/// The motion sampled at `rate` frames per second. Lossy when downsampling. Frame i of the result
/// is at time i / rate exactly (never an accumulated sum): rotations by slerp and translations and
/// scales linearly between the two source frames around that time. Same rate returns an exact
/// copy. Throws Error(invalid_settings) when rate is not finite and > 0.
Motion resample(const Motion& motion, double rate);

/// The motion's poses at fractional frames `frames` (each in [0, frame_count - 1]), as a motion
/// at `rate`: rotations by slerp, translations and scales linearly between the two frames around
/// each position (a position within 1e-9 of a frame copies it exactly). Lossy. Throws
/// Error(invalid_settings) for a bad rate, an empty list or a frame outside the range. resample()
/// and timing's re-timing are both this function with different frame positions.
Motion sample_at_frames(const Motion& motion, std::span<const double> frames, double rate);

/// Frames [begin, end) of the motion (end exclusive). Lossless. Throws Error(invalid_settings)
/// naming the range when it is empty or outside 0 .. frame_count.
Motion cut(const Motion& motion, int begin, int end);

}  // namespace koma
