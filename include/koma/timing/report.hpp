// Reports of the timing module as JSON documents: what `koma timing detect --json`,
// `koma timing source --json` and `koma retime --report / --json` print or write, and what Python's
// koma.timing.*_report return. No timings and no paths: front ends add the file names.
#pragma once

#include <nlohmann/json.hpp>

#include "koma/core/motion.hpp"
#include "koma/body/roles.hpp"
#include "koma/timing/keytimes.hpp"
#include "koma/timing/retime.hpp"
#include "koma/timing/source.hpp"

namespace koma::timing {

/// Key times of `motion` (detect_key_times()): "frames", "fps", "roles" {role: joint or point
/// name} for the roles found, "effectors" [{name, kind, keys [{frame, time (s), begin, end,
/// confidence}], and for hands and head "extremes" [{frame, time, sharpness}], "still" and, for one
/// that moves but has no key, "note" (why)}],
/// "beat" {tempo_bpm (null when none), period, phase (s), confidence, keys, on_beat, rms_seconds},
/// "contact_thresholds_tried" [{height_fraction, speed_threshold, contacts}].
nlohmann::json key_times_report(const Motion& motion, const body::JointRoles& roles, const KeyTimeReport& report);

/// A timing source in brief: "examples" (labels), "segments" (count), "mean_cycle_seconds", "lags" (count).
nlohmann::json timing_source_summary(const TimingSource& source);

/// The report of retime(): frames and rates, path length / deviation / Hausdorff (metres), key
/// and cycle errors (output frames), "output_keys", "input_keys", "segments", "shifts",
/// "amplitudes" (role names as role_name() spells them), the source's "examples", and with
/// `with_warp` the per-output-frame "warp" (input frame, fractional).
nlohmann::json retime_report(const RetimeReport& report, const TimingSource& source, bool with_warp = true);

}  // namespace koma::timing
