#include "koma/timing/contacts.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::timing {
namespace {

TEST(JointRoles, SampleSkeleton) {
  const Skeleton s = sample_skeleton();
  const JointRoles r = find_joint_roles(s);
  auto name = [&](Role role) { return r.has(role) ? s.point_name(r[role]) : std::string("<none>"); };
  EXPECT_EQ(name(Role::hips), "Hips");
  EXPECT_EQ(name(Role::spine), "Spine");
  EXPECT_EQ(name(Role::neck), "Neck");
  EXPECT_EQ(name(Role::head), "Head");
  EXPECT_EQ(name(Role::left_hand), "LeftHand");
  EXPECT_EQ(name(Role::left_elbow), "LeftForeArm");
  EXPECT_EQ(name(Role::left_shoulder), "LeftArm");
  EXPECT_EQ(name(Role::right_hand), "RightHand");
  EXPECT_EQ(name(Role::left_hip), "LeftUpLeg");
  EXPECT_EQ(name(Role::left_knee), "LeftLeg");
  EXPECT_EQ(name(Role::left_ankle), "LeftFoot");
  EXPECT_EQ(name(Role::left_toe), "LeftToeBase");
  EXPECT_EQ(name(Role::right_hip), "RightUpLeg");
  EXPECT_EQ(name(Role::right_knee), "RightLeg");
  EXPECT_EQ(name(Role::right_ankle), "RightFoot");
  EXPECT_EQ(name(Role::right_toe), "RightToeBase");
}

TEST(JointRoles, NameSides) {
  for (const char* n : {"LeftFoot", "lFoot", "LHipJoint", "Foot_L", "foot.L", "mixamorig:LeftFoot", "thigh_L",
                        "l_ankle", "joint_LeftFoot"})
    EXPECT_EQ(name_side(n), -1) << n;
  for (const char* n : {"RightFoot", "rShin", "RHipJoint", "Hand_R", "calf_R", "mixamorig:RightHand"})
    EXPECT_EQ(name_side(n), 1) << n;
  for (const char* n : {"Hips", "LowerBack", "lowerneck", "Root", "joint_Root", "Head", "hip", "", "L"})
    EXPECT_EQ(name_side(n), 0) << n;
}

TEST(JointRoles, OverridesAndErrors) {
  const Skeleton s = sample_skeleton();
  JointRoles r = find_joint_roles(s);
  assign_role(r, s, "left_ankle", "LeftLeg");
  EXPECT_EQ(r[Role::left_ankle], s.find("LeftLeg"));
  assign_role(r, s, "left_toe", "LeftToeBase_end");  // end sites allowed for toes
  EXPECT_EQ(s.point_name(r[Role::left_toe]), "LeftToeBase_end");
  try {
    assign_role(r, s, "left_tail", "Hips");
    FAIL() << "unknown role accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(std::string(e.what()).find("left_ankle"), std::string::npos) << "lists valid roles";
  }
  try {
    assign_role(r, s, "head", "Skull");
    FAIL() << "unknown joint accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
  }
  EXPECT_THROW(assign_role(r, s, "head", "LeftToeBase_end"), Error) << "end site for a joint role";
  EXPECT_EQ(parse_role("right_toe"), Role::right_toe);
  EXPECT_EQ(role_name(Role::left_knee), "left_knee");
}

// Every dialect in the corpus: expected foot, knee and hand names read off the files' hierarchies.
TEST(JointRoles, RealSkeletonDialects) {
  KOMA_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    const char *left_ankle, *left_knee, *left_hip, *right_hand, *hips, *head;
  };
  const Case cases[] = {
      {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", "Foot_L", "LowerLeg_L", "UpperLeg_L", "Hand_R",
       "Hips", "Head"},
      {"bvh/styles/xia2015/neutral_01_000.bvh", "LeftFoot", "LeftLeg", "LeftUpLeg", "RightHand", "Hips", "Head"},
      {"bvh/styles/semi-mst-m21/content/walk.bvh", "LeftFoot", "LeftLeg", "LeftUpLeg", "RightHand", "Hips",
       "Head"},
      {"bvh/cmu/bvh11/131_01.bvh", "LeftAnkle", "LeftKnee", "LeftHip", "RightWrist", "Hips", "Head"},
      {"bvh/cmu/cmu-daz/05_01.bvh", "lFoot", "lShin", "lThigh", "rHand", "hip", "head"},
      {"bvh/exporters/cmu-mocap-pose-library-blender/01-01 v01.bvh", "foot_L", "calf_L", "thigh_L", "hand_R",
       "pelvis", "head"},
      {"bvh/exporters/20tab-bvh-python/test_freebvh.bvh", "mixamorig:LeftFoot", "mixamorig:LeftLeg",
       "mixamorig:LeftUpLeg", "mixamorig:RightHand", "mixamorig:Hips", "mixamorig:Head"},
      {"bvh/exporters/assimp/Boxing_Toes.bvh", "LeftAnkle", "LeftKnee", "LeftHip", "RightWrist", "Hips", "Head"},
      {"bvh/exporters/jaanga-cmu-old/drunk1.bvh", "lFoot", "lShin", "lThigh", "rHand", "hip", "head"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const Motion m = io::read_motion(test::shared_data() / c.file).motion;
    const JointRoles r = find_joint_roles(m.skeleton);
    auto name = [&](Role role) { return r.has(role) ? m.skeleton.point_name(r[role]) : std::string("<none>"); };
    EXPECT_EQ(name(Role::left_ankle), c.left_ankle);
    EXPECT_EQ(name(Role::left_knee), c.left_knee);
    EXPECT_EQ(name(Role::left_hip), c.left_hip);
    EXPECT_EQ(name(Role::right_hand), c.right_hand);
    EXPECT_EQ(name(Role::hips), c.hips);
    EXPECT_EQ(name(Role::head), c.head);
    EXPECT_TRUE(r.has(Role::right_ankle) && r.has(Role::left_toe) && r.has(Role::right_toe));
  }
}

TEST(Lowpass, KeepsRampsAndIsZeroPhase) {
  std::vector<Vec3> ramp, sine;
  for (int i = 0; i < 200; ++i) {
    ramp.emplace_back(0.5 * i - 3, -0.25 * i, 7.0);
    sine.emplace_back(std::sin(2 * kPi * 1.0 * i / 120.0), 0, 0);  // 1 Hz at 120 fps
  }
  const auto r = lowpass_zero_phase(ramp, 120, 6);
  for (int i = 0; i < 200; ++i) EXPECT_VEC3_NEAR(r[i], ramp[i], 1e-9);
  const auto s = lowpass_zero_phase(sine, 120, 6);
  // Gain at 1 Hz with a 6 Hz -3 dB cut-off: exp(-2 pi^2 sigma^2 f^2) = 2^(-(1/6)^2 / 2).
  const double gain = std::pow(2.0, -1.0 / 72.0);
  for (int i = 40; i < 160; ++i) EXPECT_NEAR(s[i].x(), gain * sine[i].x(), 2e-4) << i;
}

// The sample walk plants the stance foot by construction: while a foot anchors the body its toe
// tip does not move at all. Those frames (read off the motion: zero toe-tip speed) must be found.
TEST(Contacts, SampleWalkKnownStances) {
  SampleSettings ss;
  ss.walk_cycles = 3;
  ss.jump = true;
  const Motion m = make_sample_motion(ss);
  const ContactReport rep = detect_foot_contacts(m);
  ASSERT_EQ(rep.effectors.size(), 2u);
  const WorldPoses w = forward_kinematics(m);
  const int n = m.frame_count;
  const int walk_frames = static_cast<int>(ss.walk_cycles * ss.cycle_seconds * ss.frame_rate);
  for (int side = 0; side < 2; ++side) {
    const EffectorContacts& ec = rep.effectors[side];
    SCOPED_TRACE(ec.effector.name);
    EXPECT_EQ(ec.effector.name, side == 0 ? "left_foot" : "right_foot");
    const int toe_tip = m.skeleton.joint_count() + (side == 0 ? 3 : 4);
    auto still = [&](int f) { return (w.position(f + 1, toe_tip) - w.position(f - 1, toe_tip)).norm() < 1e-9; };
    // Runs of exactly-still frames during the walk (interior frames of each run: the smoothing
    // blurs the run's ends by about one frame).
    int planted = 0, found = 0, runs = 0;
    for (int f = 2; f + 2 < walk_frames; ++f) {
      if (still(f) && !still(f - 1)) ++runs;
      if (still(f) && still(f - 1) && still(f + 1)) {
        ++planted;
        found += ec.in_contact[f];
      }
    }
    EXPECT_GE(runs, ss.walk_cycles) << "the sample walk has one planted run per foot and cycle";
    EXPECT_GE(found, 0.9 * planted);
    for (const Contact& c : ec.contacts) {
      if (c.key_frame >= walk_frames) continue;
      const Vec3 tip = w.position(c.key_frame, toe_tip);
      EXPECT_LT(std::hypot(tip.x() - c.mean_position.x(), tip.z() - c.mean_position.z()), 0.15);
      EXPECT_GT(c.confidence, 0.0);
      EXPECT_LE(c.confidence, 1.0);
    }
    // No contact while the foot is fast (swing) or in the jump's flight.
    const double flight_b = ss.walk_cycles * ss.cycle_seconds + 0.85, flight_e = flight_b + 0.35;
    for (int f = 1; f + 1 < n; ++f) {
      if (!ec.in_contact[f]) continue;
      const Vec3 v = (w.position(f + 1, toe_tip) - w.position(f - 1, toe_tip)) * ss.frame_rate / 2;
      EXPECT_LT(std::hypot(v.x(), v.z()), 0.6) << "frame " << f;
      EXPECT_FALSE(f / ss.frame_rate > flight_b && f / ss.frame_rate < flight_e) << "contact in flight, frame " << f;
    }
    // Contacts are disjoint, ordered, and in_contact matches them.
    int total = 0;
    for (size_t i = 0; i < ec.contacts.size(); ++i) {
      const Contact& c = ec.contacts[i];
      EXPECT_LT(c.begin, c.end);
      EXPECT_GE(c.key_frame, c.begin);
      EXPECT_LT(c.key_frame, c.end);
      if (i > 0) { EXPECT_GT(c.begin, ec.contacts[i - 1].end); }
      total += c.length();
    }
    int flagged = 0;
    for (auto v : ec.in_contact) flagged += v;
    EXPECT_EQ(flagged, total);
  }
}

TEST(Contacts, StandingStillIsOneLongContact) {
  const Motion m = rest_motion(sample_skeleton(), 30, 40);
  const ContactReport rep = detect_foot_contacts(m);
  for (const auto& ec : rep.effectors) {
    ASSERT_EQ(ec.contacts.size(), 1u) << ec.effector.name;
    EXPECT_EQ(ec.contacts[0].begin, 0);
    EXPECT_EQ(ec.contacts[0].end, 40);
  }
}

TEST(Contacts, Errors) {
  const Motion m = make_sample_motion();
  ContactSettings bad;
  bad.height_fraction = 0;
  EXPECT_THROW(detect_foot_contacts(m, bad), Error);
  bad = {};
  bad.speed_threshold = std::nan("");
  EXPECT_THROW(bad.validate(), Error);
  bad = {};
  bad.accel_threshold = -1;
  EXPECT_THROW(bad.validate(), Error);
  EXPECT_THROW(detect_foot_contacts(rest_motion(sample_skeleton(), 30, 2)), Error);
  const std::vector<Effector> none{{"ghost", {}}}, out_of_range{{"ghost", {999}}};
  EXPECT_THROW(detect_contacts(m, none), Error);
  EXPECT_THROW(detect_contacts(m, out_of_range), Error);
  Skeleton blob;
  blob.names = {"a", "b"};
  blob.parents = {-1, 0};
  blob.offsets = {Vec3::Zero(), Vec3(0, 1, 0)};
  blob.channels = {{}, {}};
  try {
    detect_foot_contacts(rest_motion(blob, 30, 10));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
}

// Real walks: both feet alternate, each foot is planted 35-80 % of the time, and while planted the
// toe moves far slower than the body travels.
TEST(Contacts, RealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh",
                           "bvh/styles/xia2015/neutral_01_000.bvh", "bvh/styles/semi-mst-m21/content/walk.bvh",
                           "bvh/exporters/pymo/AV_8Walk_Meredith_HVHA_Rep1.bvh"}) {
    SCOPED_TRACE(file);
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    const ContactReport rep = detect_foot_contacts(m);
    ASSERT_EQ(rep.effectors.size(), 2u);
    const WorldPoses w = forward_kinematics(m);
    const int n = m.frame_count;
    const int hips = find_joint_roles(m.skeleton)[Role::hips];
    double path = 0;
    for (int f = 1; f < n; ++f) {
      const Vec3 d = w.position(f, hips) - w.position(f - 1, hips);
      path += std::hypot(d.x(), d.z());
    }
    const double root_speed = path / m.duration();
    std::vector<std::pair<int, int>> keys;  // (key frame, side)
    for (int side = 0; side < 2; ++side) {
      const EffectorContacts& ec = rep.effectors[side];
      EXPECT_GE(ec.contacts.size(), 2u) << ec.effector.name;
      int flagged = 0;
      double planted_speed = 0;
      const int toe = ec.effector.points.back();
      for (int f = 1; f + 1 < n; ++f) {
        if (!ec.in_contact[f]) continue;
        ++flagged;
        const Vec3 v = (w.position(f + 1, toe) - w.position(f - 1, toe)) * m.frame_rate / 2;
        planted_speed += std::hypot(v.x(), v.z());
      }
      const double fraction = static_cast<double>(flagged) / n;
      EXPECT_GT(fraction, 0.35) << ec.effector.name;
      EXPECT_LT(fraction, 0.85) << ec.effector.name;
      EXPECT_LT(planted_speed / std::max(flagged, 1), 0.25 * root_speed) << ec.effector.name;
      for (const Contact& c : ec.contacts) keys.emplace_back(c.key_frame, side);
    }
    // Steps alternate: sorted by key frame, consecutive contacts mostly change side.
    std::sort(keys.begin(), keys.end());
    int alternations = 0;
    for (size_t i = 1; i < keys.size(); ++i) alternations += keys[i].second != keys[i - 1].second;
    EXPECT_GE(alternations, static_cast<int>(keys.size()) - 2);
  }
}

}  // namespace
}  // namespace koma::timing
