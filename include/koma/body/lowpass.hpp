// The zero-phase low-pass koma smooths world positions with before differentiating them (contact
// detection, key times, squash and stretch).
#pragma once

#include <span>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::body {

/// Zero-phase Gaussian low-pass of a track sampled at `frame_rate` with -3 dB cut-off `cutoff_hz`
/// (sigma = sqrt(ln 2) / (2 pi cutoff) seconds, kernel truncated at +-3 sigma). Ends are extended
/// linearly (a ramp passes unchanged). Returns the input unchanged when cutoff_hz <= 0 or the
/// kernel is under one frame wide. Throws nothing.
std::vector<Vec3> lowpass_zero_phase(std::span<const Vec3> track, double frame_rate, double cutoff_hz);

}  // namespace koma::body
