#include "koma/core/rotation.hpp"

#include <cctype>
#include <algorithm>
#include <cmath>
#include <string>

#include "koma/core/units.hpp"

namespace koma {

std::string_view to_string(EulerOrder order) noexcept { return kEulerOrderNames.name(order); }


std::optional<EulerOrder> parse_euler_order(std::string_view text) noexcept {
  return kEulerOrderNames.parse(text);
}


std::array<int, 3> euler_axes(EulerOrder order) noexcept {
  const std::string_view name = to_string(order);
  return {name[0] - 'X', name[1] - 'X', name[2] - 'X'};
}

Quat euler_to_quat(const Vec3& angles, EulerOrder order) noexcept {
  const auto axes = euler_axes(order);
  Quat q = Quat::Identity();
  for (int i = 0; i < 3; ++i) {
    q = q * Quat(Eigen::AngleAxisd(angles[i], Vec3::Unit(axes[i])));
  }
  return q.normalized();
}

namespace {

double wrap_near(double angle, double near) {
  return angle + 2.0 * kPi * std::round((near - angle) / (2.0 * kPi));
}

}  // namespace

Vec3 quat_to_euler(const Quat& q, EulerOrder order, const Vec3& near) noexcept {
  // Closed form for R = Ra(a) Rb(b) Rc(c) with distinct axes (a, b, c). With the parity sign s of
  // the permutation (a, b, c), the middle angle is asin(s * R[a][c]) and the outer two follow from
  // the remaining entries of row a and column c.
  const auto ax = euler_axes(order);
  const int a = ax[0], b = ax[1], c = ax[2];
  const double s = ((b - a + 3) % 3 == 1) ? 1.0 : -1.0;  // even permutation of XYZ -> +1
  const Eigen::Matrix3d m = q.normalized().toRotationMatrix();
  const double sb = std::clamp(s * m(a, c), -1.0, 1.0);
  Vec3 first;
  first[1] = std::asin(sb);
  if (std::abs(sb) < 1.0 - 1e-12) {
    first[0] = std::atan2(-s * m(b, c), m(c, c));
    first[2] = std::atan2(-s * m(a, b), m(a, a));
  } else {
    // Gimbal lock: only a +- c is defined; keep c at its previous value.
    first[2] = near[2];
    const Eigen::Matrix3d rc = Eigen::AngleAxisd(first[2], Vec3::Unit(c)).toRotationMatrix();
    const Eigen::Matrix3d rb = Eigen::AngleAxisd(first[1], Vec3::Unit(b)).toRotationMatrix();
    const Eigen::Matrix3d ra = m * (rb * rc).transpose();
    // ra is a pure rotation about axis a: read its angle from the (a+1, a+2) plane.
    first[0] = std::atan2(ra((a + 2) % 3, (a + 1) % 3), ra((a + 1) % 3, (a + 1) % 3));
  }
  // The other solution: (a + pi, pi - b, c + pi).
  Vec3 second(first[0] + kPi, kPi - first[1], first[2] + kPi);
  Vec3 best;
  double best_dist = INFINITY;
  for (const Vec3& cand : {first, second}) {
    Vec3 w;
    for (int i = 0; i < 3; ++i) w[i] = wrap_near(cand[i], near[i]);
    const double d = (w - near).squaredNorm();
    if (d < best_dist) {
      best_dist = d;
      best = w;
    }
  }
  return best;
}

Vec3 quat_log(const Quat& q_in) noexcept {
  Quat q = q_in.normalized();
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  const double sin_half = q.vec().norm();
  if (sin_half < 1e-12) return 2.0 * q.vec();
  const double angle = 2.0 * std::atan2(sin_half, q.w());
  return q.vec() * (angle / sin_half);
}

Quat quat_exp(const Vec3& v) noexcept {
  const double angle = v.norm();
  if (angle < 1e-12) return Quat(1.0, 0.5 * v.x(), 0.5 * v.y(), 0.5 * v.z()).normalized();
  return Quat(Eigen::AngleAxisd(angle, v / angle));
}

Quat slerp(const Quat& a, const Quat& b, double t) noexcept {
  return a.slerp(t, b).normalized();  // Eigen's slerp takes the shorter arc
}

}  // namespace koma
