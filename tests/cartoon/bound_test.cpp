// The cartoon filter within a body's reach (issue 39): the bound on each joint's added rotation,
// discontinuities split into segments, planted feet on fast action. docs/cartoon.md "Within a
// body's reach" quotes these measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "koma/body/height.hpp"
#include "koma/body/roles.hpp"
#include "koma/cartoon/filter.hpp"
#include "koma/cartoon/report.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/quat_sign.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::cartoon {
namespace {

// What the filter did to a take, in body heights (body::estimate_height, the standing height
// from the leg bones): joints relative to the root, feet at the input's contacts.
struct Reach {
  double head = 0;       // largest head move relative to the root
  double joint = 0;      // largest move of any joint relative to the root
  std::string worst;     // its joint and frame
  double feet_m = 0;     // largest move of an ankle or toe during a contact, metres
  double mean = 0;       // mean world move of all joints
};

Reach measure(const Motion& in, const CartoonResult& r) {
  const double height = body::estimate_height(in).height;
  const WorldPoses a = forward_kinematics(in), b = forward_kinematics(r.motion);
  const int head = body::find_joint_roles(in.skeleton)[body::Role::head];
  Reach m;
  double sum = 0;
  for (int f = 0; f < in.frame_count; ++f) {
    for (int j = 0; j < in.joint_count(); ++j) {
      const Vec3 moved = (b.position(f, j) - b.position(f, 0)) - (a.position(f, j) - a.position(f, 0));
      const double d = moved.norm() / height;
      if (j == head) m.head = std::max(m.head, d);
      if (d > m.joint) {
        m.joint = d;
        m.worst = in.skeleton.names[static_cast<size_t>(j)] + " frame " + std::to_string(f);
      }
      sum += (b.position(f, j) - a.position(f, j)).norm() / height;
    }
  }
  m.mean = sum / (static_cast<double>(in.frame_count) * in.joint_count());
  for (const auto& ec : r.contacts.effectors) {
    for (const body::Contact& c : ec.contacts) {
      for (int f = c.begin; f < c.end; ++f) {
        for (int p : ec.effector.points) m.feet_m = std::max(m.feet_m, (b.position(f, p) - a.position(f, p)).norm());
      }
    }
  }
  return m;
}

CartoonSettings default_settings() {  // the CLI's defaults with --keep-feet
  CartoonSettings cs;
  cs.strength = 8;
  cs.keep_feet = true;
  return cs;
}

CartoonSettings kick_settings() {  // docs/cartoon.md's kick example: --strength 20 --sigma 0.15s
  CartoonSettings cs = default_settings();
  cs.strength = 20;
  cs.sigma_seconds = 0.15;
  return cs;
}

// The fastest shared takes: kicks, jumps, hops, punches, dances (two with a T-pose first frame).
constexpr const char* kFastTakes[] = {
    "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh",
    "bvh/styles/xia2015/neutral_22_000.bvh",
    "bvh/styles/xia2015/angry_22_000.bvh",
    "bvh/styles/xia2015/neutral_16_000.bvh",
    "bvh/styles/xia2015/neutral_18_000.bvh",
    "bvh/cmu/cmu-daz/10_02.bvh",
    "bvh/cmu/cmu-daz/13_32.bvh",
    "bvh/cmu/cmu-daz/05_14.bvh",
    "bvh/cmu/bvh11/131_03.bvh",
    "bvh/styles/semi-mst-m21/content/kick.bvh",
    "bvh/styles/semi-mst-m21/content/jump-across.bvh",
    "bvh/styles/semi-mst-m21/content/dance.bvh",
};

TEST(CartoonBound, FastActionStaysWithinABodysReach) {
  KOMA_REQUIRE_SHARED_DATA();
  struct Case {
    const char* name;
    CartoonSettings settings;
    double head, joint;  // the limits, body heights
  };
  const Case cases[] = {{"default", default_settings(), 0.15, 0.35}, {"kick", kick_settings(), 0.25, 0.5}};
  for (const char* file : kFastTakes) {
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(file) + " " + c.name);
      const CartoonResult r = cartoon_motion(m, c.settings);
      const Reach reach = measure(m, r);
      std::cout << "[reach] " << file << " " << c.name << ": head " << reach.head << ", joint " << reach.joint << " ("
                << reach.worst << "), feet at contacts " << 100 * reach.feet_m << " cm, mean " << reach.mean
                << " body heights, " << r.segments.size() << " segment(s), " << r.bounded.size() << " bounded\n";
      EXPECT_LE(reach.head, c.head);
      EXPECT_LE(reach.joint, c.joint) << reach.worst;
      EXPECT_LE(reach.feet_m, 0.01);
      EXPECT_GT(reach.mean, 0.002) << "the filter still does something";
    }
  }
}

