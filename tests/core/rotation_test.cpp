#include "koma/core/rotation.hpp"

#include <gtest/gtest.h>

#include <random>

#include "koma/core/units.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

constexpr EulerOrder kOrders[] = {EulerOrder::XYZ, EulerOrder::XZY, EulerOrder::YXZ,
                                  EulerOrder::YZX, EulerOrder::ZXY, EulerOrder::ZYX};

Eigen::Matrix3d axis_matrix(int axis, double angle) {
  return Eigen::AngleAxisd(angle, Vec3::Unit(axis)).toRotationMatrix();
}

TEST(Rotation, EulerToQuatIsProductInListedOrder) {
  for (EulerOrder o : kOrders) {
    const Vec3 a(0.3, -0.7, 1.1);
    const auto ax = euler_axes(o);
    const Eigen::Matrix3d expected = axis_matrix(ax[0], a[0]) * axis_matrix(ax[1], a[1]) * axis_matrix(ax[2], a[2]);
    EXPECT_LE((euler_to_quat(a, o).toRotationMatrix() - expected).cwiseAbs().maxCoeff(), 1e-12) << to_string(o);
  }
}

TEST(Rotation, QuatToEulerRoundTripsEveryOrder) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3.0, 3.0), mid(-1.5, 1.5);
  for (EulerOrder o : kOrders) {
    for (int i = 0; i < 500; ++i) {
      const Vec3 a(u(rng), mid(rng), u(rng));
      const Quat q = euler_to_quat(a, o);
      const Vec3 back = quat_to_euler(q, o, a);
      EXPECT_LE((back - a).cwiseAbs().maxCoeff(), 1e-9) << to_string(o) << " " << a.transpose();
      EXPECT_QUAT_NEAR(euler_to_quat(back, o), q, 1e-9);
    }
  }
}

TEST(Rotation, QuatToEulerStaysNearPreviousAnglesBeyond180) {
  // An angle of 370 degrees written by an exporter comes back as 370, not 10, given its neighbour.
  const Vec3 a(370.0 * kDegToRad, 20.0 * kDegToRad, -200.0 * kDegToRad);
  const Vec3 back = quat_to_euler(euler_to_quat(a, EulerOrder::ZXY), EulerOrder::ZXY, a + Vec3::Constant(0.01));
  EXPECT_LE((back - a).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Rotation, GimbalLockStillReproducesTheRotation) {
  for (EulerOrder o : kOrders) {
    const Vec3 a(0.4, kPi / 2, -0.2);
    const Quat q = euler_to_quat(a, o);
    EXPECT_QUAT_NEAR(euler_to_quat(quat_to_euler(q, o), o), q, 1e-6) << to_string(o);
  }
}

TEST(Rotation, LogExpAreInverse) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  for (int i = 0; i < 200; ++i) {
    const Quat q = Quat(n(rng), n(rng), n(rng), n(rng)).normalized();
    EXPECT_QUAT_NEAR(quat_exp(quat_log(q)), q, 1e-12);
    EXPECT_LE(quat_log(q).norm(), kPi + 1e-12);
  }
  EXPECT_QUAT_NEAR(quat_exp(Vec3::Zero()), Quat::Identity(), 0.0);
}

TEST(Rotation, SlerpTakesShorterArcAndStaysUnit) {
  const Quat a = euler_to_quat(Vec3(0, 0, 0), EulerOrder::XYZ);
  Quat b = euler_to_quat(Vec3(0, 0, 1.0), EulerOrder::XYZ);
  b.coeffs() *= -1;  // same rotation, other hemisphere
  const Quat mid = slerp(a, b, 0.5);
  EXPECT_NEAR(mid.norm(), 1.0, 1e-12);
  EXPECT_NEAR(test::rotation_angle(mid, a), 0.5, 1e-9);
}

TEST(Rotation, ParsesOrderNames) {
  EXPECT_EQ(parse_euler_order("zxy"), EulerOrder::ZXY);
  EXPECT_FALSE(parse_euler_order("XXY").has_value());
}

}  // namespace
}  // namespace koma
