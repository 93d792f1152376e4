#include "koma/body/roles.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::body {
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
      // FBX: Mixamo names without the prefix under a "Human Armature" root joint.
      {"fbx/quaternius_AnimatedHuman.fbx", "LeftFoot", "LeftLeg", "LeftUpLeg", "RightHand", "Hips", "Head"},
      // FBX: Blender .L/.R rig whose IK feet hang from the root bone, hands named Palm.
      {"fbx/quaternius_Male_Casual.fbx", "Foot.L", "LowerLeg.L", "UpperLeg.L", "Palm.R", "Hips", "Head"},
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

}  // namespace
}  // namespace koma::body
