// Private to the cartoon module: planted feet by two-bone IK per leg (the cartoon filter's
// constraint step).
#pragma once

#include <span>
#include <vector>

#include "koma/cartoon/filter.hpp"
#include "koma/core/fk.hpp"

namespace koma::cartoon::detail {

// The knee's hinge: the mean axis of its local rotation over the input (sign-aligned rotation
// vectors, weighted by angle), in the knee's parent frame; and the sign of its bend about it.
struct Hinge {
  Vec3 axis = Vec3::UnitX();
  double sign = 1.0;
};

Hinge knee_hinge(const Motion& m, const WorldPoses& w, int hip, int knee, int ankle);

// Two-bone IK on one frame: bends the knee about its hinge and swings the hip so the ankle reaches
// `target`, then gives the ankle the world rotation `ankle_rot`. `side` (+-1) is the side of the
// hinge the knee bends to. Two passes (the hinge need not be exactly perpendicular to the bones).
// wp / wr are scratch world positions (point_count) and rotations (joint_count). Returns false
// when the target was out of reach (clamped).
bool solve_leg(const Skeleton& sk, std::span<Quat> local, std::span<const Vec3> trans, std::vector<Vec3>& wp,
               std::vector<Quat>& wr, int hip, int knee, int ankle, const Vec3& target, const Quat& ankle_rot,
               const Hinge& hinge, double side);

// Planted feet: detects the input's foot contacts (res.contacts) and bends each leg of the
// filtered motion `out` so its ankle follows the input's during a contact, blending in and out
// over settings.blend_seconds; counts res.unreachable_frames. Throws Error(bad_data, "skeleton")
// without hip, knee and ankle joints per leg.
void keep_feet(const Motion& motion, const WorldPoses& in_poses, const CartoonSettings& settings, Motion& out,
               CartoonResult& res);

}  // namespace koma::cartoon::detail
