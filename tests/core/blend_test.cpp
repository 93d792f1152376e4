#include "koma/core/blend.hpp"

#include <gtest/gtest.h>

namespace koma {
namespace {

TEST(Blend, SmoothstepEndpointsAndClamping) {
  EXPECT_EQ(smoothstep(0.0), 0.0);
  EXPECT_EQ(smoothstep(1.0), 1.0);
  EXPECT_EQ(smoothstep(0.5), 0.5);
  EXPECT_EQ(smoothstep(-3.0), 0.0);
  EXPECT_EQ(smoothstep(7.0), 1.0);
  static_assert(smoothstep(1.0) == 1.0);
}

TEST(Blend, SmoothstepIsMonotoneAndFlatAtTheEnds) {
  double prev = smoothstep(0.0);
  for (int i = 1; i <= 1000; ++i) {
    const double v = smoothstep(i / 1000.0);
    EXPECT_GE(v, prev) << i;
    prev = v;
  }
  // Zero slope at both ends, 1.5 in the middle.
  const double h = 1e-6;
  EXPECT_NEAR((smoothstep(h) - smoothstep(0.0)) / h, 0.0, 1e-5);
  EXPECT_NEAR((smoothstep(1.0) - smoothstep(1.0 - h)) / h, 0.0, 1e-5);
  EXPECT_NEAR((smoothstep(0.5 + h) - smoothstep(0.5 - h)) / (2 * h), 1.5, 1e-6);
}

TEST(Blend, SmoothstepBetweenEdges) {
  EXPECT_EQ(smoothstep(2.0, 4.0, 2.0), 0.0);
  EXPECT_EQ(smoothstep(2.0, 4.0, 4.0), 1.0);
  EXPECT_EQ(smoothstep(2.0, 4.0, 3.0), 0.5);
  EXPECT_EQ(smoothstep(2.0, 4.0, 1.0), 0.0);
  // Reversed edges fall from 1 to 0.
  EXPECT_EQ(smoothstep(4.0, 2.0, 4.0), 0.0);
  EXPECT_EQ(smoothstep(4.0, 2.0, 2.0), 1.0);
}

}  // namespace
}  // namespace koma
