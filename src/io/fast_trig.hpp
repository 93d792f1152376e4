// Sine and cosine together for moderate arguments, accurate to a few ulp, written so the compiler
// can vectorise a loop over a row of BVH angles (glibc's scalar sin/cos dominated parsing time).
// Private to the io module.
#pragma once

#include <cmath>
#include <cstdint>

namespace koma::io::detail {

/// sin(x) and cos(x) for |x| < 1e5 radians (BVH half-angles are a few radians at most).
/// Cody-Waite reduction by pi/2 in three parts, then Taylor polynomials on |r| <= pi/4, where the
/// first omitted terms (r^17/17!, r^18/18!) are below 1e-16.
[[gnu::always_inline]] inline void sincos_moderate(double x, double& s, double& c) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  constexpr double kP1 = 1.5707963267341256141;   // pi/2, first 33 bits
  constexpr double kP2 = 6.0771005065061922e-11;  // next bits
  constexpr double kP3 = 2.0222662487959506e-21;  // remainder
  // Round to nearest by truncation of x*2/pi +- 0.5: an inline conversion, unlike nearbyint/floor
  // which are library calls on baseline x86-64.
  const double t = x * kTwoOverPi;
  const double k = static_cast<double>(static_cast<std::int64_t>(t + (t >= 0 ? 0.5 : -0.5)));
  double r = x - k * kP1;
  r -= k * kP2;
  r -= k * kP3;
  const double r2 = r * r;
  const double sr =
      r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 +
      r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800 + r2 * (-1.0 / 1307674368000.0))))))));
  const double cr =
      1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (-1.0 / 3628800 +
      r2 * (1.0 / 479001600 + r2 * (-1.0 / 87178291200.0 + r2 * (1.0 / 20922789888000.0))))))));
  const auto q = static_cast<std::int64_t>(k) & 3;
  const double ss = (q & 1) ? cr : sr;
  const double cc = (q & 1) ? sr : cr;
  s = (q & 2) ? -ss : ss;
  c = ((q + 1) & 2) ? -cc : cc;
}

}  // namespace koma::io::detail
