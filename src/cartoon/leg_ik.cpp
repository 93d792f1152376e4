// Planted feet for the cartoon filter: two-bone IK per leg (see leg_ik.hpp).
#include "leg_ik.hpp"

#include <array>

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

// The solver's soft zone, a share of the leg's length (body::solve_leg's default).
constexpr double kLegSoft = 0.02;

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

// The joints from the root down to (not including) the legs' hips: what moves a hip.
std::vector<int> hip_ancestors(const Skeleton& sk, const std::vector<Leg>& legs) {
  std::vector<std::uint8_t> mark(static_cast<size_t>(sk.joint_count()), 0);
  for (const Leg& leg : legs) {
    for (int j = sk.parents[leg.hip]; j >= 0; j = sk.parents[j]) mark[j] = 1;
  }
  std::vector<int> joints;
  for (int j = 0; j < sk.joint_count(); ++j) {
    if (mark[j]) joints.push_back(j);
  }
  return joints;
}

// Keeps the hips within reach of the planted feet: on frames where a leg is planted (weight > 0)
// and the filtered hip is farther from the input's ankle than the leg reaches (the larger of the
// input's own hip-ankle distance and the start of the solver's soft zone), the filter's change to
// the joints above the hips (root translation and rotation, and any joint between them) is
// scaled back by a gain g found by bisection (g = 0 is the input, which reaches). The gain is
// min-filtered and box-averaged over +-`radius` frames, so it is continuous and the reach holds.
void keep_hips_in_reach(const Motion& motion, const WorldPoses& in_poses, const std::vector<Leg>& legs,
                        const std::vector<std::vector<double>>& weight, int radius, double soft, Motion& out) {
  const int n = motion.frame_count;
  const Skeleton& sk = motion.skeleton;
  const std::vector<int> chain = hip_ancestors(sk, legs);
  std::vector<Vec3> wp(static_cast<size_t>(sk.point_count()));
  std::vector<Quat> wr(static_cast<size_t>(sk.joint_count()));
  std::vector<Quat> local;
  std::vector<Vec3> trans;
  auto blended = [&](int f, double g) {
    local.assign(out.frame_rotations(f).begin(), out.frame_rotations(f).end());
    trans.assign(out.frame_translations(f).begin(), out.frame_translations(f).end());
    for (int j : chain) {
      local[j] = slerp(motion.rotation(f, j), out.rotation(f, j), g);
      trans[j] = motion.translation(f, j) + g * (out.translation(f, j) - motion.translation(f, j));
    }
    forward_kinematics(sk, local, trans, {}, wp, wr);
  };
  auto reaches = [&](int f, double g) {
    blended(f, g);
    for (size_t l = 0; l < legs.size(); ++l) {
      if (!(weight[l][f] > 0)) continue;
      const Leg& leg = legs[l];
      const double bones = (in_poses.position(f, leg.knee) - in_poses.position(f, leg.hip)).norm() +
                           (in_poses.position(f, leg.ankle) - in_poses.position(f, leg.knee)).norm();
      const double own = (in_poses.position(f, leg.ankle) - in_poses.position(f, leg.hip)).norm();
      const double limit = std::max(own, (1 - soft) * bones) + 1e-9;
      if ((wp[leg.hip] - in_poses.position(f, leg.ankle)).norm() > limit) return false;
    }
    return true;
  };
  std::vector<double> gain(static_cast<size_t>(n), 1.0);
  bool any = false;
  for (int f = 0; f < n; ++f) {
    if (reaches(f, 1.0)) continue;
    double lo = 0, hi = 1;
    for (int it = 0; it < 20; ++it) (reaches(f, 0.5 * (lo + hi)) ? lo : hi) = 0.5 * (lo + hi);
    gain[f] = lo;
    any = true;
  }
  if (!any) return;
  std::vector<double> low(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) {
    low[f] = *std::min_element(gain.begin() + std::max(0, f - radius), gain.begin() + std::min(n, f + radius + 1));
  }
  for (int f = 0; f < n; ++f) {
    const int a = std::max(0, f - radius), b = std::min(n - 1, f + radius);
    double sum = 0;
    for (int g = a; g <= b; ++g) sum += low[g];
    const double g = std::min(sum / (b - a + 1), gain[f]);
    if (!(g < 1)) continue;
    for (int j : chain) {
      out.frame_rotations(f)[j] = align_sign(slerp(motion.rotation(f, j), out.rotation(f, j), g).normalized(),
                                             motion.rotation(f, j));
      out.frame_translations(f)[j] =
          motion.translation(f, j) + g * (out.translation(f, j) - motion.translation(f, j));
    }
  }
}

}  // namespace

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
  keep_hips_in_reach(motion, in_poses, legs, weight, bf, kLegSoft, out);
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
  // Smoothed corrections; then every blended frame is solved exactly again from the smoothed pose
  // and, outside contacts, only weight w of that last correction is kept (slerp of the leg's local
  // rotations), so the pose is continuous where a contact begins or ends. (Re-solving only the
  // contact frames left a step at the first one: 14 mm in one frame on a 120 fps Xia walk.)
  smooth_corrections(motion, filtered, legs, bf, out);
  for (int f = 0; f < n; ++f) {
    for (size_t l = 0; l < legs.size(); ++l) {
      const double w = weight[l][f];
      if (!(w > 0)) continue;
      const Leg& leg = legs[l];
      const std::array<int, 3> joints{leg.hip, leg.knee, leg.ankle};
      std::array<Quat, 3> before;
      for (int k = 0; k < 3; ++k) before[k] = out.rotation(f, joints[k]);
      solve(f, l, 1.0);
      if (w >= 1.0) continue;
      for (int k = 0; k < 3; ++k) {
        Quat& q = out.frame_rotations(f)[joints[k]];
        q = align_sign(slerp(before[k], q, w).normalized(), before[k]);
      }
    }
  }
}

}  // namespace koma::cartoon::detail
