#include "koma/timing/keytimes.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::timing {
namespace {

// The sample walk plants each stance toe tip exactly (zero speed). The ground-truth key of each
// planted run: the frame whose foot position (mean of ankle and toe tip, as the detector tracks
// it) is nearest the run's mean foot position. Read off the motion, not off the detector.
TEST(KeyTimes, SampleWalkFootKeysWithinOneFrame) {
  SampleSettings ss;
  ss.walk_cycles = 3;
  ss.jump = false;
  const Motion m = make_sample_motion(ss);
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  const KeyTimeReport rep = detect_key_times(m, roles);
  const WorldPoses w = forward_kinematics(m);
  const int n = m.frame_count;
  for (int side = 0; side < 2; ++side) {
    const std::string name = side == 0 ? "left_foot" : "right_foot";
    SCOPED_TRACE(name);
    const EffectorKeyTimes* e = rep.find(name);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->kind, KeyKind::contact);
    const int toe_tip = m.skeleton.joint_count() + (side == 0 ? 3 : 4);
    const int ankle = roles[side == 0 ? body::Role::left_ankle : body::Role::right_ankle];
    auto still = [&](int f) {
      return f > 0 && f + 1 < n && (w.position(f + 1, toe_tip) - w.position(f - 1, toe_tip)).norm() < 1e-9;
    };
    auto foot = [&](int f) { return 0.5 * (w.position(f, ankle) + w.position(f, toe_tip)); };
    int runs = 0;
    for (int f = 1; f + 1 < n; ++f) {
      if (!still(f) || still(f - 1)) continue;
      int g = f;
      while (still(g)) ++g;  // run [f, g)
      if (f <= 1 || g >= n - 1) {
        f = g;
        continue;  // runs touching the clip ends are cut: their mean is not the contact's
      }
      ++runs;
      Vec3 mean = Vec3::Zero();
      for (int k = f; k < g; ++k) mean += foot(k);
      mean /= (g - f);
      int truth = f;
      for (int k = f; k < g; ++k)
        if ((foot(k) - mean).norm() < (foot(truth) - mean).norm()) truth = k;
      int nearest = -1000;
      for (const KeyTime& k : e->keys)
        if (std::abs(k.frame - truth) < std::abs(nearest - truth)) nearest = k.frame;
      EXPECT_LE(std::abs(nearest - truth), 1) << "planted run " << f << ".." << g << " key " << truth;
      f = g;
    }
    EXPECT_GE(runs, ss.walk_cycles);
    for (const KeyTime& k : e->keys) {
      EXPECT_GE(k.frame, k.begin);
      EXPECT_LT(k.frame, k.end);
      EXPECT_GT(k.confidence, 0.0);
      EXPECT_LE(k.confidence, 1.0);
    }
  }
  // Hands and head have acceleration-minimum keys; the swing has at least one per cycle.
  for (const char* name : {"left_hand", "right_hand", "head"}) {
    const EffectorKeyTimes* e = rep.find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->kind, KeyKind::accel_min);
    EXPECT_GE(static_cast<int>(e->keys.size()), ss.walk_cycles) << name;
  }
}

// A point moving as x = sin(2 pi t): |a| is smallest where the speed peaks, at every half period.
TEST(KeyTimes, AccelerationMinimaOfASine) {
  const double rate = 60;
  std::vector<Vec3> track;
  for (int f = 0; f <= 240; ++f) track.emplace_back(std::sin(2 * kPi * f / rate), 0, 0);
  const std::vector<KeyTime> keys = acceleration_minima(track, rate, 0.0, 0.2, 0.1);
  // Zero crossings of sin at f = 30, 60, ..., 210 (interior).
  ASSERT_EQ(keys.size(), 7u);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_NEAR(keys[i].frame, 30.0 * static_cast<double>(i + 1), 1.0);
  // A constant-velocity track has no minima.
  std::vector<Vec3> line;
  for (int f = 0; f < 50; ++f) line.emplace_back(0.1 * f, 0, 0);
  EXPECT_TRUE(acceleration_minima(line, rate, 0.0, 0.2, 0.1).empty());
}

