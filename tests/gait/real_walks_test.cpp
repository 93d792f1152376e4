// Regression on the real style walks in ../shared/data/bvh/styles (skipped when absent).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/gait/synth.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

namespace fs = std::filesystem;

// Every walk under bvh/styles: Bandai-Namco *_walk_*, Xia *_01_* (walk), the m21 walks and styles.
std::vector<fs::path> style_walks() {
  std::vector<fs::path> out;
  for (const auto& p : test::shared_bvh_files("bvh/styles")) {
    const std::string n = p.filename().string(), dir = p.parent_path().filename().string();
    if (n.find("_walk_") != std::string::npos || (dir == "xia2015" && n.find("_01_") != std::string::npos) ||
        n.find("walk") != std::string::npos || dir == "style")
      out.push_back(p);
  }
  return out;
}

// Clips in which no steady cycle repeats, with the reason (checked: they must keep failing loudly
// with a confidence, not silently produce a gait).
const std::set<std::string> kNoStablePeriod = {
    "female-walk.bvh",       // m21 content: 2.1 s, about 1.5 cycles: no peak within the searchable lags
    "depressed_01_000.bvh",  // Xia: 2.2 s of a slow walk, likewise
    "HAPPY.bvh", "OLD-1.bvh", "ZOMBIE.bvh",  // m21 style clips: steps do not repeat steadily (confidence < 0.5)
};

bool is_leg(const Skeleton& s, int j) {
  // A joint at or below a thigh (UpperLeg_L, LeftUpLeg, ...).
  for (int k = j; k >= 0; k = s.parents[k]) {
    std::string n = s.names[k];
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n.find("upleg") != std::string::npos || n.find("upperleg") != std::string::npos) return true;
  }
  return false;
}

TEST(RealWalks, ReconstructionWithFiveHarmonics) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = style_walks();
  ASSERT_GE(files.size(), 20u);
  int analysed = 0;
  std::printf("K = 5 reconstruction RMS per joint (deg): worst non-leg joint, then the leg joints\n");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string name = path.filename().string();
    const Motion m = io::read_motion(path).motion;
    GaitCycle c;
    try {
      c = extract_cycle(m);
    } catch (const Error& e) {
      std::printf("%-40s %s\n", name.c_str(), e.what());
      EXPECT_TRUE(kNoStablePeriod.count(name)) << e.what();
      EXPECT_EQ(e.code(), ErrorCode::bad_data);
      continue;
    }
    EXPECT_FALSE(kNoStablePeriod.count(name)) << "now finds a period: update the list";
    ++analysed;
    const Gait g = fourier_analyze(c);
    const ReconstructionError e5 = reconstruction_error(c, g);
    FourierSettings k12;
    k12.harmonics = 12;
    const ReconstructionError e12 = reconstruction_error(c, fourier_analyze(c, k12));
    double body = 0;
    int body_joint = 0;
    std::string legs;
    for (int j = 0; j < m.joint_count(); ++j) {
      const double deg = e5.joint_rms[j] * kRadToDeg;
      if (is_leg(m.skeleton, j)) {
        legs += fmt::format(" {}={:.2f}", m.skeleton.names[j], deg);
      } else if (deg > body) {
        body = deg, body_joint = j;
      }
    }
    std::printf("%-40s T=%.3fs conf=%.2f cycles %d/%d  body max %s %.2f | legs%s | K=12 worst %s %.2f\n", name.c_str(),
                c.basis.period, c.basis.confidence, c.basis.cycles_used, c.basis.cycles_found,
                m.skeleton.names[body_joint].c_str(), body, legs.c_str(), m.skeleton.names[e12.worst_joint].c_str(),
                e12.worst_rms * kRadToDeg);
    // Measured (docs/gait.md): K = 5 does NOT reach 0.5 deg RMS on every joint of real walks.
    // Heel strike and toe-off put energy above the 5th harmonic: feet and toes reach 0.5-3 deg,
    // some wrists and forearms 0.5-1.8 deg. What holds, and is asserted:
    //  - with K = 5 every joint is within 3 deg (the median joint is at 0.2-0.7 deg);
    //  - the loss is truncation only: K = 12 brings every joint of the Bandai-Namco walks to
    //    <= 0.5 deg.
    // Exception: Xia old_01_000 RightToeBase jumps in the data (no K follows it: 15 deg at K = 5,
    // 9 deg at K = 20).
    for (int j = 0; j < m.joint_count(); ++j) {
      if (name == "old_01_000.bvh" && m.skeleton.names[j] == "RightToeBase") continue;
      EXPECT_LE(e5.joint_rms[j] * kRadToDeg, 3.0) << m.skeleton.names[j];
    }
    if (name.starts_with("dataset-")) {
      EXPECT_LE(e12.worst_rms * kRadToDeg, 0.5) << m.skeleton.names[e12.worst_joint];
    }
  }
  EXPECT_GE(analysed, 18);
}

Gait walk(const std::string& rel) { return analyze_gait(io::read_motion(test::shared_data() / "bvh/styles" / rel).motion); }