// The effect stays visible: at least 0.006 body heights on average on a fast take and on walks.
TEST(CartoonBound, EffectStaysVisibleOnFastTakesAndWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/cmu/cmu-daz/13_32.bvh", "bvh/cmu/cmu-daz/10_02.bvh",
                           "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/xia2015/neutral_01_000.bvh", "bvh/cmu/cmu-daz/05_01.bvh"}) {
    SCOPED_TRACE(file);
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    const Reach reach = measure(m, cartoon_motion(m, default_settings()));
    std::cout << "[visible] " << file << ": mean change " << reach.mean << " body heights\n";
    EXPECT_GE(reach.mean, 0.006);
    // ... and within a factor of two of the filter without the bound and the splitting.
    CartoonSettings free = default_settings(), bounded = default_settings();
    free.keep_feet = bounded.keep_feet = false;
    free.bound_share = 0;
    free.cut_speed = 0;
    const double with = measure(m, cartoon_motion(m, bounded)).mean, without = measure(m, cartoon_motion(m, free)).mean;
    std::cout << "[visible] " << file << ": free filter " << without << ", bounded " << with << "\n";
    EXPECT_GE(with, 0.5 * without);
  }
}

// A joint stepping by 1 rad: the bound keeps the anticipation and the overshoot of the plain
// filter (the 1-D filter of the angle) within a factor of two, at the default strength.
TEST(CartoonBound, StepResponseWithinAFactorOfTwo) {
  Skeleton s;
  s.names = {"Hips", "Spine"};
  s.parents = {-1, 0};
  s.offsets = {Vec3::Zero(), Vec3(0, 0.5, 0)};
  s.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation, Channel::Xrotation,
                 Channel::Yrotation},
                {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation}};
  const int n = 90;
  Motion m = rest_motion(s, 30, n);
  std::vector<double> angle(n);
  for (int f = 0; f < n; ++f) {
    const double t = std::clamp((f - 40) / 3.0, 0.0, 1.0);
    angle[f] = t * t * (3 - 2 * t);  // a 0.1 s smooth step of 1 rad
    m.rotations[static_cast<size_t>(f) * 2 + 1] = Quat(Eigen::AngleAxisd(angle[f], Vec3::UnitX()));
  }
  CartoonSettings cs;
  cs.strength = 8;
  cs.sigma_seconds = 2.0 / 30;  // the adaptive sigma's lower clamp: the sharpest default response
  const std::vector<double> plain = filter_channel(angle, 2.0, 8.0);
  const CartoonResult r = cartoon_motion(m, cs);
  double dip = 0, over = 0, plain_dip = 0, plain_over = 0;
  for (int f = 0; f < n; ++f) {
    const Quat& q = r.motion.rotations[static_cast<size_t>(f) * 2 + 1];
    const double a = 2 * std::atan2(q.x(), q.w());
    if (f < 40) dip = std::max(dip, -a), plain_dip = std::max(plain_dip, -plain[f]);
    if (f > 43) over = std::max(over, a - 1), plain_over = std::max(plain_over, plain[f] - 1);
  }
  std::cout << "[step] anticipation " << dip << " rad (plain filter " << plain_dip << "), overshoot " << over
            << " rad (plain " << plain_over << ")\n";
  // The joint's range is the step's half-extent about its centre (about 0.5 rad): the bound is
  // 0.25 rad, which the plain filter passes.
  EXPECT_GT(plain_dip, 0.3) << "the plain filter goes past the bound";
  EXPECT_GE(dip, 0.5 * plain_dip);
  EXPECT_GE(over, 0.5 * plain_over);
  EXPECT_LE(std::max(dip, over), 0.5 * 0.54) << "the step's centre is at 0.53 rad (44 frames at 1, 41 at 0)";
  ASSERT_FALSE(r.bounded.empty());
  EXPECT_EQ(r.bounded.front().joint, 1);
}

// At any strength each joint's added rotation stays within bound_share of its own range: here
// 25 times the CLI's default, where the unbounded filter throws joints several times their range.
TEST(CartoonBound, AddedRotationStaysWithinTheJointsOwnRange) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m =
      io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh").motion;
  CartoonSettings cs;
  cs.strength = 200;
  auto worst_ratio = [&](const CartoonResult& r) {
    // added angle / (largest angle of the joint from its mean rotation): the bound keeps it below
    // bound_share times twice that (the ellipsoid's half-extent is at most twice it).
    double worst = 0;
    for (int j = 0; j < m.joint_count(); ++j) {
      const Quat mean = sign_aligned_mean(m, j);
      double range = 0, added = 0;
      for (int f = 0; f < m.frame_count; ++f) {
        range = std::max(range, test::rotation_angle(m.rotation(f, j), mean));
        added = std::max(added, test::rotation_angle(m.rotation(f, j), r.motion.rotation(f, j)));
      }
      if (range > 1e-3) worst = std::max(worst, added / range);
    }
    return worst;
  };
  const double bounded = worst_ratio(cartoon_motion(m, cs));
  CartoonSettings free = cs;
  free.bound_share = 0;
  const double unbounded = worst_ratio(cartoon_motion(m, free));
  std::cout << "[bound] strength 200: added / own range " << bounded << " (unbounded " << unbounded << ")\n";
  EXPECT_LE(bounded, 2 * cs.bound_share + 1e-9);
  EXPECT_GT(unbounded, 2 * cs.bound_share);
}

