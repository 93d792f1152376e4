#include "koma/body/lowpass.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace koma::body {
namespace {

TEST(Lowpass, KeepsRampsAndIsZeroPhase) {
  std::vector<Vec3> ramp, sine;
  for (int i = 0; i < 200; ++i) {
    ramp.emplace_back(0.5 * i - 3, -0.25 * i, 7.0);
    sine.emplace_back(std::sin(2 * kPi * 1.0 * i / 120.0), 0, 0);  // 1 Hz at 120 fps
  }
  const auto r = lowpass_zero_phase(ramp, 120, 6);
  for (int i = 0; i < 200; ++i) EXPECT_VEC3_NEAR(r[i], ramp[i], 1e-9);
  const auto s = lowpass_zero_phase(sine, 120, 6);
  // Gain at 1 Hz with a 6 Hz -3 dB cut-off: exp(-2 pi^2 sigma^2 f^2) = 2^(-(1/6)^2 / 2).
  const double gain = std::pow(2.0, -1.0 / 72.0);
  for (int i = 40; i < 160; ++i) EXPECT_NEAR(s[i].x(), gain * sine[i].x(), 2e-4) << i;
}

}  // namespace
}  // namespace koma::body
