#include "koma/cartoon/filter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::cartoon {
namespace {

double gain_formula(double a, double sigma, double w) { return 1 + a * w * w * std::exp(-sigma * sigma * w * w / 2); }

TEST(CartoonFilter, ConstantsAndRampsUnchanged) {
  std::vector<double> c(300, 4.25), r(300);
  for (int i = 0; i < 300; ++i) r[i] = -2.0 + 0.037 * i;
  for (double sigma : {1.0, 2.5, 7.3}) {
    for (const auto* x : {&c, &r}) {
      const auto y = filter_channel(*x, sigma, 3.0);
      for (int i = 0; i < 300; ++i) EXPECT_NEAR(y[i], (*x)[i], 1e-9) << "sigma " << sigma << " i " << i;
      std::vector<double> s(300);
      for (int i = 0; i < 300; ++i) s[i] = 1.0 + 0.02 * i;  // a varying sigma too
      const auto z = filter_channel(*x, s, 3.0);
      for (int i = 0; i < 300; ++i) EXPECT_NEAR(z[i], (*x)[i], 1e-9);
    }
  }
}

// Fit y ~ p sin(w i) + q cos(w i) over the middle; gain = |(p, q)|, phase = atan2(q, p).
void fit(const std::vector<double>& y, double w, int a, int b, double& gain, double& phase) {
  double ss = 0, cc = 0, sc = 0, ys = 0, yc = 0;
  for (int i = a; i < b; ++i) {
    const double s = std::sin(w * i), c = std::cos(w * i);
    ss += s * s, cc += c * c, sc += s * c, ys += y[i] * s, yc += y[i] * c;
  }
  const double det = ss * cc - sc * sc, p = (ys * cc - yc * sc) / det, q = (yc * ss - ys * sc) / det;
  gain = std::hypot(p, q);
  phase = std::atan2(q, p);
}

TEST(CartoonFilter, SinusoidGainAndNoPhaseShift) {
  const int n = 2000;
  for (double sigma : {2.0, 4.0}) {
    for (double w : {0.1, 0.2, std::sqrt(2.0) / sigma, 0.5}) {
      std::vector<double> x(n);
      for (int i = 0; i < n; ++i) x[i] = std::sin(w * i);
      for (double a : {1.0, 4.0}) {
        const auto y = filter_channel(x, sigma, a);
        double gain = 0, phase = 0;
        fit(y, w, 200, n - 200, gain, phase);
        EXPECT_NEAR(gain / gain_formula(a, sigma, w), 1.0, 0.01) << "sigma " << sigma << " w " << w << " A " << a;
        EXPECT_LT(std::abs(phase), 1e-6) << "zero phase";
      }
    }
  }
}

TEST(CartoonFilter, StepGetsAnticipationAndEqualOvershoot) {
  for (double sigma : {5.0, 8.0}) {
    for (double a : {1.0, 20.0}) {
      std::vector<double> x(400);
      for (int i = 0; i < 400; ++i) x[i] = i >= 200 ? 1.0 : 0.0;
      const auto y = filter_channel(x, sigma, a);
      const auto lo = std::min_element(y.begin(), y.end()), hi = std::max_element(y.begin(), y.end());
      const double expected = 0.242 * a / (sigma * sigma);
      EXPECT_NEAR(-*lo / expected, 1.0, 0.02) << "dip, sigma " << sigma << " A " << a;
      EXPECT_NEAR((*hi - 1.0) / expected, 1.0, 0.02) << "overshoot";
      EXPECT_LT(lo - y.begin(), 200) << "the dip comes before the step";
      EXPECT_GE(hi - y.begin(), 200) << "the overshoot after it";
      EXPECT_NEAR(y.front(), 0.0, 1e-12);
      EXPECT_NEAR(y.back(), 1.0, 1e-12);
    }
  }
}

TEST(CartoonFilter, AdaptiveSigmaPeaksAtDominantFrequency) {
  for (double period : {10.0, 16.0, 24.0}) {
    const int n = 300;
    std::vector<double> x(static_cast<size_t>(n) * 2);
    for (int i = 0; i < n; ++i) {
      x[2 * i] = std::sin(2 * kPi * i / period) + 0.01 * i;  // a ramp does not matter
      x[2 * i + 1] = 0.3 * std::cos(2 * kPi * i / period);
    }
    FilterSettings s;
    s.max_sigma = 10;
    const auto sigma = adaptive_sigma(x, n, 2, s);
    const double expected = std::sqrt(2.0) / (2 * kPi / period);
    // Two or more cycles in the 32-frame window: within 5 %; 1.3 cycles (period 24): within 15 %
    // (the window's resolution limit, see docs/cartoon.md).
    const double tol = period <= 16 ? 0.05 : 0.15;
    for (int i = 40; i < n - 40; ++i) EXPECT_NEAR(sigma[i] / expected, 1.0, tol) << "period " << period << " i " << i;
  }
  // Still signal: the widest sigma.
  std::vector<double> still(100, 1.0);
  FilterSettings s;
  for (double v : adaptive_sigma(still, 100, 1, s)) EXPECT_EQ(v, s.max_sigma);
}

Skeleton two_joint() {
  Skeleton s;
  s.names = {"Hips", "Spine"};
  s.parents = {-1, 0};
  s.offsets = {Vec3::Zero(), Vec3(0, 0.5, 0)};
  s.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation, Channel::Xrotation,
                 Channel::Yrotation},
                {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation}};
  s.end_sites = {{1, Vec3(0, 0.5, 0)}};
  return s;
}

