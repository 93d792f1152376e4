// Two-bone leg IK: the one solver that keeps feet planted, shared by the cartoon filter (planted
// feet after filtering) and gait (planted feet after adverbs on a take).
//
//        hip ●            bend the knee about its hinge so |hip - ankle| = |hip - target|,
//           ╱             then swing the hip so the ankle lands on the target, then give the
//     knee ●              ankle the requested world rotation. Soft near full extension.
//           ╲
//     ankle  ● → target
#pragma once

#include <span>
#include <vector>

#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"

namespace koma::body {

/// The knee's hinge: the mean axis of its local rotation over a motion (sign-aligned rotation
/// vectors, weighted by angle), in the knee's parent frame; and the sign of its bend about it.
struct Hinge {
  Vec3 axis = Vec3::UnitX();
  double sign = 1.0;
};

/// The hinge of the knee `knee` (between `hip` and `ankle`) over `m`, with `w` its world poses.
Hinge knee_hinge(const Motion& m, const WorldPoses& w, int hip, int knee, int ankle);

/// Two-bone IK on one frame of local rotations `local` (translations `trans`): bends the knee about
/// its hinge and swings the hip so the ankle reaches `target` (world, metres), then gives the ankle
/// the world rotation `ankle_rot`. `side` (+-1) is the side of the hinge the knee bends to. Two
/// passes (the hinge need not be exactly perpendicular to the bones). Within `soft` (a fraction of
/// the leg's length, default 2 %) of full extension the reach eases towards a straight leg, never
/// reaching it (no knee pop); the ankle then stops short of the target by up to about that much. `wp` / `wr` are scratch world positions
/// (point_count) and rotations (joint_count), left holding the pose before the ankle is set.
/// Returns false when the target was out of reach (clamped). Allocation-free.
bool solve_leg(const Skeleton& sk, std::span<Quat> local, std::span<const Vec3> trans, std::vector<Vec3>& wp,
               std::vector<Quat>& wr, int hip, int knee, int ankle, const Vec3& target, const Quat& ankle_rot,
               const Hinge& hinge, double side, double soft = 0.02);

}  // namespace koma::body