TEST(CartoonBound, WarningNamesTheJointsAndFrames) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m =
      io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh").motion;
  CartoonSettings cs = default_settings();
  cs.strength = 100;
  const CartoonResult r = cartoon_motion(m, cs);
  const std::string w = bound_warning(r, cs);
  std::cout << "[bound] " << w << "\n";
  ASSERT_FALSE(r.bounded.empty());
  int named = 0;
  for (const BoundReport& b : r.bounded) named += w.find(m.skeleton.names[static_cast<size_t>(b.joint)] + " ") != std::string::npos;
  EXPECT_GE(named, 5) << "the five held back most";
  EXPECT_NE(w.find(" frames "), std::string::npos);
  EXPECT_NE(w.find("`bound_share`"), std::string::npos);
  const nlohmann::json rep = cartoon_report(r, cs);
  EXPECT_EQ(rep["bounded"].size(), r.bounded.size());
  // Without the bound there is nothing to warn about.
  cs.bound_share = 0;
  EXPECT_EQ(bound_warning(cartoon_motion(m, cs), cs), "");
}

// A T-pose first frame (and the exporter's blend out of it) is its own segment; a jump cut in the
// middle of a walk splits it; walks without either are one segment.
TEST(CartoonSegments, TPoseAndJumpCutsSplitTheTake) {
  KOMA_REQUIRE_SHARED_DATA();
  const CartoonSettings cs;
  const Motion dance = io::read_motion(test::shared_data() / "bvh/cmu/cmu-daz/05_14.bvh").motion;
  for (const char* file : {"bvh/cmu/cmu-daz/05_14.bvh", "bvh/cmu/cmu-daz/16_36.bvh", "bvh/cmu/assimp/01_01.bvh"}) {
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    const std::vector<Segment> parts = find_segments(m, forward_kinematics(m), cs);
    ASSERT_GE(parts.size(), 2u) << file;
    const auto motion = std::find_if(parts.begin(), parts.end(), [](const Segment& p) { return p.end - p.begin > 10; });
    ASSERT_NE(motion, parts.end());
    EXPECT_LE(motion->begin, 8) << file << ": the T-pose and the exporter's blend out of it take a few frames";
  }
  // 05_14's right knee also jumps at 38 m/s for four frames (324-328, a capture glitch): split too.
  const std::vector<Segment> parts = find_segments(dance, forward_kinematics(dance), cs);
  EXPECT_EQ(parts.back().begin, 329);
  EXPECT_EQ(parts.back().end, dance.frame_count);

  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/xia2015/neutral_01_000.bvh", "bvh/cmu/bvh11/131_03.bvh",
                           "bvh/styles/semi-mst-m21/content/jump-across.bvh"}) {
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    EXPECT_EQ(find_segments(m, forward_kinematics(m), cs).size(), 1u) << file;
  }

  // A jump cut: the second half of a walk moved 1 m sideways.
  Motion walk = io::read_motion(test::shared_data() / "bvh/styles/xia2015/neutral_01_000.bvh").motion;
  const int cut = walk.frame_count / 2;
  for (int f = cut; f < walk.frame_count; ++f) walk.frame_translations(f)[0] += Vec3(1.0, 0, 0);
  const std::vector<Segment> split = find_segments(walk, forward_kinematics(walk), cs);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[1].begin, cut);
  // Filtered on their own, the halves are the halves filtered alone; across the cut the root
  // would get an anticipation of the jump.
  CartoonSettings whole = cs;
  whole.cut_speed = 0;
  whole.strength = 8;
  CartoonSettings parted = whole;
  parted.cut_speed = 12;
  auto root_error = [&](const CartoonResult& r) {
    double worst = 0;
    for (int f = cut - 10; f < cut + 10; ++f)
      worst = std::max(worst, (r.motion.translation(f, 0) - walk.translation(f, 0)).norm());
    return worst;
  };
  const double e_parted = root_error(cartoon_motion(walk, parted)), e_whole = root_error(cartoon_motion(walk, whole));
  std::cout << "[cut] root moved near the cut: split " << e_parted << " m, unsplit " << e_whole << " m\n";
  EXPECT_LT(e_parted, 0.05);
  EXPECT_GT(e_whole, 0.1);
}

}  // namespace
}  // namespace koma::cartoon
