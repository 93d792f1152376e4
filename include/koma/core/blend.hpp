// Smooth blends shared by every module: the one smoothstep.
#pragma once

#include <algorithm>

namespace koma {

/// Smoothstep 3x^2 - 2x^3 of x clamped to [0, 1]: 0 for x <= 0, 1 for x >= 1, increasing, with
/// zero slope at both ends (steepest slope 1.5, at x = 0.5).
constexpr double smoothstep(double x) noexcept {
  x = std::clamp(x, 0.0, 1.0);
  return x * x * (3 - 2 * x);
}

/// Smoothstep of (x - edge0) / (edge1 - edge0): 0 at edge0, 1 at edge1 (edge0 != edge1).
constexpr double smoothstep(double edge0, double edge1, double x) noexcept {
  return smoothstep((x - edge0) / (edge1 - edge0));
}

}  // namespace koma
