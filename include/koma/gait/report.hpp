// Reports of the gait module as JSON documents: what `koma gait analyze|adverb|synth|style --json`
// print and Python's koma.gait.*_report return. Angles in degrees, lengths in metres, as named.
// No timings and no paths: front ends add file names.
#pragma once

#include <nlohmann/json.hpp>

#include "koma/gait/apply.hpp"
#include "koma/gait/fourier.hpp"
#include "koma/gait/style.hpp"

namespace koma::gait {

/// A gait in brief: "period_s", "confidence", "period_method", "cycles_found", "cycles_used",
/// "harmonics", "angles", "root_joint", "reference_channel", "forward_speed_mps".
nlohmann::json gait_summary(const Gait& gait);

/// gait_summary() of the analysed gait plus "reconstruction_rms_deg" per joint, "worst_joint",
/// "worst_rms_deg", "height_rms_m", "max_seam_correction_deg", "max_cycle_drift_deg",
/// "rotation_jumps" [{joint, frame, angle_deg}] and "joints" [{"name", "harmonics" (largest K_c of
/// its channels), "channel_harmonics" [3], "rms_deg" (reconstruction), "raw_above_k_deg" (the raw
/// cycles' content above K_c, raw_energy_above()), "seam_correction_deg"}] in joint order.
nlohmann::json analysis_report(const GaitAnalysis& analysis);

/// A synthesised styled gait: "frames", "fps", "seconds", "loop", "styled_period_s".
nlohmann::json style_summary(const StyleResult& result);

/// A take with adverbs applied: "frames", "fps", "phase" {"source", "foot", "period_s",
/// "confidence", "steady_cycles", "full_style_frames"}, "adverbs" [{"name", "alpha",
/// "phase_offset_deg", "cadence_ratio_not_applied", "same_rig", "mapped", "left_alone"}], "planted_leg_frames", "unreachable_leg_frames",
/// "warnings".
nlohmann::json apply_report(const ApplyResult& result);

}  // namespace koma::gait
