// The cartoon filter's leg IK step (src/cartoon/leg_ik.hpp) on a three-bone leg.
#include "cartoon/leg_ik.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace koma::cartoon {
namespace {

// root -> hip -> knee -> ankle, 0.45 m bones hanging down, the knee bent `bend` rad about X.
Motion leg(double bend, int frames = 3) {
  Motion m;
  m.skeleton.names = {"root", "hip", "knee", "ankle"};
  m.skeleton.parents = {-1, 0, 1, 2};
  m.skeleton.offsets = {Vec3(0, 1, 0), Vec3(0.1, 0, 0), Vec3(0, -0.45, 0), Vec3(0, -0.45, 0)};
  m.skeleton.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation,
                          Channel::Xrotation, Channel::Yrotation},
                         {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation},
                         {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation},
                         {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation}};
  m.frame_rate = 30;
  m.frame_count = frames;
  for (int f = 0; f < frames; ++f) {
    for (int j = 0; j < 4; ++j) {
      m.rotations.push_back(j == 2 ? Quat(Eigen::AngleAxisd(bend, Vec3::UnitX())) : Quat::Identity());
      m.translations.push_back(m.skeleton.offsets[static_cast<size_t>(j)]);
    }
  }
  return m;
}

TEST(LegIk, HingeIsTheKneeAxis) {
  const Motion m = leg(0.4);
  const detail::Hinge h = detail::knee_hinge(m, forward_kinematics(m), 1, 2, 3);
  EXPECT_VEC3_NEAR(h.axis, Vec3::UnitX(), 1e-12);
}

TEST(LegIk, ReachableTargetIsReachedAndTheAnkleTakesTheRotation) {
  Motion m = leg(0.4);
  const WorldPoses w = forward_kinematics(m);
  const detail::Hinge h = detail::knee_hinge(m, w, 1, 2, 3);
  const Vec3 target = w.position(0, 3) + Vec3(0.05, 0.08, 0.03);
  const Quat ankle_rot(Eigen::AngleAxisd(0.3, Vec3::UnitY()));
  std::vector<Vec3> wp(4);
  std::vector<Quat> wr(4);
  EXPECT_TRUE(detail::solve_leg(m.skeleton, m.frame_rotations(0), m.frame_translations(0), wp, wr, 1, 2, 3,
                                target, ankle_rot, h, h.sign));
  const WorldPoses after = forward_kinematics(m);
  EXPECT_VEC3_NEAR(after.position(0, 3), target, 1e-6);
  EXPECT_QUAT_NEAR(after.rotations[3], ankle_rot, 1e-9);
  // Bone lengths are kept (rotations only).
  EXPECT_NEAR((after.position(0, 2) - after.position(0, 1)).norm(), 0.45, 1e-12);
  EXPECT_NEAR((after.position(0, 3) - after.position(0, 2)).norm(), 0.45, 1e-12);
}

TEST(LegIk, OutOfReachTargetIsReportedAndClamped) {
  Motion m = leg(0.4);
  const WorldPoses w = forward_kinematics(m);
  const detail::Hinge h = detail::knee_hinge(m, w, 1, 2, 3);
  const Vec3 target = w.position(0, 1) + Vec3(0, -2.0, 0);  // 2 m below the hip; the leg is 0.9 m
  std::vector<Vec3> wp(4);
  std::vector<Quat> wr(4);
  EXPECT_FALSE(detail::solve_leg(m.skeleton, m.frame_rotations(0), m.frame_translations(0), wp, wr, 1, 2, 3,
                                 target, Quat::Identity(), h, h.sign));
  const WorldPoses after = forward_kinematics(m);
  // Soft IK: nearly straight, towards the target, never past full extension.
  const double reach = (after.position(0, 3) - after.position(0, 1)).norm();
  EXPECT_LE(reach, 0.9 + 1e-9);
  EXPECT_GT(reach, 0.88);
  EXPECT_GT((after.position(0, 3) - after.position(0, 1)).normalized().dot(-Vec3::UnitY()), 0.999);
}

// A hinge that is not perpendicular to the bones (an estimated knee axis on a real rig): a deep
// crouch's target is still reached exactly, on the side the knee is bent to. (The law-of-cosines
// angle about a tilted hinge missed a landing crouch by 2.5 cm.)
TEST(LegIk, DeepBendIsReachedAboutATiltedHinge) {
  Motion m = leg(0.4);
  const WorldPoses w = forward_kinematics(m);
  detail::Hinge h = detail::knee_hinge(m, w, 1, 2, 3);
  h.axis = Vec3(1, 0.35, 0.2).normalized();
  for (double depth : {0.3, 0.5, 0.7}) {
    const Vec3 target = w.position(0, 1) + Vec3(0.02, -depth, 0.12);
    std::vector<Vec3> wp(4);
    std::vector<Quat> wr(4);
    EXPECT_TRUE(detail::solve_leg(m.skeleton, m.frame_rotations(0), m.frame_translations(0), wp, wr, 1, 2, 3, target,
                                  Quat::Identity(), h, h.sign));
    const WorldPoses after = forward_kinematics(m);
    EXPECT_VEC3_NEAR(after.position(0, 3), target, 1e-9) << "depth " << depth;
  }
}

}  // namespace
}  // namespace koma::cartoon
