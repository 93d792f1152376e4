// Reports of the cartoon filter as JSON documents: the short summary `koma cartoon --json` prints
// and the full report `koma cartoon --report` writes (Python: koma.cartoon.summary / report).
// No timings and no paths: the same run gives the same bytes; front ends add input/output names.
#pragma once

#include <nlohmann/json.hpp>

#include "koma/cartoon/filter.hpp"

namespace koma::cartoon {

/// Summary of a cartoon_motion() run: "strength" (rate-independent; null with per-frame
/// settings), "strength_per_frame" (the A applied at the input's rate), "parts" (multiplier per
/// part name), "frames", "fps", "sigma_frames" and "sigma_seconds" {min, mean, max}, "body_change_mm" {mean, max, worst_joint, worst_frame};
/// with keep_feet also "contacts" (count), "skating_mm_per_frame" {input, output} and
/// "ik_unreachable_leg_frames"; "segments" (count of parts filtered on their own) and "bounded"
/// (joints whose added rotation or displacement the bound held back, see bound_warning()).
/// Lengths in millimetres as named. Throws nothing.
nlohmann::json cartoon_summary(const CartoonResult& result, const CartoonSettings& settings);

/// The summary plus the per-frame detail: "root_sigma_frames" (per frame), with keep_feet every
/// input contact {effector, begin, end, key_frame, confidence} (replacing the count), and with
/// squash > 0 "squash_joint" and "squash" per frame {stretch, direction, axis_scale}; "segments"
/// [{begin, end}] and "bounded" [{joint, translation, frames [[begin, end)...], range, bound,
/// requested, requested_frame}] in full (degrees for rotations, metres for translations).
nlohmann::json cartoon_report(const CartoonResult& result, const CartoonSettings& settings);

/// The warning for a run whose settings would throw joints past the bound, or "" when none went
/// past it visibly (by more than 1 degree, or 1 cm for a translation): names the joints (the five
/// held back most, then how many more), the frames where the bound held each, what the filter
/// asked for and what was kept. Throws nothing.
std::string bound_warning(const CartoonResult& result, const CartoonSettings& settings);

/// Summary of a cartoon_points() run on `points` tracks of `frames` frames at `frame_rate`:
/// "strength", "strength_per_frame", "parts", "frames", "points", "fps" and "sigma_frames" (the
/// fixed sigma, or "auto"). Throws Error(invalid_settings) for a rate cartoon_points() refuses.
nlohmann::json cartoon_points_summary(int frames, int points, double frame_rate, const CartoonSettings& settings);

}  // namespace koma::cartoon
