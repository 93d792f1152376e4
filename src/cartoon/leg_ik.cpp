// Planted feet for the cartoon filter: two-bone IK per leg (see leg_ik.hpp).
#include "leg_ik.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>

#include "detail.hpp"
#include "koma/core/error.hpp"
#include "koma/core/quat_sign.hpp"

namespace koma::cartoon::detail {

namespace {

struct Leg {
  int hip, knee, ankle;
};

// The legs found by joint role (hip, knee and ankle; the hip not the root), one per foot effector.
std::vector<Leg> find_legs(const body::JointRoles& roles, size_t feet) {
  std::vector<Leg> legs;
  for (auto [h, k, a] : {std::tuple{body::Role::left_hip, body::Role::left_knee, body::Role::left_ankle},
                         std::tuple{body::Role::right_hip, body::Role::right_knee, body::Role::right_ankle}}) {
    if (roles.has(h) && roles.has(k) && roles.has(a) && roles[h] > 0) legs.push_back({roles[h], roles[k], roles[a]});
  }
  if (legs.size() != feet || legs.empty())
    throw Error(ErrorCode::bad_data, "skeleton",
                "keep_feet needs hip, knee and ankle joints per leg; none found by name (see timing roles)");
  return legs;
}

// Side (+-1 about the hinge) the input's knee is bent to on each frame, with hysteresis: a knee
// within 10 degrees of straight keeps the side it had (the hinge axis is only approximate, so a
// nearly straight knee's side is noise).
std::vector<double> knee_sides(const Motion& motion, const WorldPoses& in_poses, const Leg& leg, const Hinge& hinge) {
  const int n = motion.frame_count, jn = motion.joint_count();
  const Skeleton& sk = motion.skeleton;
  std::vector<double> sides(static_cast<size_t>(n), 1.0);
  double last_side = hinge.sign;
  for (int f = 0; f < n; ++f) {
    const Vec3 axis = in_poses.rotations[static_cast<size_t>(f) * jn + sk.parents[leg.knee]] * hinge.axis;
    const Vec3 u = in_poses.position(f, leg.hip) - in_poses.position(f, leg.knee);
    const Vec3 v = in_poses.position(f, leg.ankle) - in_poses.position(f, leg.knee);
    const double signed_angle = std::atan2(u.cross(v).dot(axis), u.dot(v));
    if (std::abs(signed_angle) < kPi - 10.0 * kPi / 180.0) last_side = signed_angle > 0 ? 1.0 : -1.0;
    sides[f] = last_side;
  }
  return sides;
}

// The IK corrections (filtered -> solved local rotations of hip, knee, ankle) smoothed in time
// (Gaussian, sigma = half the blend) so a leg the filter over-extended is bent back without a pop.
void smooth_corrections(const Motion& motion, const std::vector<Quat>& filtered, const std::vector<Leg>& legs,
                        int bf, Motion& out) {
  const int n = motion.frame_count, jn = motion.joint_count();
  std::vector<double> g;
  gaussian(std::max(1.0, 0.5 * bf), g);
  const int gr = static_cast<int>(g.size() / 2);
  std::vector<Vec3> corr(static_cast<size_t>(n));
  for (const Leg& leg : legs) {
    for (int j : {leg.hip, leg.knee, leg.ankle}) {
      Vec3 prev = Vec3::Zero();
      for (int f = 0; f < n; ++f) {
        const size_t i = static_cast<size_t>(f) * jn + j;
        corr[f] = unwrap_near(quat_log(filtered[i].conjugate() * out.rotations[i]), prev);
        prev = corr[f];
      }
      for (int f = 0; f < n; ++f) {
        Vec3 acc = Vec3::Zero();
        for (int k = -gr; k <= gr; ++k) acc += g[k + gr] * corr[std::clamp(f + k, 0, n - 1)];
        const size_t i = static_cast<size_t>(f) * jn + j;
        out.rotations[i] = align_sign((filtered[i] * quat_exp(acc)).normalized(), motion.rotations[i]);
      }
    }
  }
}

}  // namespace

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
               const Hinge& hinge, double side) {
  bool reachable = true;
  forward_kinematics(sk, local, trans, {}, wp, wr);
  for (int pass = 0; pass < 2; ++pass) {
    const Vec3 h = wp[hip], k = wp[knee], a = wp[ankle];
    const double l1 = (k - h).norm(), l2 = (a - k).norm();
    if (!(l1 > 1e-9 && l2 > 1e-9)) break;
    // Soft IK: within kSoft of full extension the reach eases exponentially towards (never to) a
    // straight leg, which keeps the knee away from the straight-leg singularity where a
    // millimetre of target motion swings the knee by centimetres.
    constexpr double kSoft = 0.02;
    const double reach = l1 + l2, soft = kSoft * reach, da = reach - soft;
    double d = (target - h).norm();
    if (d > reach && pass == 0) reachable = false;
    if (d > da) d = da + soft * (1 - std::exp(-(d - da) / soft));
    d = std::max(d, std::abs(l1 - l2) * (1 + 1e-6) + 1e-9);
    const int kp = sk.parents[knee];
    const Vec3 nrm = (wr[kp] * hinge.axis).normalized();
    const Vec3 u = h - k, v = a - k;
    const double theta0 = std::atan2(u.cross(v).dot(nrm), u.dot(v));  // signed, about the hinge
    const double theta = std::acos(std::clamp((l1 * l1 + l2 * l2 - d * d) / (2 * l1 * l2), -1.0, 1.0));
    // Bend to the side the input's knee is bent to on this frame: continuous in time (the input
    // only changes side by passing through a straight leg), and never the side a filtered,
    // over-extended knee happens to point to.
    double delta = side * theta - theta0;
    if (delta > kPi) delta -= 2 * kPi;
    if (delta < -kPi) delta += 2 * kPi;
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

void keep_feet(const Motion& motion, const WorldPoses& in_poses, const CartoonSettings& settings, Motion& out,
               CartoonResult& res) {
  const int n = motion.frame_count, jn = motion.joint_count();
  const Skeleton& sk = motion.skeleton;
  const body::JointRoles roles = body::find_joint_roles(sk);
  const std::vector<body::Effector> feet = body::foot_effectors(roles);
  const std::vector<Leg> legs = find_legs(roles, feet.size());
  res.contacts = body::detect_contacts(motion, in_poses, feet, settings.contacts);
  std::vector<Vec3> wp(static_cast<size_t>(sk.point_count()));
  std::vector<Quat> wr(static_cast<size_t>(jn));
  std::vector<Hinge> hinges;
  for (const Leg& leg : legs) hinges.push_back(knee_hinge(motion, in_poses, leg.hip, leg.knee, leg.ankle));
  const int bf = std::max(1, static_cast<int>(std::lround(settings.blend_seconds * motion.frame_rate)));
  std::vector<std::vector<double>> weight, sides;
  for (size_t l = 0; l < legs.size(); ++l) {
    weight.push_back(body::contact_fade(res.contacts.effectors[l].in_contact, bf + 1.0));
    sides.push_back(knee_sides(motion, in_poses, legs[l], hinges[l]));
  }
  // Frame f of leg l towards the input's ankle, with weight w.
  auto solve = [&](int f, size_t l, double w) {
    const Leg& leg = legs[l];
    forward_kinematics(sk, out.frame_rotations(f), out.frame_translations(f), {}, wp, wr);
    const Vec3 target = (1 - w) * wp[leg.ankle] + w * in_poses.position(f, leg.ankle);
    const Quat in_ankle = in_poses.rotations[static_cast<size_t>(f) * jn + leg.ankle];
    const Quat rot = slerp(wr[leg.ankle], in_ankle, w);
    return solve_leg(sk, out.frame_rotations(f), out.frame_translations(f), wp, wr, leg.hip, leg.knee, leg.ankle,
                     target, rot, hinges[l], sides[l][f]);
  };
  const std::vector<Quat> filtered = out.rotations;
  for (int f = 0; f < n; ++f) {
    for (size_t l = 0; l < legs.size(); ++l) {
      if (weight[l][f] > 0 && !solve(f, l, weight[l][f])) ++res.unreachable_frames;
    }
  }
  // Smoothed corrections; contact frames are then solved exactly again from the smoothed pose.
  smooth_corrections(motion, filtered, legs, bf, out);
  for (int f = 0; f < n; ++f) {
    for (size_t l = 0; l < legs.size(); ++l) {
      if (weight[l][f] >= 1.0) solve(f, l, 1.0);
    }
  }
}

}  // namespace koma::cartoon::detail
