#include "koma/gait/adverb.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

using test_util::sample_walk;

struct Pair {
  Gait neutral = analyze_gait(sample_walk());
  Gait styled = analyze_gait(sample_walk(6, 2.0));  // arms swing twice as far
};

const Pair& pair() {
  static const Pair p;
  return p;
}

void expect_same_gait(const Gait& a, const Gait& b, double tol) {
  EXPECT_LE((a.coefficients - b.coefficients).cwiseAbs().maxCoeff(), tol);
  EXPECT_NEAR(a.basis.period, b.basis.period, tol);
  for (size_t j = 0; j < a.basis.mean_rotations.size(); ++j)
    EXPECT_QUAT_NEAR(a.basis.mean_rotations[j], b.basis.mean_rotations[j], tol);
  // Same poses at every relative phase.
  for (double phi : {0.0, 1.0, 2.5, 4.0}) {
    const Eigen::VectorXd xa = evaluate(a, phi), xb = evaluate(b, phi);
    for (int j = 0; j < a.basis.skeleton.joint_count(); ++j)
      EXPECT_QUAT_NEAR(joint_rotation(a.basis, j, xa.segment<3>(joint_channel(j, 0))),
                       joint_rotation(b.basis, j, xb.segment<3>(joint_channel(j, 0))), 10 * tol);
  }
}

TEST(Adverb, AlphaZeroReturnsTheInput) {
  const Adverb adv = make_adverb(pair().neutral, pair().styled);
  const WeightedAdverb w{adv, 0.0, "arms"};
  const Gait out = apply_adverbs(pair().neutral, std::span(&w, 1));
  EXPECT_EQ(out.coefficients, pair().neutral.coefficients);
  EXPECT_EQ(out.basis.period, pair().neutral.basis.period);
  expect_same_gait(out, pair().neutral, 0.0);
}

TEST(Adverb, NeutralPlusDifferenceIsTheStyledGait) {
  const Adverb adv = make_adverb(pair().neutral, pair().styled);
  const WeightedAdverb w{adv, 1.0, "arms"};
  expect_same_gait(apply_adverbs(pair().neutral, std::span(&w, 1)), pair().styled, 1e-9);
  // The adverb is not empty: the arm swing changed.
  EXPECT_GT(adv.delta.cwiseAbs().maxCoeff(), 0.1);
}

TEST(Adverb, WeightsCombineLinearlyAndExtrapolate) {
  const Adverb arms = make_adverb(pair().neutral, pair().styled);
  const Adverb back = make_adverb(pair().styled, pair().neutral);
  const std::vector<WeightedAdverb> ws{{arms, 1.5, "arms"}, {back, 0.25, "back"}};
  const Gait out = apply_adverbs(pair().neutral, ws);
  // 1.5 * d - 0.25 * d = 1.25 * d
  const Eigen::MatrixXcd expect = pair().neutral.coefficients + 1.25 * arms.delta;
  EXPECT_LT((out.coefficients - expect).cwiseAbs().maxCoeff(), 1e-12);
  // "Very": alpha 2 swings the arms about three times as far as neutral (styled is twice).
  const WeightedAdverb very{arms, 2.0, "arms"};
  const Gait v = apply_adverbs(pair().neutral, std::span(&very, 1));
  const int arm = joint_channel(5, 0);  // LeftArm x: the swing axis
  const double a0 = std::abs(pair().neutral.coefficients(arm, 1)), a2 = std::abs(v.coefficients(arm, 1));
  EXPECT_NEAR(a2 / a0, 3.0, 0.1);
}

TEST(Adverb, BlendEndsAreTheGaits) {
  expect_same_gait(blend_gaits(pair().neutral, pair().styled, 0.0), pair().neutral, 0.0);
  expect_same_gait(blend_gaits(pair().neutral, pair().styled, 1.0), pair().styled, 1e-9);
  const Gait mid = blend_gaits(pair().neutral, pair().styled, 0.5);
  EXPECT_NEAR(coefficient_distance(mid, pair().neutral), coefficient_distance(mid, pair().styled), 1e-3);
}

TEST(Error, AdverbAlphaNotFinite) {
  const Adverb adv = make_adverb(pair().neutral, pair().styled);
  for (double alpha : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
    const WeightedAdverb w{adv, alpha, "happy.adverb.json"};
    try {
      apply_adverbs(pair().neutral, std::span(&w, 1));
      FAIL() << alpha;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_NE(e.context().find("happy.adverb.json"), std::string::npos);
    }
  }
}

TEST(Error, AdverbMismatchedSkeletonsNameTheJoint) {
  Gait other = pair().styled;
  other.basis.skeleton.names[12] = "LeftShin";
  try {
    make_adverb(pair().neutral, other);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("LeftLeg"), std::string::npos) << e.what();
  }
  // Applying an adverb to a gait of another topology fails the same way.
  const WeightedAdverb w{make_adverb(pair().neutral, pair().styled), 1.0, "arms"};
  Gait in = pair().neutral;
  in.basis.skeleton.parents[12] = 0;
  try {
    apply_adverbs(in, std::span(&w, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("LeftLeg"), std::string::npos) << e.what();
  }
  // Different channel kinds are mismatches too.
  CycleSettings euler;
  euler.angles = AngleMode::euler;
  EXPECT_THROW(make_adverb(pair().neutral, analyze_gait(sample_walk(), euler)), Error);
}

// Spectra of different (per-channel) K combine: a harmonic one keeps and the other does not is zero
// in the other, so styled - neutral, and neutral + 1 * that, are well defined and exact.
TEST(Adverb, DifferentHarmonicCountsArePaddedWithZeros) {
  const FourierSettings k3 = test_util::fixed_k(3), k8 = test_util::fixed_k(8);
  const Gait n3 = analyze_gait(sample_walk(), {}, k3);
  const Gait s8 = analyze_gait(sample_walk(6, 2.0), {}, k8);
  const Gait s_auto = analyze_gait(sample_walk(6, 2.0));  // per-channel K
  for (const Gait* styled : {&s8, &s_auto}) {
    const Adverb a = make_adverb(n3, *styled);
    EXPECT_EQ(a.harmonics, std::max(3, styled->harmonics));
    EXPECT_NO_THROW(a.validate());
    const WeightedAdverb w{a, 1.0, "pad"};
    const Gait out = apply_adverbs(n3, std::span(&w, 1));
    EXPECT_NO_THROW(out.validate());
    EXPECT_EQ(out.harmonics, a.harmonics);
    EXPECT_LT(coefficient_distance(out, *styled), 1e-12);
    // The other way round: an adverb of fewer harmonics on a gait of more.
    const Adverb back = make_adverb(*styled, n3);
    const WeightedAdverb wb{back, 1.0, "back"};
    EXPECT_LT(coefficient_distance(apply_adverbs(*styled, std::span(&wb, 1)), n3), 1e-12);
  }
  // The distance counts the missing harmonics as zeros: symmetric, and 0 only for equal spectra.
  EXPECT_NEAR(coefficient_distance(n3, s8), coefficient_distance(s8, n3), 1e-15);
  EXPECT_GT(coefficient_distance(analyze_gait(sample_walk(), {}, k8), n3), 0.0);
  EXPECT_NO_THROW(blend_gaits(n3, s8, 0.5).validate());
}

}  // namespace
}  // namespace koma::gait