// Spinning about Y: a constant-rate spin through +-180 degrees is a ramp (unchanged); a wobble
// around 180 degrees filters exactly like its angle channel; no frame-to-frame jump anywhere.
TEST(CartoonMotion, RotationsStayUnitAndDoNotJumpThrough180) {
  const int n = 200;
  CartoonSettings cs;
  cs.per_frame = FilterSettings{};
  cs.per_frame->strength = 2.0;
  cs.per_frame->sigma_frames = 3.0;
  auto angle_of = [](const Quat& q) { return 2 * std::atan2(q.y(), q.w()); };
  for (int kind = 0; kind < 2; ++kind) {
    Motion m = rest_motion(two_joint(), 30, n);
    std::vector<double> angle(n);
    for (int f = 0; f < n; ++f) {
      angle[f] = kind == 0 ? 0.1 * f : kPi + 0.6 * std::sin(0.25 * f);
      m.rotations[static_cast<size_t>(f) * 2 + 1] = Quat(Eigen::AngleAxisd(angle[f], Vec3::UnitY()));
    }
    const CartoonResult r = cartoon_motion(m, cs);
    const auto expected = kind == 0 ? angle : filter_channel(angle, 3.0, 2.0);
    double max_step_in = 0, max_step_out = 0;
    for (int f = 0; f < n; ++f) {
      const Quat& q = r.motion.rotations[static_cast<size_t>(f) * 2 + 1];
      EXPECT_NEAR(q.norm(), 1.0, 1e-12);
      EXPECT_QUAT_NEAR(q, Quat(Eigen::AngleAxisd(expected[f], Vec3::UnitY())), 1e-9) << "kind " << kind << " f " << f;
      if (f > 0) {
        max_step_in = std::max(max_step_in, test::rotation_angle(m.rotations[f * 2 + 1], m.rotations[(f - 1) * 2 + 1]));
        max_step_out = std::max(max_step_out, test::rotation_angle(q, r.motion.rotations[(f - 1) * 2 + 1]));
      }
    }
    EXPECT_LT(max_step_out, 3 * max_step_in) << "kind " << kind;
    (void)angle_of;
  }
}

TEST(CartoonMotion, StillAndRampMotionUnchanged) {
  Motion m = rest_motion(two_joint(), 30, 50);
  for (int f = 0; f < 50; ++f) m.translations[static_cast<size_t>(f) * 2] = Vec3(0.01 * f, 1.0, -0.02 * f);
  for (int f = 0; f < 50; ++f) m.rotations[static_cast<size_t>(f) * 2 + 1] = Quat(Eigen::AngleAxisd(0.3, Vec3::UnitX()));
  for (double sigma : {0.0, 2.0}) {
    CartoonSettings cs;
    cs.per_frame = FilterSettings{};
    cs.per_frame->sigma_frames = sigma;
    cs.per_frame->strength = 5;
    const CartoonResult r = cartoon_motion(m, cs);
    for (size_t i = 0; i < m.translations.size(); ++i) EXPECT_VEC3_NEAR(r.motion.translations[i], m.translations[i], 1e-9);
    for (size_t i = 0; i < m.rotations.size(); ++i) EXPECT_QUAT_NEAR(r.motion.rotations[i], m.rotations[i], 1e-9);
  }
}

