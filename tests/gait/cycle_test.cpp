#include "koma/gait/cycle.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "gait_test_util.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

using test_util::driven_motion;
using test_util::sample_walk;

TEST(Cycle, PeriodOfTheSampleWalk) {
  const PeriodEstimate p = estimate_period(sample_walk());
  EXPECT_NEAR(p.period, 1.1, 0.5 / 60);  // half a frame
  EXPECT_GT(p.confidence, 0.95);
  EXPECT_LE(p.confidence, 1.0);
}

TEST(Cycle, PeriodFromOneHipAndInEulerMode) {
  CycleSettings s;
  s.period_joint = "LeftUpLeg";
  EXPECT_NEAR(estimate_period(sample_walk(), s).period, 1.1, 0.5 / 60);
  s.period_joint.clear();
  s.angles = AngleMode::euler;
  EXPECT_NEAR(estimate_period(sample_walk(), s).period, 1.1, 0.5 / 60);
}

TEST(Cycle, PeriodOfAnOddRateAndPeriod) {
  // 0.77 s period at 30 fps: 23.1 frames, so the sub-frame peak matters.
  const Motion m = driven_motion(300, 30.0, [](int j, double t) {
    return 0.3 * std::cos(2 * kPi * t / 0.77 + 0.1 * j) + 0.1 * std::sin(4 * kPi * t / 0.77);
  });
  EXPECT_NEAR(estimate_period(m).period, 0.77, 0.003);
}

TEST(Cycle, SampleWalkChannelsMatchTheWalk) {
  const Motion m = sample_walk();
  const GaitCycle c = extract_cycle(m);
  EXPECT_EQ(c.samples.rows(), c.basis.channel_count());
  EXPECT_EQ(c.samples.cols(), 64);
  EXPECT_EQ(c.basis.root_joint, 0);  // Hips carries the translation
  EXPECT_GE(c.basis.cycles_found, 5);
  EXPECT_EQ(c.basis.cycles_used, c.basis.cycles_found);  // a steady walk has no outliers
  EXPECT_NEAR(c.basis.forward.y(), 1.0, 1e-3);          // walks along +Z
  // Mean forward speed = distance / time of the walk; mean height = mean hips height.
  const double speed = (m.translation(m.frame_count - 1, 0).z() - m.translation(0, 0).z()) / m.duration();
  EXPECT_NEAR(c.samples.row(1).mean(), speed, 0.02 * speed);
  double height = 0;
  for (int f = 0; f < m.frame_count; ++f) height += m.translation(f, 0).y();
  EXPECT_NEAR(c.samples.row(0).mean(), height / m.frame_count, 1e-3);
  // Log maps are re-centred: every joint channel has (near) zero mean over the cycle.
  for (Eigen::Index r = kRootChannels; r < c.samples.rows(); ++r) EXPECT_NEAR(c.samples.row(r).mean(), 0.0, 1e-6);
  // The seam correction is no larger than the walk's own cycle-to-cycle difference.
  double repeat = 0;
  for (int f = 0; f + 66 < m.frame_count; ++f) repeat = std::max(repeat, test_util::pose_step(m, f, f + 66));
  EXPECT_LE(c.max_seam_correction, repeat + 1e-3);
}

TEST(Cycle, OutlierCycleIsLeftOut) {
  const Motion clean = sample_walk(8);
  Motion m = clean;
  // Throw the arms around during the third cycle (frames 132..197 at 66 frames per cycle).
  for (int f = 140; f < 190; ++f) {
    m.frame_rotations(f)[5] = Quat(Eigen::AngleAxisd(1.2, Vec3::UnitZ())) * m.rotation(f, 5);
    m.frame_rotations(f)[8] = Quat(Eigen::AngleAxisd(-1.2, Vec3::UnitZ())) * m.rotation(f, 8);
  }
  const GaitCycle a = extract_cycle(clean), b = extract_cycle(m);
  EXPECT_LT(b.basis.cycles_used, b.basis.cycles_found);
  EXPECT_GE(b.basis.cycles_used, b.basis.cycles_found - 2);
  // Without the outlier rejection the arm would be pulled far from the clean average.
  CycleSettings keep_all;
  keep_all.outlier_factor = 0;
  const GaitCycle c = extract_cycle(m, keep_all);
  EXPECT_EQ(c.basis.cycles_used, c.basis.cycles_found);
  const double kept_err = b.basis.mean_rotations[5].angularDistance(a.basis.mean_rotations[5]);
  const double all_err = c.basis.mean_rotations[5].angularDistance(a.basis.mean_rotations[5]);
  EXPECT_LT(kept_err, 0.01);
  EXPECT_GT(all_err, 5 * kept_err);
}

TEST(Cycle, PeriodFromFootContacts) {
  // The sample walk plants its feet: the contacts route (koma::timing's detector) finds the same
  // stride period as the autocorrelation, and its confidence is the autocorrelation there.
  CycleSettings s;
  s.period_method = PeriodMethod::contacts;
  const PeriodEstimate c = estimate_period(sample_walk(), s);
  EXPECT_EQ(c.method, PeriodMethod::contacts);
  EXPECT_NEAR(c.period, 1.1, 1.0 / 60);  // touch-downs are whole frames; averaged over strides
  EXPECT_GE(c.contacts, 8);              // 6 cycles, both feet
  EXPECT_GT(c.confidence, 0.9);
  s.period_method = PeriodMethod::autocorrelation;
  const PeriodEstimate a = estimate_period(sample_walk(), s);
  EXPECT_EQ(a.method, PeriodMethod::autocorrelation);
  EXPECT_EQ(a.contacts, 0);
  // Automatic keeps the (sub-frame) autocorrelation when both agree, and says so.
  const PeriodEstimate automatic = estimate_period(sample_walk());
  EXPECT_EQ(automatic.method, PeriodMethod::autocorrelation);
  EXPECT_DOUBLE_EQ(automatic.period, a.period);
  EXPECT_EQ(extract_cycle(sample_walk(), s).basis.period_method, PeriodMethod::autocorrelation);
}

