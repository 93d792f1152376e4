#include "koma/gait/fourier.hpp"

#include <gtest/gtest.h>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

using test_util::driven_motion;
using test_util::sample_walk;

// x(t) = A cos(w t + p1) + B cos(2 w t + p2) on LeftUpLeg (the reference) and a copy delayed by a
// quarter cycle on RightUpLeg; 60 frames per cycle so the cycle samples fall on frames.
Motion two_harmonics(double shift_s) {
  return driven_motion(600, 60.0, [shift_s](int j, double t) {
    const double w = 2 * kPi, u = t + shift_s;
    if (j == 11) return 0.4 * std::cos(w * u + 0.3) + 0.1 * std::cos(2 * w * u - 1.0);
    if (j == 15) return 0.2 * std::cos(w * (u - 0.25) + 0.3);
    return 0.0;
  });
}

CycleSettings exact_sampling() {
  CycleSettings s;
  s.samples = 60;
  return s;
}

TEST(Fourier, AmplitudesAndRelativePhasesOfKnownHarmonics) {
  const Gait g = analyze_gait(two_harmonics(0.0), exact_sampling(), test_util::fixed_k(5));
  EXPECT_NEAR(g.basis.period, 1.0, 1e-3);
  const int ref = joint_channel(11, 0);  // LeftUpLeg x
  ASSERT_EQ(g.reference_channel, ref);
  EXPECT_NEAR(std::abs(g.coefficients(ref, 1)), 0.4, 2e-3);
  EXPECT_NEAR(std::arg(g.coefficients(ref, 1)), 0.0, 1e-12);  // phase 0 by definition
  EXPECT_NEAR(std::abs(g.coefficients(ref, 2)), 0.1, 2e-3);
  // Relative phase of harmonic 2: -1.0 - 2 * 0.3.
  EXPECT_NEAR(std::remainder(std::arg(g.coefficients(ref, 2)) - (-1.0 - 0.6), 2 * kPi), 0.0, 0.02);
  // The right thigh lags a quarter cycle: relative phase -pi/2.
  const int right = joint_channel(15, 0);
  EXPECT_NEAR(std::abs(g.coefficients(right, 1)), 0.2, 2e-3);
  EXPECT_NEAR(std::remainder(std::arg(g.coefficients(right, 1)) + kPi / 2, 2 * kPi), 0.0, 0.02);
  EXPECT_NEAR(std::abs(g.coefficients(right, 3)), 0.0, 2e-3);
}

// Per-channel K (the default): each channel keeps the fewest harmonics within the tolerance, a
// joint at least those of the joints below it, the root channels those of the root joint.
TEST(Fourier, PerChannelHarmonicsAreTheFewestWithinTolerance) {
  const GaitCycle c = extract_cycle(two_harmonics(0.0), exact_sampling());
  const Gait g = fourier_analyze(c);
  ASSERT_NO_THROW(g.validate());
  ASSERT_EQ(static_cast<int>(g.channel_harmonics.size()), g.basis.channel_count());
  const Skeleton& sk = g.basis.skeleton;
  EXPECT_EQ(g.channel_harmonics[joint_channel(11, 0)], 2);  // LeftUpLeg: two harmonics, exactly
  EXPECT_EQ(g.channel_harmonics[joint_channel(15, 0)], 1);  // RightUpLeg: one
  EXPECT_EQ(g.harmonics, 2);
  const ReconstructionError e = reconstruction_error(c, g);
  EXPECT_LT(e.worst_rms, 1e-9);
  for (int j = 0; j < sk.joint_count(); ++j) {
    const int p = sk.parents[j];
    for (int a = 0; a < 3 && p >= 0; ++a)
      EXPECT_GE(channel_harmonic_count(g, joint_channel(p, 0)), channel_harmonic_count(g, joint_channel(j, a))) << sk.names[j];
  }
  for (int r = 0; r < kRootChannels; ++r)
    EXPECT_GE(g.channel_harmonics[r], g.channel_harmonics[joint_channel(g.basis.root_joint, 0)]);
  // On the sample walk: every joint within the tolerance, and channel_energy_above() is the
  // channel-space residual of those K_c.
  const GaitCycle w = extract_cycle(sample_walk());
  const Gait gw = fourier_analyze(w);
  const ReconstructionError ew = reconstruction_error(w, gw);
  EXPECT_LE(ew.worst_rms, FourierSettings{}.tolerance);
  const std::vector<double> above = channel_energy_above(w, gw.channel_harmonics);
  for (int j = 0; j < gw.basis.skeleton.joint_count(); ++j) {
    const double channels = std::hypot(above[joint_channel(j, 0)], above[joint_channel(j, 1)], above[joint_channel(j, 2)]);
    EXPECT_NEAR(ew.joint_rms[j], channels, 0.05 * channels + 1e-6) << gw.basis.skeleton.names[j];
  }
  // A tighter tolerance keeps more; a fixed K is the old behaviour.
  FourierSettings tight;
  tight.tolerance = 0.1 * kDegToRad;
  EXPECT_GE(fourier_analyze(w, tight).harmonics, gw.harmonics);
  const Gait k5 = fourier_analyze(w, test_util::fixed_k(5));
  EXPECT_EQ(k5.harmonics, 5);
  for (int k : k5.channel_harmonics) EXPECT_EQ(k, 5);
}