TEST(CartoonMotion, PartStrengths) {
  const Motion m = make_sample_motion();
  CartoonSettings cs;
  cs.part_strength[static_cast<int>(body::BodyPart::arms)] = 0.0;
  cs.strength = 2;
  const CartoonResult r = cartoon_motion(m, cs);
  for (int f = 0; f < m.frame_count; ++f) {
    for (const char* j : {"LeftArm", "RightForeArm", "LeftHand"})
      EXPECT_QUAT_NEAR(r.motion.rotation(f, m.skeleton.find(j)), m.rotation(f, m.skeleton.find(j)), 1e-12);
  }
  double leg_change = 0;
  for (int f = 0; f < m.frame_count; ++f)
    leg_change = std::max(leg_change, test::rotation_angle(r.motion.rotation(f, m.skeleton.find("LeftLeg")),
                                                           m.rotation(f, m.skeleton.find("LeftLeg"))));
  EXPECT_GT(leg_change, 0.02);
}

TEST(CartoonMotion, SquashPreservesVolume) {
  const Motion m = make_sample_motion();
  CartoonSettings cs;
  cs.squash = 0.5;
  const CartoonResult r = cartoon_motion(m, cs);
  ASSERT_EQ(r.squash.size(), static_cast<size_t>(m.frame_count));
  ASSERT_EQ(r.motion.scales.size(), m.rotations.size());
  double lo = 1, hi = 1;
  for (int f = 0; f < m.frame_count; ++f) {
    const SquashFrame& s = r.squash[f];
    EXPECT_NEAR(s.axis_scale.prod(), 1.0, 1e-12);
    EXPECT_NEAR(s.direction.norm(), 1.0, 1e-12);
    EXPECT_NEAR(r.motion.scales[static_cast<size_t>(f) * m.joint_count()].prod(), 1.0, 1e-12);
    EXPECT_EQ(r.motion.scales[static_cast<size_t>(f) * m.joint_count() + 3], Vec3::Ones()) << "other joints unscaled";
    lo = std::min(lo, s.stretch);
    hi = std::max(hi, s.stretch);
  }
  EXPECT_LT(lo, 0.97) << "the landing squashes";
  EXPECT_GT(hi, 1.03) << "the fall or take-off stretches";
  EXPECT_NO_THROW(r.motion.validate());
}

TEST(CartoonPoints, MatchesChannelFilter) {
  const Motion m = make_sample_motion();
  const WorldPoses w = forward_kinematics(m);
  std::vector<std::string> names;
  for (int p = 0; p < w.point_count; ++p) names.push_back(m.skeleton.point_name(p));
  CartoonSettings cs;
  cs.per_frame = FilterSettings{};
  cs.per_frame->sigma_frames = 3;
  cs.part_strength[static_cast<int>(body::BodyPart::legs)] = 2;
  const auto out = cartoon_points(w.positions, w.frame_count, names, m.frame_rate, cs);
  for (int p : {0, m.skeleton.find("LeftFoot")}) {
    const double a = body::body_part_of(names[p]) == body::BodyPart::legs ? 2.0 : 1.0;
    std::vector<double> x(static_cast<size_t>(w.frame_count));
    for (int f = 0; f < w.frame_count; ++f) x[f] = w.position(f, p).z();
    const auto y = filter_channel(x, 3.0, a);
    for (int f = 0; f < w.frame_count; ++f) EXPECT_NEAR(out[static_cast<size_t>(f) * w.point_count + p].z(), y[f], 1e-12);
  }
}