// A regular grid with jitter and missing beats (a salsa's pauses) is recovered; its half period
// fits as well and is not chosen; random times get a low confidence.
TEST(Beat, RecoversAGridAndRejectsNoise) {
  const double period = 0.47, phase = 0.13;
  std::vector<double> t;
  for (int k = 0; k < 40; ++k) {
    if (k % 4 == 3) continue;  // steps on 1 2 3, pause on 4
    const double jitter = 0.012 * std::sin(2.3 * k);  // deterministic, under 3 % of the period
    t.push_back(phase + k * period + jitter);
  }
  const Beat b = fit_beat(t);
  ASSERT_TRUE(b.found());
  EXPECT_NEAR(b.period, period, 0.005 * period);
  EXPECT_NEAR(b.nearest(phase + 10 * period), phase + 10 * period, 0.02);
  EXPECT_EQ(b.on_beat, static_cast<int>(t.size()));
  EXPECT_GT(b.confidence, 0.8);

  std::vector<double> noise;
  unsigned s = 12345;
  for (int k = 0; k < 30; ++k) {
    s = s * 1103515245u + 12345u;
    noise.push_back(20.0 * static_cast<double>((s >> 8) & 0xffff) / 65536.0);
  }
  EXPECT_LT(fit_beat(noise).confidence, 0.3);
  EXPECT_FALSE(fit_beat(std::vector<double>{1.0, 2.0}).found());
  EXPECT_THROW(fit_beat(std::vector<double>{1.0, NAN, 2.0}), Error);
  BeatSettings bad;
  bad.max_bpm = bad.min_bpm;
  EXPECT_THROW(fit_beat(t, {}, bad), Error);
}

TEST(KeyTimes, StepKeysMergeAndSort) {
  KeyTimeReport rep;
  rep.effectors.push_back({"left_foot", KeyKind::contact, {}, {{10, 5, 15, 0.5}, {50, 45, 55, 0.9}}, {}, false, {}});
  rep.effectors.push_back({"right_foot", KeyKind::contact, {}, {{30, 25, 35, 0.8}, {51, 48, 60, 0.95}}, {}, false, {}});
  rep.effectors.push_back({"head", KeyKind::accel_min, {}, {{20, 20, 21, 0.9}}, {}, false, {}});
  const std::vector<StepKey> keys = step_keys(rep, 2);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0].frame, 10);
  EXPECT_EQ(keys[1].frame, 30);
  EXPECT_EQ(keys[2].frame, 51);  // 50 and 51 merged, the more confident kept
  EXPECT_EQ(keys[2].foot, "right_foot");
}

// Visible steps counted once by hand, independently of koma's detector: the horizontal speed of
// each ankle (Foot_L / Foot_R from `koma positions ... --out-unit m`) printed as a strip, '_' where
// it is below 0.3 m/s, and the '_' runs counted per foot (partial runs at the clip ends count: the
// foot is visibly planted there). normal: 6 left + 7 right; sad: 7 + 8; angry: 7 + 6.
TEST(KeyTimes, RealWalkContactCountsMatchVisibleSteps) {
  KOMA_REQUIRE_SHARED_DATA();
  const struct {
    const char* file;
    int left, right;
  } cases[] = {{"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", 6, 7},
               {"bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh", 7, 8},
               {"bvh/styles/bandai-namco-1/dataset-1_walk_angry_001.bvh", 7, 6}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const Motion m = io::read_motion(test::shared_data() / c.file).motion;
    const KeyTimeReport rep = detect_key_times(m, body::find_joint_roles(m.skeleton));
    ASSERT_NE(rep.find("left_foot"), nullptr);
    ASSERT_NE(rep.find("right_foot"), nullptr);
    EXPECT_EQ(static_cast<int>(rep.find("left_foot")->keys.size()), c.left);
    EXPECT_EQ(static_cast<int>(rep.find("right_foot")->keys.size()), c.right);
    EXPECT_EQ(rep.attempts.size(), 1u) << "the default thresholds suffice for a walk";
  }
}

