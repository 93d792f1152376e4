#include "koma/core/resample.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

TEST(Resample, SameRateIsIdentity) {
  const Motion m = make_sample_motion();
  const Motion r = resample(m, m.frame_rate);
  ASSERT_EQ(r.frame_count, m.frame_count);
  for (size_t i = 0; i < m.rotations.size(); ++i) {
    EXPECT_EQ(r.rotations[i].coeffs(), m.rotations[i].coeffs());
    EXPECT_EQ(r.translations[i], m.translations[i]);
  }
}

TEST(Resample, FrameCountsOfCommonConversions) {
  EXPECT_EQ(resampled_frame_count(121, 120, 24), 25);
  EXPECT_EQ(resampled_frame_count(31, 30, 24), 25);
  EXPECT_EQ(resampled_frame_count(25, 24, 60), 61);
  EXPECT_EQ(resampled_frame_count(1, 120, 24), 1);
}

TEST(Resample, EndpointsKeptAndRotationsStayUnit) {
  for (double rate : {24.0, 30.0, 60.0, 120.0, 23.976}) {
    const Motion m = make_sample_motion(SampleSettings{.frame_rate = 120.0});
    const Motion r = resample(m, rate);
    r.validate();
    for (int j = 0; j < m.joint_count(); ++j) {
      EXPECT_QUAT_NEAR(r.rotation(0, j), m.rotation(0, j), 1e-12);
      EXPECT_VEC3_NEAR(r.translation(0, j), m.translation(0, j), 1e-12);
    }
    // 4 s at 120 fps: the last frame (t = 4 s) is a sample of every rate that divides it.
    if (rate == std::round(rate)) {
      EXPECT_NEAR(r.time(r.frame_count - 1), m.time(m.frame_count - 1), 1e-9) << rate;
      for (int j = 0; j < m.joint_count(); ++j) {
        EXPECT_QUAT_NEAR(r.rotation(r.frame_count - 1, j), m.rotation(m.frame_count - 1, j), 1e-9);
      }
    }
    for (const Quat& q : r.rotations) EXPECT_NEAR(q.norm(), 1.0, 1e-12);
  }
}

TEST(Resample, ConstantSpeedStaysConstant) {
  Skeleton s;
  s.names = {"root"};
  s.parents = {-1};
  s.offsets = {Vec3::Zero()};
  s.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation,
                 Channel::Xrotation, Channel::Yrotation}};
  Motion m = rest_motion(s, 120, 241);
  for (int f = 0; f < m.frame_count; ++f) {
    m.translations[f] = Vec3(0.01 * f, 0, 0);  // 1.2 m/s
    m.rotations[f] = euler_to_quat(Vec3(0, 0.005 * f, 0), EulerOrder::XYZ);  // 0.6 rad/s
  }
  const Motion r = resample(m, 24);
  ASSERT_EQ(r.frame_count, 49);
  for (int f = 1; f < r.frame_count; ++f) {
    EXPECT_NEAR((r.translations[f] - r.translations[f - 1]).norm(), 1.2 / 24, 1e-12);
    EXPECT_NEAR(test::rotation_angle(r.rotations[f], r.rotations[f - 1]), 0.6 / 24, 1e-9);
  }
  // Upsampling interpolates between samples at the same constant speed.
  const Motion up = resample(cut(m, 0, 13), 300);
  for (int f = 1; f < up.frame_count; ++f) {
    EXPECT_NEAR((up.translations[f] - up.translations[f - 1]).norm(), 1.2 / 300, 1e-12);
  }
}

TEST(Resample, RejectsBadRate) {
  const Motion m = make_sample_motion();
  EXPECT_THROW(resample(m, 0), Error);
  EXPECT_THROW(resample(m, -24), Error);
  EXPECT_THROW(resample(m, NAN), Error);
}

TEST(Cut, KeepsFramesAndRejectsBadRanges) {
  const Motion m = make_sample_motion();
  const Motion c = cut(m, 10, 20);
  ASSERT_EQ(c.frame_count, 10);
  EXPECT_EQ(c.rotation(0, 3).coeffs(), m.rotation(10, 3).coeffs());
  EXPECT_THROW(cut(m, 5, 5), Error);
  EXPECT_THROW(cut(m, -1, 5), Error);
  EXPECT_THROW(cut(m, 0, m.frame_count + 1), Error);
}

}  // namespace
}  // namespace koma