TEST(CartoonErrors, BadInput) {
  const std::vector<double> x(10, 1.0);
  EXPECT_THROW(filter_channel(x, 0.0, 1.0), Error);
  EXPECT_THROW(filter_channel(x, -1.0, 1.0), Error);
  EXPECT_THROW(filter_channel(x, 2.0, std::nan("")), Error);
  EXPECT_THROW(filter_channel(x, 2.0, INFINITY), Error);
  EXPECT_THROW(filter_channel(std::vector<double>{1, 2}, 2.0, 1.0), Error);
  const Motion m = make_sample_motion();
  auto expect_code = [&](const CartoonSettings& cs, const Motion& motion, ErrorCode code, const char* what) {
    try {
      cartoon_motion(motion, cs);
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
      EXPECT_FALSE(e.message().empty());
    }
  };
  CartoonSettings cs;
  cs.sigma_seconds = -1;
  expect_code(cs, m, ErrorCode::invalid_settings, "negative sigma");
  cs = {};
  cs.per_frame = FilterSettings{};
  cs.per_frame->sigma_frames = -1;
  expect_code(cs, m, ErrorCode::invalid_settings, "negative per-frame sigma");
  cs = {};
  cs.strength = std::nan("");
  expect_code(cs, m, ErrorCode::invalid_settings, "NaN strength");
  cs = {};
  cs.strength = 2e4;
  expect_code(cs, m, ErrorCode::invalid_settings, "strength past 1e4");
  cs = {};
  cs.max_sigma_seconds = 0.5 * cs.min_sigma_seconds;
  expect_code(cs, m, ErrorCode::invalid_settings, "max sigma below min");
  cs = {};
  cs.window_seconds = 0;
  expect_code(cs, m, ErrorCode::invalid_settings, "zero window");
  cs = {};
  cs.part_strength[3] = INFINITY;
  expect_code(cs, m, ErrorCode::invalid_settings, "infinite part strength");
  cs = {};
  cs.squash_joint = "Tail";
  cs.squash = 1;
  expect_code(cs, m, ErrorCode::invalid_settings, "unknown squash joint");
  cs = {};
  Motion empty = m;
  empty.frame_count = 0;
  empty.rotations.clear();
  empty.translations.clear();
  expect_code(cs, empty, ErrorCode::bad_data, "empty motion");
  for (int frames : {1, 2}) expect_code(cs, rest_motion(m.skeleton, 30, frames), ErrorCode::bad_data, "1-2 frames");
}

void check_keep_feet(const Motion& m, const std::string& label) {
  CartoonSettings cs;
  cs.keep_feet = true;
  cs.strength = 8;  // rate-independent: A * (fps / 30)^2 per frame^2
  const CartoonResult r = cartoon_motion(m, cs);
  std::cout << "[keep-feet] " << label << ": skating input " << r.skating_input_mm << " mm/frame, output "
            << r.skating_output_mm << " mm/frame, body change mean " << 1000 * r.body_change_m << " mm, max "
            << 1000 * r.max_change_m << " mm, contacts " << r.contacts.contact_count() << ", unreachable "
            << r.unreachable_frames << "\n";
  EXPECT_GE(r.contacts.contact_count(), 2);
  EXPECT_LE(r.skating_output_mm, r.skating_input_mm + 1.0);
  EXPECT_GT(r.body_change_m, 0.002) << "the body changed";
  // Without the constraint the feet would skate more: the constraint is doing the work.
  CartoonSettings free = cs;
  free.keep_feet = false;
  const CartoonResult f = cartoon_motion(m, free);
  EXPECT_GT(foot_skating_mm(f.motion, r.contacts), r.skating_output_mm);
  // No IK pops: the constrained output accelerates no point much harder than the free output.
  auto max_accel = [](const Motion& motion) {
    const WorldPoses w = forward_kinematics(motion);
    double mx = 0;
    for (int fr = 1; fr + 1 < w.frame_count; ++fr)
      for (int p = 0; p < w.point_count; ++p)
        mx = std::max(mx, (w.position(fr + 1, p) - 2 * w.position(fr, p) + w.position(fr - 1, p)).norm());
    return mx;
  };
  const double a_free = max_accel(f.motion), a_kept = max_accel(r.motion);
  std::cout << "[keep-feet] " << label << ": max acceleration free " << 1000 * a_free << " kept " << 1000 * a_kept
            << " mm/frame^2\n";
  EXPECT_LE(a_kept, 3.0 * a_free);
  for (const Quat& q : r.motion.rotations) ASSERT_NEAR(q.norm(), 1.0, 1e-9);
}

TEST(CartoonKeepFeet, SampleWalk) { check_keep_feet(make_sample_motion(), "sample"); }

