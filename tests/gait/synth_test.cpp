#include "koma/gait/synth.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

using test_util::pose_step;
using test_util::sample_walk;

const Gait& walk_gait() {
  static const Gait g = analyze_gait(sample_walk());
  return g;
}

double median_step(const Motion& m) {
  std::vector<double> steps;
  for (int f = 0; f + 1 < m.frame_count; ++f) steps.push_back(pose_step(m, f, f + 1));
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
  return steps[steps.size() / 2];
}

SynthSettings settings(double seconds, double rate) {
  SynthSettings s;
  s.seconds = seconds;
  s.frame_rate = rate;
  return s;
}

TEST(Synth, LoopsWithoutASeam) {
  for (double rate : {24.0, 30.0, 60.0, 23.976}) {
    for (double seconds : {3.0, 10.0, 7.3}) {
      const Motion m = synthesize(walk_gait(), settings(seconds, rate));
      m.validate();
      EXPECT_EQ(m.frame_count, std::lround(seconds * rate));
      EXPECT_EQ(m.frame_rate, rate);
      const double seam = pose_step(m, m.frame_count - 1, 0);
      EXPECT_LE(seam, median_step(m)) << rate << " fps, " << seconds << " s";
      // Root height joins too.
      const double dy = std::abs(m.translation(m.frame_count - 1, 0).y() - m.translation(0, 0).y());
      double max_dy = 0;
      for (int f = 0; f + 1 < m.frame_count; ++f)
        max_dy = std::max(max_dy, std::abs(m.translation(f + 1, 0).y() - m.translation(f, 0).y()));
      EXPECT_LE(dy, max_dy + 1e-12);
    }
  }
  // In place, the root's horizontal position joins as well.
  SynthSettings s = settings(5.0, 30.0);
  s.in_place = true;
  const Motion m = synthesize(walk_gait(), s);
  double max_step = 0;
  for (int f = 0; f + 1 < m.frame_count; ++f)
    max_step = std::max(max_step, (m.translation(f + 1, 0) - m.translation(f, 0)).norm());
  EXPECT_LE((m.translation(m.frame_count - 1, 0) - m.translation(0, 0)).norm(), max_step);
}

TEST(Synth, ReanalysisReturnsTheGait) {
  SynthSettings s = settings(8.0, 60.0);
  s.loop = false;
  // One K on every channel: per-channel K would keep a different count of the tiny harmonics the
  // re-analysis finds above the synthesised ones.
  const FourierSettings k5 = test_util::fixed_k(5);
  const Gait walk = analyze_gait(sample_walk(), {}, k5);
  const Motion m = synthesize(walk, s);
  const Gait again = analyze_gait(m, {}, k5);
  EXPECT_NEAR(again.basis.period, walk.basis.period, 1e-3);
  EXPECT_LT(coefficient_distance(again, walk), 0.02 * coefficient_distance(walk, analyze_gait(sample_walk(6, 0.0), {}, k5)) + 0.01);
  EXPECT_NEAR(again.coefficients(1, 0).real(), walk.coefficients(1, 0).real(), 0.01);
}

double travel(const Motion& m) {
  return (m.translation(m.frame_count - 1, 0) - m.translation(0, 0)).norm();
}

TEST(Synth, RootTravelsInStepWithStrideAndSpeed) {
  SynthSettings s = settings(11.0, 60.0);  // exactly 10 cycles
  s.loop = false;
  const Motion base = synthesize(walk_gait(), s);
  const double d = travel(base);
  EXPECT_NEAR(d / 11.0, walk_gait().coefficients(1, 0).real(), 0.02);
  s.stride = 1.5;  // longer steps, same cadence: 1.5x the distance
  EXPECT_NEAR(travel(synthesize(walk_gait(), s)) / d, 1.5, 0.02);
  s.stride = 1.0;
  s.speed = 2.0;  // twice the cadence: twice the distance in the same time, cycle halves
  const Motion fast = synthesize(walk_gait(), s);
  EXPECT_NEAR(travel(fast) / d, 2.0, 0.03);
  EXPECT_NEAR(estimate_period(fast).period, walk_gait().basis.period / 2, 1.0 / 60);
  s.in_place = true;
  EXPECT_LT(travel(synthesize(walk_gait(), s)), 0.1);
}

TEST(Synth, HeadingIsNotPosture) {
  // The same walk turned 120 degrees about Y (joint 0, the root, rotated and moved): the gait is the
  // same (posture and spectrum heading-free), and synthesis walks in the turned direction.
  const Motion walk = sample_walk(4);
  Motion turned = walk;
  const Quat yaw(Eigen::AngleAxisd(2.0944, Vec3::UnitY()));
  for (int f = 0; f < turned.frame_count; ++f) {
    turned.frame_rotations(f)[0] = yaw * walk.rotation(f, 0);
    turned.frame_translations(f)[0] = yaw * walk.translation(f, 0);
  }
  const Gait a = analyze_gait(walk), b = analyze_gait(turned);
  EXPECT_LT(coefficient_distance(a, b), 1e-6);
  EXPECT_GT(std::abs(a.basis.forward.x() - b.basis.forward.x()), 0.5);  // the travel direction did turn
  SynthSettings s;
  s.seconds = 3;
  for (const Gait* g : {&a, &b}) {
    const Motion m = synthesize(*g, s);
    const WorldPoses w = forward_kinematics(m);
    const Vec3 d = w.position(m.frame_count - 1, 0) - w.position(0, 0);
    const Eigen::Vector2d travel = Eigen::Vector2d(d.x(), d.z()).normalized();
    EXPECT_GT(travel.dot(g->basis.forward), 0.99);
    // The figure faces where it goes: the synthesised root rotation equals the input's at the
    // same phase up to the analysis error, so compare the hips' world yaw with the input's mean.
    const Quat in_root = (g == &a ? walk : turned).rotation(0, 0);
    EXPECT_LT(in_root.angularDistance(m.rotation(0, 0)), 0.5);
  }
}