TEST(KeyTimes, Errors) {
  const Motion m = make_sample_motion();
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  KeyTimeSettings bad;
  bad.min_prominence = 1.0;
  EXPECT_THROW(detect_key_times(m, roles, bad), Error);
  bad = {};
  bad.fallbacks = {{0.0, 0.3}};
  EXPECT_THROW(bad.validate(), Error);
  bad = {};
  bad.contact.height_fraction = -1;
  EXPECT_THROW(bad.validate(), Error);
  // No foot role.
  try {
    detect_key_times(m, body::JointRoles{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "skeleton");
  }
  // Feet that never stop (the whole body flies along +X, fast): no contact with any threshold,
  // and the message lists every threshold tried.
  Motion flying = m;
  for (int f = 0; f < flying.frame_count; ++f) {
    flying.translations[static_cast<size_t>(f) * flying.joint_count()] += Vec3(5.0 * f / flying.frame_rate, 0, 0);
  }
  try {
    detect_key_times(flying, roles);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "foot contacts");
    const std::string msg = e.message();
    EXPECT_NE(msg.find("height_fraction 0.25 / speed_threshold 0.2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("height_fraction 0.35 / speed_threshold 0.3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("height_fraction 0.5 / speed_threshold 0.5"), std::string::npos) << msg;
  }
  KeyTimeSettings lenient;
  lenient.require_contacts = false;
  EXPECT_EQ(detect_key_times(flying, roles, lenient).contacts.contact_count(), 0);
  EXPECT_EQ(detect_key_times(flying, roles, lenient).attempts.size(), 3u);
  EXPECT_THROW(detect_key_times(rest_motion(m.skeleton, 30, 2), roles), Error);
  // Unknown role names (the --roles override) are errors.
  body::JointRoles r = roles;
  EXPECT_THROW(body::assign_role(r, m.skeleton, "left_tentacle", "LeftFoot"), Error);
}

}  // namespace
// A stance split by a brief hover (the same foot twice, nothing between, a short gap) is one step
// key, the longer contact's, spanning both; a longer gap (a hop) keeps two. Cut stances at the
// clip's ends are dropped, unless fewer than two full ones would remain.
TEST(KeyTimes, FullStepsMergeSplitStancesAndDropCutOnes) {
  const std::vector<StepKey> keys = {{2, "left_foot", 0.5, 0, 6},      // cut by the clip's start
                                     {19, "left_foot", 0.6, 18, 21},   // hover before touch-down ...
                                     {30, "left_foot", 0.9, 25, 40},   // ... then the stance
                                     {60, "right_foot", 0.9, 52, 68},
                                     {95, "left_foot", 0.9, 86, 104},
                                     {130, "left_foot", 0.9, 122, 138},  // a hop: 18 frames of flight
                                     {150, "right_foot", 0.9, 144, 160}};  // cut by the clip's end
  const std::vector<StepKey> s = full_steps(keys, 160, 5);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].frame, 30);
  EXPECT_EQ(s[0].begin, 18);
  EXPECT_EQ(s[0].end, 40);
  EXPECT_EQ(s[1].frame, 60);
  EXPECT_EQ(s[2].frame, 95);
  EXPECT_EQ(s[3].frame, 130);
  // Without merging the hover stays a step of its own (and the cut first stance still goes).
  EXPECT_EQ(full_steps(keys, 160).size(), 5u);
  // Too few full stances: every (merged) key is kept.
  const std::vector<StepKey> two = {{2, "left_foot", 0.5, 0, 6}, {20, "right_foot", 0.9, 12, 30}};
  EXPECT_EQ(full_steps(two, 40).size(), 2u);
}

}  // namespace koma::timing