TEST(CartoonKeepFeet, RealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/bandai-namco-1/dataset-1_walk_proud_001.bvh",
                           "bvh/styles/bandai-namco-2/dataset-2_walk_active_001.bvh",
                           "bvh/styles/xia2015/neutral_01_000.bvh", "bvh/styles/xia2015/old_01_000.bvh",
                           "bvh/styles/semi-mst-m21/content/walk.bvh", "bvh/exporters/bvh-toolbox/walk01.bvh",
                           "bvh/exporters/pymo/AV_8Walk_Meredith_HVHA_Rep1.bvh"}) {
    SCOPED_TRACE(file);
    check_keep_feet(io::read_motion(test::shared_data() / file).motion, file);
  }
}


// Settings in seconds: the same take at 24, 30, 60 and 120 fps moves the body by the same amount
// and gets the same sigma in seconds (issue 18: within +-10 %). Per-frame settings, kept under
// CartoonSettings::per_frame, do not: at 120 fps the same per-frame A moves the body far less.
struct RateFigures {
  double change_m, sigma_s;
};

RateFigures rate_figures(const Motion& m, const CartoonSettings& cs) {
  const CartoonResult r = cartoon_motion(m, cs);
  return {r.body_change_m, r.sigma_mean / m.frame_rate};
}

void expect_rate_independent(const Motion& source, const std::string& label, double tolerance) {
  CartoonSettings cs;
  cs.strength = 8;
  const RateFigures ref = rate_figures(resample(source, 30.0), cs);
  for (double rate : {24.0, 60.0, 120.0}) {
    if (rate > source.frame_rate * 1.01) continue;  // never upsample past the recording
    const RateFigures at = rate_figures(resample(source, rate), cs);
    std::cout << "[rate] " << label << " " << rate << " fps: body change " << 1000 * at.change_m << " mm (30 fps "
              << 1000 * ref.change_m << "), sigma " << at.sigma_s << " s (30 fps " << ref.sigma_s << ")\n";
    EXPECT_NEAR(at.change_m / ref.change_m, 1.0, tolerance) << label << " at " << rate << " fps";
    EXPECT_NEAR(at.sigma_s / ref.sigma_s, 1.0, tolerance) << label << " at " << rate << " fps";
  }
  // The per-frame escape keeps the old meaning: A per frame^2, so 16x less at 120 fps than 30.
  CartoonSettings old;
  old.per_frame = FilterSettings{};
  old.per_frame->strength = 8;
  if (source.frame_rate >= 119) {
    const double c30 = rate_figures(resample(source, 30.0), old).change_m;
    const double c120 = rate_figures(resample(source, 120.0), old).change_m;
    EXPECT_LT(c120, 0.5 * c30) << label << ": per-frame strength is rate-dependent by design";
  }
}

TEST(CartoonRate, SampleWalkAtEveryRate) {
  SampleSettings ss;
  ss.frame_rate = 120;
  expect_rate_independent(make_sample_motion(ss), "sample", 0.05);
}

TEST(CartoonRate, SettingsConvertWithTheRate) {
  CartoonSettings cs;
  cs.strength = 3;
  cs.sigma_seconds = 0.1;
  const FilterSettings a = cs.filter_at(30), b = cs.filter_at(120), c = cs.filter_at(24);
  EXPECT_DOUBLE_EQ(a.strength, 3);
  EXPECT_DOUBLE_EQ(b.strength, 48);
  EXPECT_DOUBLE_EQ(c.strength, 3 * 0.64);
  EXPECT_NEAR(b.sigma_frames, 12, 1e-12);
  EXPECT_EQ(a.window, 32);
  EXPECT_EQ(b.window, 128);
  EXPECT_EQ(c.window, 26);
  EXPECT_EQ(b.hop, 16);
  EXPECT_NEAR(b.min_sigma / 120, a.min_sigma / 30, 1e-12);
  EXPECT_THROW(cs.filter_at(0), Error);
  EXPECT_THROW(cs.filter_at(std::nan("")), Error);
}

TEST(CartoonRate, RealTakesAt24To120Fps) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/cmu/assimp/01_01.bvh", "bvh/styles/xia2015/neutral_01_000.bvh",
                           "bvh/cmu/salsa/60_01_scaled.bvh"}) {
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    expect_rate_independent(m, file, 0.05);
  }
}

}  // namespace
}  // namespace koma::cartoon
