#include "koma/core/fk.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

// A three-joint chain along +Y with 1 m bones and an end site.
Skeleton chain(EulerOrder order) {
  Skeleton s;
  const auto ax = euler_axes(order);
  std::vector<Channel> rot;
  for (int a : ax) rot.push_back(static_cast<Channel>(static_cast<int>(Channel::Xrotation) + a));
  s.names = {"a", "b", "c"};
  s.parents = {-1, 0, 1};
  s.offsets = {Vec3(0, 0, 0), Vec3(0, 1, 0), Vec3(0, 1, 0)};
  s.channels = {rot, rot, rot};
  s.end_sites = {{2, Vec3(0, 1, 0)}};
  return s;
}

TEST(ForwardKinematics, RestPoseIsBindPose) {
  const Skeleton s = sample_skeleton();
  const WorldPoses w = forward_kinematics(rest_motion(s, 30, 2));
  for (int f = 0; f < 2; ++f) {
    for (int j = 0; j < s.joint_count(); ++j) {
      Vec3 expected = Vec3::Zero();
      for (int k = j; k >= 0; k = s.parents[k]) expected += s.offsets[k];
      EXPECT_VEC3_NEAR(w.position(f, j), expected, 1e-12);
    }
  }
}

// Hand-computed: each joint turns 90 degrees about one axis; the chain's end points are known.
TEST(ForwardKinematics, HandComputedChainsInEverySixOrders) {
  for (EulerOrder o : {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ, EulerOrder::YZX, EulerOrder::ZXY,
                       EulerOrder::ZYX}) {
    const Skeleton s = chain(o);
    Motion m = rest_motion(s, 30, 1);
    // Root: +90 deg about Z (as the order's Z slot). Joint b: +90 deg about X.
    const auto ax = euler_axes(o);
    auto angles_for = [&](int axis, double angle) {
      Vec3 v = Vec3::Zero();
      for (int i = 0; i < 3; ++i) if (ax[i] == axis) v[i] = angle;
      return v;
    };
    m.rotations[0] = euler_to_quat(angles_for(2, kPi / 2), o);
    m.rotations[1] = euler_to_quat(angles_for(0, kPi / 2), o);
    const WorldPoses w = forward_kinematics(m);
    // Rz(90) maps +Y to -X: b at (-1, 0, 0). Rz*Rx(90) maps +Y to Rz(+Z) = +Z: c at (-1, 0, 1),
    // end at (-1, 0, 2).
    EXPECT_VEC3_NEAR(w.position(0, 1), Vec3(-1, 0, 0), 1e-12) << to_string(o);
    EXPECT_VEC3_NEAR(w.position(0, 2), Vec3(-1, 0, 1), 1e-12) << to_string(o);
    EXPECT_VEC3_NEAR(w.position(0, 3), Vec3(-1, 0, 2), 1e-12) << to_string(o);
  }
}