TEST(Cycle, GivenFeetServeARigOfUnknownNames) {
  // The sample walk with its joints renamed j0, j1, ...: no foot is found by name, so the
  // contacts route fails; given the feet (by index), it finds the named walk's period.
  const Motion walk = sample_walk();
  Motion renamed = walk;
  for (size_t j = 0; j < renamed.skeleton.names.size(); ++j) renamed.skeleton.names[j] = std::string("j").append(std::to_string(j));
  CycleSettings s;
  s.period_method = PeriodMethod::contacts;
  const PeriodEstimate named = estimate_period(walk, s);
  EXPECT_THROW(estimate_period(renamed, s), Error);
  s.feet = body::foot_effectors(body::find_joint_roles(walk.skeleton));
  ASSERT_EQ(s.feet.size(), 2u);
  const PeriodEstimate given = estimate_period(renamed, s);
  EXPECT_EQ(given.contacts, named.contacts);
  EXPECT_DOUBLE_EQ(given.period, named.period);
  // A foot point past the skeleton is refused, naming the effector.
  s.feet[0].points = {renamed.skeleton.point_count() + 3};
  try {
    estimate_period(renamed, s);
    FAIL() << "an out-of-range foot must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(e.context().find("effector"), std::string::npos) << e.what();
  }
}

TEST(Cycle, AutomaticUsesContactsWhereTheAutocorrelationCannotSeeTheStride) {
  // 96 frames = 1.45 strides of 66 frames: the autocorrelation searches lags up to 2/3 of the clip
  // (64 frames), so it fails or finds a step; one foot touches down twice.
  const Motion clip = cut(sample_walk(), 0, 96);
  CycleSettings s;
  s.period_method = PeriodMethod::autocorrelation;
  double auto_only = 0;
  try {
    auto_only = estimate_period(clip, s).period;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
  EXPECT_GT(std::abs(auto_only - 1.1), 0.2) << "the autocorrelation alone should not find the stride here";
  const PeriodEstimate automatic = estimate_period(clip);
  EXPECT_EQ(automatic.method, PeriodMethod::contacts);
  EXPECT_NEAR(automatic.period, 1.1, 1.0 / 60);
  EXPECT_GT(automatic.confidence, 0.5);
}

TEST(Cycle, RotationJumpsAreReported) {
  Motion m = sample_walk();
  EXPECT_TRUE(extract_cycle(m).jumps.empty());
  // A 180 degree twist of one joint over frames 50..59 (a data glitch): reported at its start.
  const int joint = m.joint_count() - 1;
  for (int f = 50; f < 60; ++f)
    m.frame_rotations(f)[joint] = m.rotation(f, joint) * Quat(Eigen::AngleAxisd(kPi, Vec3::UnitZ()));
  const GaitCycle c = extract_cycle(m);
  ASSERT_EQ(c.jumps.size(), 1u);
  EXPECT_EQ(c.jumps[0].joint, joint);
  EXPECT_TRUE(c.jumps[0].frame == 50 || c.jumps[0].frame == 60) << c.jumps[0].frame;
  EXPECT_GT(c.jumps[0].angle, 2.5);
  // With six cycles, the one holding the glitch is left out of the average.
  EXPECT_EQ(c.basis.cycles_used, c.basis.cycles_found - 1);
}

TEST(Error, ContactsRouteOnAStillMotionNamesWhatItFound) {
  CycleSettings s;
  s.period_method = PeriodMethod::contacts;
  try {
    estimate_period(rest_motion(sample_skeleton(), 30, 200), s);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "period");
    EXPECT_NE(e.message().find("foot contacts"), std::string::npos) << e.message();
  }
}

TEST(Error, CycleNoStablePeriodNamesTheConfidence) {
  // A chirp (frequency rising over time) never repeats.
  const Motion m = driven_motion(400, 30.0, [](int j, double t) { return 0.4 * std::sin(0.3 * t * t * (1 + 0.05 * j)); });
  try {
    extract_cycle(m);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "period");
    EXPECT_TRUE(std::regex_search(e.message(), std::regex("confidence [0-9]\\.[0-9]+ is below min_confidence")))
        << e.message();
  }
}

TEST(Error, CycleTooShortOrStill) {
  EXPECT_THROW(extract_cycle(cut(sample_walk(), 0, 2)), Error);
  try {
    extract_cycle(cut(sample_walk(), 0, 20));  // 1/3 s: no period of >= 0.3 s can show twice
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
  // A motion that does not move has no period (confidence 0).
  const Motion still = rest_motion(sample_skeleton(), 30, 200);
  EXPECT_THROW(extract_cycle(still), Error);
}

TEST(Error, CycleSettings) {
  auto code = [](CycleSettings s) {
    try {
      extract_cycle(sample_walk(3), s);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::io;  // not thrown
  };
  CycleSettings s;
  s.samples = 4;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.max_period = 0.2;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.min_confidence = 1.5;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.outlier_factor = 0.5;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.period_joint = "NoSuchJoint";
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
}

}  // namespace
}  // namespace koma::gait
