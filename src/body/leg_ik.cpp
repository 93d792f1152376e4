// Two-bone leg IK (see include/koma/body/leg_ik.hpp); moved here from the cartoon filter so gait
// plants feet with the same solver.
#include "koma/body/leg_ik.hpp"

#include <algorithm>
#include <cmath>

#include "koma/core/rotation.hpp"

namespace koma::body {

Hinge knee_hinge(const Motion& m, const WorldPoses& w, int hip, int knee, int ankle) {
  Hinge h;
  Vec3 sum = Vec3::Zero();
  for (int f = 0; f < m.frame_count; ++f) {
    const Vec3 r = quat_log(m.rotation(f, knee));
    sum += (sum.dot(r) < 0 ? -1.0 : 1.0) * r;
  }
  if (sum.norm() > 1e-9) h.axis = sum.normalized();
  const int kp = m.skeleton.parents[knee];
  double bend = 0;
  for (int f = 0; f < m.frame_count; ++f) {
    const Vec3 n = w.rotations[static_cast<size_t>(f) * m.joint_count() + kp] * h.axis;
    const Vec3 u = w.position(f, hip) - w.position(f, knee), v = w.position(f, ankle) - w.position(f, knee);
    bend += u.cross(v).dot(n);
  }
  h.sign = bend < 0 ? -1.0 : 1.0;
  return h;
}

// Two-bone IK on one frame: bends the knee about its hinge and swings the hip so the ankle reaches
// `target`, then gives the ankle the world rotation `ankle_rot`. Two passes (the hinge need not be
// exactly perpendicular to the bones). Returns false when the target was out of reach (clamped).
bool solve_leg(const Skeleton& sk, std::span<Quat> local, std::span<const Vec3> trans, std::vector<Vec3>& wp,
               std::vector<Quat>& wr, int hip, int knee, int ankle, const Vec3& target, const Quat& ankle_rot,
               const Hinge& hinge, double side, double soft_fraction) {
  bool reachable = true;
  forward_kinematics(sk, local, trans, {}, wp, wr);
  for (int pass = 0; pass < 2; ++pass) {
    const Vec3 h = wp[hip], k = wp[knee], a = wp[ankle];
    const double l1 = (k - h).norm(), l2 = (a - k).norm();
    if (!(l1 > 1e-9 && l2 > 1e-9)) break;
    // Soft IK: within kSoft of full extension the reach eases exponentially towards (never to) a
    // straight leg, which keeps the knee away from the straight-leg singularity where a
    // millimetre of target motion swings the knee by centimetres.
    const double reach = l1 + l2, soft = soft_fraction * reach, da = reach - soft;
    double d = (target - h).norm();
    if (d > reach && pass == 0) reachable = false;
    if (d > da) d = soft > 0 ? da + soft * (1 - std::exp(-(d - da) / soft)) : reach;
    d = std::max(d, std::abs(l1 - l2) * (1 + 1e-6) + 1e-9);
    const int kp = sk.parents[knee];
    const Vec3 nrm = (wr[kp] * hinge.axis).normalized();
    const Vec3 u = h - k, v = a - k;
    // The bend about the hinge that puts the ankle at distance d from the hip, exactly even when
    // the hinge is not perpendicular to the bones: with v = v_par + v_perp about the hinge,
    // u . R(delta) v = A + B cos(delta) + C sin(delta), and |u - R v|^2 = d^2 asks for
    // u . R v = K = (l1^2 + l2^2 - d^2) / 2. Of the two solutions, the one that leaves the knee
    // bent to `side` (the interior angle's sign about the hinge), the smaller turn if both do.
    // (The law-of-cosines angle alone assumed a perpendicular hinge: a deep crouch missed its
    // target by 2.5 cm.)
    const Vec3 v_par = nrm * nrm.dot(v), v_perp = v - v_par;
    const double ca = u.dot(v_par), cb = u.dot(v_perp), cc = u.dot(nrm.cross(v_perp));
    const double kk = 0.5 * (l1 * l1 + l2 * l2 - d * d), amp = std::hypot(cb, cc), phi = std::atan2(cc, cb);
    const double spread = amp > 1e-12 ? std::acos(std::clamp((kk - ca) / amp, -1.0, 1.0)) : 0.0;
    double delta = 0, best = 1e300;
    for (double cand : {phi + spread, phi - spread}) {
      cand = std::remainder(cand, 2 * kPi);
      const Vec3 bent = Quat(Eigen::AngleAxisd(cand, nrm)) * v;
      const double signed_angle = std::atan2(u.cross(bent).dot(nrm), u.dot(bent));
      const double cost = std::abs(cand) + (signed_angle * side >= 0 ? 0.0 : 100.0);
      if (cost < best) {
        best = cost;
        delta = cand;
      }
    }
    const Quat bend(Eigen::AngleAxisd(delta, nrm));
    local[knee] = (wr[kp].conjugate() * (bend * wr[knee])).normalized();
    const Vec3 a2 = k + bend * v;
    const Vec3 from = a2 - h, to = target - h;
    if (from.norm() > 1e-12 && to.norm() > 1e-12) {
      const Quat swing = Quat::FromTwoVectors(from, to);
      const int hp = sk.parents[hip];
      const Quat parent = hp >= 0 ? wr[hp] : Quat::Identity();
      local[hip] = (parent.conjugate() * (swing * wr[hip])).normalized();
    }
    forward_kinematics(sk, local, trans, {}, wp, wr);
  }
  local[ankle] = (wr[sk.parents[ankle]].conjugate() * ankle_rot).normalized();
  return reachable;
}

}  // namespace koma::body