TEST(ForwardKinematics, MixedAnglesMatchMatrixProduct) {
  for (EulerOrder o : {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ, EulerOrder::YZX, EulerOrder::ZXY,
                       EulerOrder::ZYX}) {
    const Skeleton s = chain(o);
    Motion m = rest_motion(s, 30, 1);
    const Vec3 a0(0.3, -0.5, 0.8), a1(-1.1, 0.4, 0.2);
    m.rotations[0] = euler_to_quat(a0, o);
    m.rotations[1] = euler_to_quat(a1, o);
    m.translations[0] = Vec3(1, 2, 3);
    const auto ax = euler_axes(o);
    auto mat = [&](const Vec3& a) {
      Eigen::Matrix3d r = Eigen::Matrix3d::Identity();
      for (int i = 0; i < 3; ++i) r = r * Eigen::AngleAxisd(a[i], Vec3::Unit(ax[i])).toRotationMatrix();
      return r;
    };
    const Eigen::Matrix3d r0 = mat(a0), r1 = mat(a1);
    const Vec3 b = Vec3(1, 2, 3) + r0 * Vec3(0, 1, 0);
    const Vec3 c = b + r0 * r1 * Vec3(0, 1, 0);
    const WorldPoses w = forward_kinematics(m);
    EXPECT_VEC3_NEAR(w.position(0, 2), c, 1e-12) << to_string(o);
    EXPECT_LE((w.rotations[1].toRotationMatrix() - r0 * r1).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(ForwardKinematics, SpanOverloadMatchesValueForm) {
  const Motion m = make_sample_motion();
  const WorldPoses w = forward_kinematics(m);
  std::vector<Vec3> pos(m.skeleton.point_count());
  std::vector<Quat> rot(m.joint_count());
  for (int f : {0, 50, m.frame_count - 1}) {
    forward_kinematics(m.skeleton, m.frame_rotations(f), m.frame_translations(f), {}, pos, rot);
    for (int p = 0; p < m.skeleton.point_count(); ++p) EXPECT_VEC3_NEAR(pos[p], w.position(f, p), 0.0);
  }
}

TEST(Sample, FeetArePlantedAndOnTheGround) {
  const Motion m = make_sample_motion();
  m.validate();
  const WorldPoses w = forward_kinematics(m);
  const int toes[2] = {m.skeleton.joint_count() + 3, m.skeleton.joint_count() + 4};
  double lowest = INFINITY;
  for (int f = 0; f < m.frame_count; ++f) {
    lowest = std::min({lowest, w.position(f, toes[0]).y(), w.position(f, toes[1]).y()});
  }
  EXPECT_GE(lowest, -0.06);
  // The character travels forward.
  EXPECT_GT(w.position(m.frame_count - 1, 0).z() - w.position(0, 0).z(), 2.0);
}

TEST(Sample, RejectsEmptySettings) {
  SampleSettings s;
  s.walk_cycles = 0;
  s.jump = false;
  EXPECT_THROW(make_sample_motion(s), Error);
}


// Issue 19: squash and stretch is stored as glTF node scale, so the preview must place points as a
// glTF viewer does: world = parent * T * R * S, the scale of a joint scaling everything below it.
TEST(ForwardKinematics, ScalesFollowGltfNodeSemantics) {
  const Motion base = make_sample_motion();
  Motion m = base;
  const int jn = m.joint_count();
  m.scales.assign(m.rotations.size(), Vec3::Ones());
  for (int f = 0; f < m.frame_count; ++f) {
    for (int j = 0; j < jn; ++j) {
      const double t = 0.37 * f + 1.3 * j;
      m.scales[static_cast<size_t>(f) * jn + j] = Vec3(1 + 0.3 * std::sin(t), 1 - 0.2 * std::cos(t), 1 + 0.1 * std::sin(2 * t));
    }
  }
  const WorldPoses w = forward_kinematics(m);
  const WorldPoses rigid = forward_kinematics(base);
  double moved = 0;
  for (int f : {0, 17, m.frame_count - 1}) {
    std::vector<Eigen::Affine3d> world(static_cast<size_t>(jn));
    for (int j = 0; j < jn; ++j) {
      const size_t i = static_cast<size_t>(f) * jn + j;
      const Eigen::Affine3d local =
          Eigen::Translation3d(m.translations[i]) * m.rotations[i] * Eigen::Scaling(m.scales[i]);
      const int p = m.skeleton.parents[j];
      world[j] = p < 0 ? local : world[p] * local;
      EXPECT_VEC3_NEAR(w.position(f, j), world[j].translation(), 1e-12) << m.skeleton.names[j];
      EXPECT_TRUE(w.rotations[i].isApprox(rigid.rotations[i], 1e-12)) << "rotations stay the rotation chain";
      moved = std::max(moved, (w.position(f, j) - rigid.position(f, j)).norm());
    }
    for (int e = 0; e < m.skeleton.end_site_count(); ++e) {
      const EndSite& site = m.skeleton.end_sites[e];
      EXPECT_VEC3_NEAR(w.position(f, jn + e), world[site.parent] * site.offset, 1e-12);
    }
  }
  EXPECT_GT(moved, 0.01) << "the scales must move the points";
  // Unit scales change nothing.
  Motion ones = base;
  ones.scales.assign(ones.rotations.size(), Vec3::Ones());
  const WorldPoses u = forward_kinematics(ones);
  for (size_t i = 0; i < u.positions.size(); ++i) EXPECT_VEC3_NEAR(u.positions[i], rigid.positions[i], 1e-12);
}

}  // namespace
}  // namespace koma