TEST(Synth, StrideScalesTheSwing) {
  SynthSettings s = settings(5.0, 60.0);
  const Motion a = synthesize(walk_gait(), s);
  s.stride = 1.5;
  const Motion b = synthesize(walk_gait(), s);
  // Hip flexion range of motion grows by the stride factor.
  auto range = [](const Motion& m) {
    double lo = 1e9, hi = -1e9;
    for (int f = 0; f < m.frame_count; ++f) {
      const double x = quat_to_euler(m.rotation(f, 11), EulerOrder::ZXY)[1];
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    return hi - lo;
  };
  EXPECT_NEAR(range(b) / range(a), 1.5, 0.05);
}

TEST(Synth, DrivesAnotherSkeletonOfTheSameTopology) {
  Skeleton big = walk_gait().basis.skeleton;
  std::vector<Vec3> bones = walk_gait().basis.bones;
  for (auto& o : big.offsets) o *= 1.3;
  for (auto& e : big.end_sites) e.offset *= 1.3;
  for (auto& b : bones) b *= 1.3;
  const Gait g = retarget(walk_gait(), big, bones);
  const Motion a = synthesize(walk_gait(), settings(3, 30)), b = synthesize(g, settings(3, 30));
  ASSERT_EQ(a.frame_count, b.frame_count);
  for (int f = 0; f < a.frame_count; ++f) {
    for (int j = 0; j < a.joint_count(); ++j) EXPECT_QUAT_NEAR(a.rotation(f, j), b.rotation(f, j), 1e-12);
    EXPECT_NEAR(b.translation(f, 0).y(), 1.3 * a.translation(f, 0).y(), 1e-9);  // root height scales
  }
  EXPECT_NEAR(travel(b) / travel(a), 1.3, 1e-6);
  // Feet stay on the ground level the small one had: lowest point scales with the body.
  const WorldPoses pa = forward_kinematics(a), pb = forward_kinematics(b);
  double la = 1e9, lb = 1e9;
  for (const Vec3& p : pa.positions) la = std::min(la, p.y());
  for (const Vec3& p : pb.positions) lb = std::min(lb, p.y());
  EXPECT_NEAR(lb, 1.3 * la, 1e-6);
}

TEST(Synth, TransitionBlendsOverAboutOneCycle) {
  const Gait swing = analyze_gait(sample_walk(6, 2.0));
  SynthSettings s = settings(8.0, 60.0);
  s.loop = false;
  const std::vector<GaitSegment> seq{{walk_gait(), 0.0}, {swing, 3.0}};
  const Motion m = synthesize(seq, s);
  const Motion a = synthesize(walk_gait(), s);
  // Before the change: exactly gait A.
  for (int f = 0; f < 180; ++f) EXPECT_QUAT_NEAR(m.rotation(f, 5), a.rotation(f, 5), 1e-12);
  // No jump at or after the change beyond the largest step of either gait alone.
  const Motion b = synthesize(swing, s);
  double max_step = 0;
  for (int f = 0; f + 1 < a.frame_count; ++f) max_step = std::max({max_step, pose_step(a, f, f + 1), pose_step(b, f, f + 1)});
  for (int f = 170; f < 300; ++f) EXPECT_LE(pose_step(m, f, f + 1), 1.05 * max_step) << f;
  // One cycle after the change it plays gait B (its arm swing amplitude).
  auto swing_range = [](const Motion& x, int from, int to) {
    double lo = 1e9, hi = -1e9;
    for (int f = from; f < to; ++f) {
      const double v = quat_to_euler(x.rotation(f, 5), EulerOrder::ZXY)[1];
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    return hi - lo;
  };
  EXPECT_NEAR(swing_range(m, 300, 480), swing_range(b, 300, 480), 0.02);
}

TEST(Error, SynthSettingsAndSequences) {
  auto code = [](const SynthSettings& s) {
    try {
      synthesize(walk_gait(), s);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::io;
  };
  SynthSettings s;
  s.seconds = 0;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.frame_rate = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.stride = -1;
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  s = {};
  s.speed = std::numeric_limits<double>::infinity();
  EXPECT_EQ(code(s), ErrorCode::invalid_settings);
  // Loops play one gait; starts must increase.
  const std::vector<GaitSegment> two{{walk_gait(), 0.0}, {walk_gait(), 2.0}};
  EXPECT_THROW(synthesize(two, SynthSettings{}), Error);
  SynthSettings no_loop;
  no_loop.loop = false;
  const std::vector<GaitSegment> back{{walk_gait(), 0.0}, {walk_gait(), 2.0}, {walk_gait(), 1.0}};
  EXPECT_THROW(synthesize(back, no_loop), Error);
  EXPECT_THROW(synthesize(std::span<const GaitSegment>(), no_loop), Error);
  // Another topology for the target skeleton names the joint.
  Skeleton other = walk_gait().basis.skeleton;
  other.names[3] = "Collar";
  try {
    retarget(walk_gait(), other, walk_gait().basis.bones);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("Neck"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::gait
