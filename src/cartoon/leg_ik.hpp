// Private to the cartoon module: planted feet by two-bone IK per leg (the cartoon filter's
// constraint step).
#pragma once

#include <span>
#include <vector>

#include "koma/body/leg_ik.hpp"
#include "koma/cartoon/filter.hpp"
#include "koma/core/fk.hpp"

namespace koma::cartoon::detail {

// The two-bone solver lives in koma::body (shared with gait).
using body::Hinge;
using body::knee_hinge;
using body::solve_leg;

// Planted feet: detects the input's foot contacts (res.contacts) and bends each leg of the
// filtered motion `out` so its ankle follows the input's during a contact, blending in and out
// over settings.blend_seconds; counts res.unreachable_frames. Throws Error(bad_data, "skeleton")
// without hip, knee and ankle joints per leg.
void keep_feet(const Motion& motion, const WorldPoses& in_poses, const CartoonSettings& settings, Motion& out,
               CartoonResult& res);

}  // namespace koma::cartoon::detail
