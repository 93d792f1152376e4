#include "koma/core/quat_sign.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "test_support.hpp"

namespace koma {
namespace {

// Unit quaternions spread around one rotation (angles up to about 1 rad away), random signs.
std::vector<Quat> cluster(std::mt19937& rng, int count) {
  std::normal_distribution<double> n(0.0, 0.3);
  std::uniform_int_distribution<int> coin(0, 1);
  const Quat centre = Quat(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()));
  std::vector<Quat> qs;
  for (int i = 0; i < count; ++i) {
    Quat q = (centre * quat_exp(Vec3(n(rng), n(rng), n(rng)))).normalized();
    if (coin(rng)) q.coeffs() = -q.coeffs();
    qs.push_back(q);
  }
  return qs;
}

TEST(QuatSign, MeanOfNegatedRotationsIsTheSameRotation) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Quat> qs = cluster(rng, 1 + trial % 17);
    const Quat mean = sign_aligned_mean(qs);
    // Negate every rotation, then a random subset: the mean is the same rotation.
    std::vector<Quat> neg = qs;
    for (Quat& q : neg) q.coeffs() = -q.coeffs();
    EXPECT_QUAT_NEAR(sign_aligned_mean(neg), mean, 1e-12);
    std::uniform_int_distribution<int> coin(0, 1);
    for (Quat& q : neg)
      if (coin(rng)) q.coeffs() = -q.coeffs();
    EXPECT_QUAT_NEAR(sign_aligned_mean(neg), mean, 1e-12);
    EXPECT_NEAR(mean.norm(), 1.0, 1e-12);
  }
}

TEST(QuatSign, MeanOfOneRotationIsItselfAndOfNoneIsIdentity) {
  const Quat q = Quat(Eigen::AngleAxisd(1.2, Vec3::UnitY()));
  EXPECT_QUAT_NEAR(sign_aligned_mean(std::vector<Quat>{q}), q, 1e-15);
  EXPECT_QUAT_NEAR(sign_aligned_mean(std::vector<Quat>{q, Quat(-q.coeffs())}), q, 1e-15);
  EXPECT_QUAT_NEAR(sign_aligned_mean(std::span<const Quat>{}), Quat::Identity(), 0.0);
}

TEST(QuatSign, MeanOfSymmetricPairIsTheMidpoint) {
  const Vec3 axis = Vec3(0, 0, 1);
  const std::vector<Quat> qs = {Quat(Eigen::AngleAxisd(-0.4, axis)), Quat(Eigen::AngleAxisd(0.4, axis))};
  EXPECT_QUAT_NEAR(sign_aligned_mean(qs), Quat::Identity(), 1e-12);
}

TEST(QuatSign, MotionMeanMatchesSpanMeanOverTheRange) {
  std::mt19937 rng(3);
  Motion m;
  m.skeleton.names = {"a", "b"};
  m.skeleton.parents = {-1, 0};
  m.frame_count = 12;
  const std::vector<Quat> qs = cluster(rng, 2 * m.frame_count);
  m.rotations = qs;
  std::vector<Quat> joint1;
  for (int f = 3; f < 9; ++f) joint1.push_back(qs[static_cast<size_t>(f) * 2 + 1]);
  EXPECT_EQ(sign_aligned_mean(m, 1, 3, 9).coeffs(), sign_aligned_mean(joint1).coeffs());
  std::vector<Quat> all1;
  for (int f = 0; f < m.frame_count; ++f) all1.push_back(qs[static_cast<size_t>(f) * 2 + 1]);
  EXPECT_EQ(sign_aligned_mean(m, 1).coeffs(), sign_aligned_mean(all1).coeffs());
}

TEST(QuatSign, SignContinuityMakesConsecutiveDotsNonNegative) {
  std::mt19937 rng(11);
  std::vector<Quat> qs = cluster(rng, 200);
  const std::vector<Quat> before = qs;
  make_sign_continuous(qs);
  for (size_t i = 1; i < qs.size(); ++i) EXPECT_GE(qs[i].dot(qs[i - 1]), 0.0) << i;
  // The same rotations: each element is q or -q, and the first is untouched.
  EXPECT_EQ(qs[0].coeffs(), before[0].coeffs());
  for (size_t i = 0; i < qs.size(); ++i) EXPECT_QUAT_NEAR(qs[i], before[i], 1e-15);
}

TEST(QuatSign, SignContinuityWithAStrideTouchesOnlyThatJoint) {
  std::mt19937 rng(5);
  const int frames = 40, joints = 3;
  std::vector<Quat> qs = cluster(rng, frames * joints);
  const std::vector<Quat> before = qs;
  make_sign_continuous(std::span<Quat>(qs).subspan(1), joints);
  for (int f = 0; f < frames; ++f) {
    for (int j = 0; j < joints; ++j) {
      const size_t i = static_cast<size_t>(f) * joints + j;
      if (j != 1) {
        EXPECT_EQ(qs[i].coeffs(), before[i].coeffs());
      } else if (f > 0) {
        EXPECT_GE(qs[i].dot(qs[i - joints]), 0.0);
      }
    }
  }
}

TEST(QuatSign, AlignSignPicksTheHemisphereOfTheReference) {
  std::mt19937 rng(2);
  const std::vector<Quat> qs = cluster(rng, 50);
  for (size_t i = 1; i < qs.size(); ++i) {
    const Quat a = align_sign(qs[i], qs[0]);
    EXPECT_GE(a.dot(qs[0]), 0.0);
    EXPECT_QUAT_NEAR(a, qs[i], 1e-15);
  }
}

}  // namespace
}  // namespace koma