TEST(RealWalks, AdverbTransfersBetweenDatasets) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait n1 = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait n2 = walk("bandai-namco-2/dataset-2_walk_normal_001.bvh");
  for (const char* style : {"active", "feminine"}) {
    SCOPED_TRACE(style);
    const Gait s1 = walk(fmt::format("bandai-namco-1/dataset-1_walk_{}_001.bvh", style));
    const Gait s2 = walk(fmt::format("bandai-namco-2/dataset-2_walk_{}_001.bvh", style));
    const WeightedAdverb adv{make_adverb(n1, s1), 1.0, style};
    const Gait moved = apply_adverbs(n2, std::span(&adv, 1));
    const double before = coefficient_distance(n2, s2), after = coefficient_distance(moved, s2);
    std::printf("dataset-1 normal->%s applied to dataset-2 normal: distance to dataset-2 %s %.3f -> %.3f rad, "
                "period %.3f -> %.3f s (target %.3f s)\n",
                style, style, before, after, n2.basis.period, moved.basis.period, s2.basis.period);
    EXPECT_LT(after, before);  // the period is reported, not asserted: see docs/gait.md
  }
}

TEST(RealWalks, ExactRoundTripAndSeamlessLoopOnRealData) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait n = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait s = walk("bandai-namco-1/dataset-1_walk_happy_001.bvh");
  const WeightedAdverb adv{make_adverb(n, s), 1.0, "happy"};
  const Gait out = apply_adverbs(n, std::span(&adv, 1));
  EXPECT_LT(coefficient_distance(out, s), 1e-9);
  EXPECT_NEAR(out.basis.period, s.basis.period, 1e-12);
  SynthSettings set;
  set.seconds = 6;
  const Motion m = synthesize(out, set);
  std::vector<double> steps;
  for (int f = 0; f + 1 < m.frame_count; ++f) steps.push_back(test_util::pose_step(m, f, f + 1));
  std::sort(steps.begin(), steps.end());
  EXPECT_LE(test_util::pose_step(m, m.frame_count - 1, 0), steps[steps.size() / 2]);
}

TEST(RealWalks, TimeShiftLeavesRelativePhasesUnchanged) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m = io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh").motion;
  const Gait a = analyze_gait(cut(m, 0, m.frame_count - 20));
  double worst = 0;
  for (int shift : {5, 11, 17}) {
    const Gait b = analyze_gait(cut(m, shift, m.frame_count - 20 + shift));
    for (Eigen::Index r = kRootChannels; r < a.coefficients.rows(); ++r)
      for (int k = 1; k <= 2; ++k) {
        const std::complex<double> ca = a.coefficients(r, k), cb = b.coefficients(r, k);
        if (std::abs(ca) < 0.05) continue;  // only harmonics of at least 3 degrees
        const double d = std::abs(std::remainder(std::arg(cb) - std::arg(ca), 2 * kPi));
        worst = std::max(worst, d);
        // The shifted cut also averages slightly different frames (the clip starts and stops),
        // so this is not exact on real data: measured <= 0.123 rad, against absolute phase
        // changes of up to 3.2 rad for these shifts.
        EXPECT_LT(d, 0.15) << "shift " << shift << " row " << r << " k " << k;
      }
  }
  std::printf("largest relative-phase change for input shifts of 5, 11, 17 frames: %.4f rad\n", worst);
}

// Foot skating relative to travel: mean horizontal speed of the lowest point (joint_Root, the
// static ground joint, left out) on frames where it is within 3 cm of the floor, over the root's
// average speed.
double skate_ratio(const Motion& m) {
  const WorldPoses w = forward_kinematics(m);
  double floor = 1e9;
  for (int f = 0; f < m.frame_count; ++f)
    for (int p = 1; p < w.point_count; ++p) floor = std::min(floor, w.position(f, p).y());
  double sum = 0;
  int n = 0;
  for (int f = 0; f + 1 < m.frame_count; ++f) {
    int lowest = 1;
    for (int p = 1; p < w.point_count; ++p)
      if (w.position(f, p).y() < w.position(f, lowest).y()) lowest = p;
    if (w.position(f, lowest).y() - floor > 0.03) continue;
    Vec3 d = (w.position(f + 1, lowest) - w.position(f, lowest)) * m.frame_rate;
    d.y() = 0;
    sum += d.norm(), ++n;
  }
  const double root_speed = (w.position(m.frame_count - 1, 1) - w.position(0, 1)).norm() / m.duration();
  return n > 0 ? sum / n / root_speed : 1e9;
}

TEST(RealWalks, RootTravelsInStepWithTheFeet) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion in = io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh").motion;
  const Gait g = analyze_gait(in);
  std::printf("contact-point speed / root speed: input %.3f", skate_ratio(in));
  for (auto [stride, speed] : {std::pair{1.0, 1.0}, {1.3, 1.0}, {1.0, 0.7}, {1.0, 1.4}, {0.8, 1.2}}) {
    SynthSettings s;
    s.seconds = 8;
    s.frame_rate = 30;
    s.stride = stride;
    s.speed = speed;
    const double r = skate_ratio(synthesize(g, s));
    std::printf(", stride %.1f speed %.1f: %.3f", stride, speed, r);
    EXPECT_LT(r, 0.1) << "stride " << stride << " speed " << speed;
  }
  std::printf("\n");
}

TEST(RealWalks, MismatchedSkeletonNamesTheJoint) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait bandai = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait xia = walk("xia2015/neutral_01_000.bvh");
  try {
    make_adverb(bandai, xia);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("joint_Root"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::gait
