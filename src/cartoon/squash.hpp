// Private to the cartoon module: squash and stretch (the cartoon filter's last step).
#pragma once

#include "koma/cartoon/filter.hpp"
#include "koma/core/fk.hpp"

namespace koma::cartoon::detail {

// Squash and stretch of joint `joint` from a delayed (settings.squash_delay), smoothed (6 Hz
// low-pass) copy of its filtered trajectory (`out_poses`): stretched along its acceleration by
// exp(squash * along * min(|a| / g, 3)), volume kept. Fills out.scales (ones elsewhere) and
// res.squash per frame. Needs at least 3 frames.
void squash_and_stretch(const WorldPoses& out_poses, int joint, const CartoonSettings& settings, Motion& out,
                        CartoonResult& res);

}  // namespace koma::cartoon::detail