TEST(Fourier, TimeShiftLeavesRelativePhasesUnchanged) {
  const Gait a = analyze_gait(two_harmonics(0.0), exact_sampling());
  for (double tau : {0.13, 0.377, 0.81}) {
    const Gait b = analyze_gait(two_harmonics(tau), exact_sampling());
    EXPECT_GT(std::abs(std::remainder(b.reference_phase - a.reference_phase, 2 * kPi)), 0.1);  // it was shifted
    for (Eigen::Index r = 0; r < a.coefficients.rows(); ++r)
      for (int k = 0; k <= a.harmonics; ++k)
        EXPECT_LT(std::abs(a.coefficients(r, k) - b.coefficients(r, k)), 2e-3) << "row " << r << " k " << k;
  }
}

TEST(Fourier, TimeShiftInvarianceOnTheSampleWalk) {
  const Motion walk = sample_walk(7);
  // K = 5 on every channel: a sub-frame timing difference moves harmonic k's phase k times as far,
  // so the bar below is for the first five.
  const FourierSettings k5 = test_util::fixed_k(5);
  const Gait a = analyze_gait(cut(walk, 0, walk.frame_count - 30), {}, k5);
  for (int shift : {7, 23, 30}) {
    const Gait b = analyze_gait(cut(walk, shift, walk.frame_count - 30 + shift), {}, k5);
    for (Eigen::Index r = kRootChannels; r < a.coefficients.rows(); ++r)
      for (int k = 1; k <= a.harmonics; ++k) {
        const std::complex<double> ca = a.coefficients(r, k), cb = b.coefficients(r, k);
        if (std::abs(ca) < 0.01) continue;  // phase of a vanishing harmonic means nothing
        EXPECT_NEAR(std::abs(cb), std::abs(ca), 2e-3);
        EXPECT_NEAR(std::remainder(std::arg(cb) - std::arg(ca), 2 * kPi), 0.0, 0.03)
            << "shift " << shift << " row " << r << " k " << k;
      }
  }
}

TEST(Fourier, ReconstructionOfTheSampleWalk) {
  const GaitCycle c = extract_cycle(sample_walk());
  const Gait g5 = fourier_analyze(c);
  const ReconstructionError e5 = reconstruction_error(c, g5);
  EXPECT_EQ(static_cast<int>(e5.joint_rms.size()), c.basis.skeleton.joint_count());
  // More harmonics never reconstruct worse, and K = samples / 2 - 1 is close to exact.
  FourierSettings s;
  s.harmonics = 31;
  const ReconstructionError e31 = reconstruction_error(c, fourier_analyze(c, s));
  for (size_t j = 0; j < e5.joint_rms.size(); ++j) EXPECT_LE(e31.joint_rms[j], e5.joint_rms[j] + 1e-12);
  EXPECT_LT(e31.worst_rms, 0.3 * kDegToRad);
  EXPECT_LT(e5.worst_rms, 1.5 * kDegToRad);  // the sample knee has a kink at toe-off
  // The reconstructed cycle at the analysed phases lines up with the cycle samples.
  const Eigen::MatrixXd rec = reconstruct_cycle(fourier_analyze(c, s), 64);
  EXPECT_LT((rec - c.samples).cwiseAbs().maxCoeff(), 0.02);
}

TEST(Fourier, EulerModeReconstructs) {
  CycleSettings cs;
  cs.angles = AngleMode::euler;
  const GaitCycle c = extract_cycle(sample_walk(), cs);
  const ReconstructionError e = reconstruction_error(c, fourier_analyze(c));
  EXPECT_LT(e.worst_rms, 1.5 * kDegToRad);
  // The Euler DC is the mean posture: the head's mean x angle is about -0.05 rad (sample.cpp).
  EXPECT_NEAR(fourier_analyze(c).coefficients(joint_channel(4, 1), 0).real(), -0.05, 1e-3);
}

TEST(Fourier, DistanceIsAMetricOnGaits) {
  const Gait a = analyze_gait(sample_walk());
  const Gait b = analyze_gait(sample_walk(6, 2.0));
  EXPECT_EQ(coefficient_distance(a, a), 0.0);
  EXPECT_GT(coefficient_distance(a, b), 0.05);
  EXPECT_NEAR(coefficient_distance(a, b), coefficient_distance(b, a), 1e-9);
}

TEST(Error, FourierSettingsAndMismatch) {
  const GaitCycle c = extract_cycle(sample_walk(3));
  FourierSettings s;
  s.harmonics = 32;  // 64 samples hold at most 31
  EXPECT_THROW(fourier_analyze(c, s), Error);
  s.harmonics = -1;
  EXPECT_THROW(fourier_analyze(c, s), Error);
  for (auto field : {&FourierSettings::tolerance, &FourierSettings::height_tolerance, &FourierSettings::speed_tolerance}) {
    s = {};
    s.*field = 0.0;
    EXPECT_THROW(fourier_analyze(c, s), Error);
    s.*field = std::nan("");
    EXPECT_THROW(fourier_analyze(c, s), Error);
  }
  s = {};
  s.max_harmonics = 0;
  try {
    fourier_analyze(c, s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_EQ(e.context(), "max_harmonics");
  }
  s = {};
  s.reference_joint = "Tail";
  try {
    fourier_analyze(c, s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
  }
  // Distance between gaits of different topologies names the first mismatched joint.
  const Gait a = fourier_analyze(c);
  Gait b = a;
  b.basis.skeleton.names[7] = "LeftPaw";
  try {
    coefficient_distance(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("LeftHand"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::gait
