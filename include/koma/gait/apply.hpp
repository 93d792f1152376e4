// Adverbs applied to a take: the take itself gets the style, with its turns, starts, stops and
// hesitations (Unuma, Anjyo, Takeuchi 1995: adverbs are spectral differences).
//
//   take ──contacts + reference joint──▶ phase phi(f) per frame (each cycle its own length)
//                                        weight w(f): 1 in steady cycles, easing to 0 outside
//   q_j(f) ─────────────────────────────▶ q_j(f) exp( sum_a alpha_a (P_aj + w(f) dx_aj(phi_a(f))) )
//                                        P = posture + DC of the difference, dx = its harmonics
//   stance legs ──two-bone IK──▶ ankles back where the take has them (contacts stay contacts)
//
// The difference is added in the tangent space of each joint's own rotation (the log map the
// gait channels are defined in), so alpha = 0 returns the take bit for bit and a turning take keeps
// its heading: the root's posture difference loses its yaw about world +Y, the oscillation keeps
// it (a pelvis swinging is style), so over a cycle the facing is unchanged. Frame count, frame
// rate and the root's translation are kept; the adverb's cadence change is not applied (the take's
// timing is). The root height difference is added to the root; stride (beta) scales the root's
// horizontal travel about the first frame when asked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "koma/body/roles.hpp"
#include "koma/gait/adverb.hpp"

namespace koma::gait {

/// Weights inside this range are interpolation or moderate extrapolation; outside it apply_to_take
/// still applies them but warns (a style pushed that far rarely stays human). Inclusive.
inline constexpr double kAlphaWarnMin = -1.0;
inline constexpr double kAlphaWarnMax = 2.0;

/// Settings of apply_to_take().
struct ApplySettings {
  /// Gait detection: min_period, max_period, min_confidence and the contact detector are used
  /// (samples, outlier_factor, angles and period_joint of the averaged cycle are not).
  CycleSettings cycle;
  /// Seconds; 0 (default) = detect the gait. > 0: skip detection and run the phase uniformly at
  /// this period over the whole take (weight 1 everywhere), for takes whose gait is not detected.
  double fixed_period = 0;
  /// beta: scales the root's horizontal travel about its first-frame position (and the planted
  /// feet with it). 1 (default) keeps the root path exactly. In (0, 10].
  double stride = 1.0;
  /// Seconds over which the style eases in and out where the take stops being periodic (before the
  /// first steady cycle, after the last, around a hesitation), and over which planted feet blend.
  /// > 0, default 0.3 s.
  double blend_seconds = 0.3;
  /// Keep the posture part (mean rotation and DC difference) at full alpha also where the take is
  /// not periodic (a tired walk that stops stands tired). false: it eases out with the harmonics.
  /// Default true.
  bool hold_posture = true;
  /// Bend the legs so that the take's foot contacts stay planted (ankle position and rotation of
  /// the take during a contact). Default true.
  bool plant_feet = true;
  /// Add the adverbs' root height difference to the root. Default true.
  bool root_height = true;
  /// The take's joint roles (feet for the phase and the planted legs, every role for adverbs of
  /// another rig). Empty (default): found by name, body::find_joint_roles(). Set it for a rig whose
  /// names koma does not know (body::read_roles() reads overrides from JSON). Indices are checked
  /// against the take: Error(invalid_settings, "roles") when one is out of range.
  std::optional<body::JointRoles> roles;
  /// Throws Error(invalid_settings) naming the first out-of-range field (including `cycle`).
  void validate() const;
};

/// How a take's gait phase was tracked.
enum class PhaseSource : std::uint8_t {
  contacts,  ///< Touch-downs of one foot: each cycle between two touch-downs has its own length.
  period,    ///< The detected period, uniform (no foot touched down twice).
  fixed,     ///< ApplySettings::fixed_period, uniform.
};

/// "contacts", "period" or "fixed".
std::string_view to_string(PhaseSource source) noexcept;

/// The gait phase of every frame of a take.
struct TakePhase {
  /// Per frame: cycle phase, radians, increasing by 2 pi per cycle, with 0 at the reference foot's
  /// first touch-down (contacts) or at frame 0 (period, fixed). Not yet relative to any adverb.
  std::vector<double> phase;
  /// Per frame in [0, 1]: 1 inside a steady cycle, easing to 0 over blend_seconds outside.
  std::vector<double> weight;
  PhaseSource source = PhaseSource::contacts;
  double period = 0;      ///< Median seconds per cycle.
  double confidence = 0;  ///< Autocorrelation confidence of the period (over the steady span; 1 for fixed).
  int cycles = 0;         ///< Steady cycles found (contacts), else whole cycles in the take.
  std::string foot;       ///< Effector whose touch-downs set the phase ("left_foot"), contacts only.
};

/// The phase of `take`: from touch-downs when one foot gives a steady cycle (confidence: the period
/// search on the span of the steady cycles, or on the whole take when that span is too short),
/// else uniform at the period found on the whole take. Throws Error(bad_data, "period") with the confidence found, and naming
/// `fixed_period` as the way out, when no gait is detected; Error(invalid_settings) for bad settings.
TakePhase track_phase(const Motion& take, const ApplySettings& settings = {});

/// One adverb's effect on the take.
struct AppliedAdverb {
  std::string name;             ///< WeightedAdverb::name.
  double weight = 0;            ///< alpha.
  double phase_offset = 0;      ///< Radians added to TakePhase::phase to get the adverb's relative phase.
  double period_ratio_ignored = 1;  ///< exp(log_period_ratio): the cadence change not applied (timing kept).
  /// True when the adverb was learned on the take's own topology (applied joint by joint).
  bool same_rig = true;
  /// Another rig: "adverb joint -> take joint (role)" or "(name)" when matched by name hint.
  std::vector<std::string> mapped;
  /// Another rig: the joints left alone and why ("LHipJoint: no adverb joint plays its role").
  std::vector<std::string> left_alone;
};

/// A take with adverbs applied.
struct ApplyResult {
  Motion motion;                      ///< Same skeleton, frame count, rate and root translation (beta = 1).
  TakePhase phase;                    ///< The take's phase and periodic weight.
  std::vector<AppliedAdverb> adverbs; ///< In input order.
  std::vector<std::string> warnings;  ///< E.g. alpha outside [kAlphaWarnMin, kAlphaWarnMax].
  int planted_frames = 0;     ///< Leg-frames solved to keep a contact (weight > 0).
  int unreachable_frames = 0; ///< Of those, frames whose ankle target was out of reach (clamped).
  /// Largest distance, metres, between a fully planted ankle and the take's (the soft IK near a
  /// straight leg and an out-of-reach target leave some).
  double max_plant_error = 0;
};

/// The adverb carried to the take's rig by joint role: each adverb joint with a role drives the
/// take's joint of that role (`take_roles`), a joint without one the take's joint of the same name
/// (a hint; case, '_', '.', '-' and ':' ignored), a clavicle (the unmapped parent of a shoulder
/// role, not on the way to the neck) the take's clavicle, and the unmapped torso joints between two
/// mapped ones (a chest) the take's unmapped joints between the same two, by their share of the
/// chain (one chest over two spine joints: half each), or, when the take has none there, half the
/// joint above and half the one below. Each joint's posture and harmonics are turned from the
/// adverb rig's joint axes into the take's with take_frames[t]^-1 * adverb.frames[s] (both mean-pose world rotations, heading-free, so the two
/// rigs' local axis conventions need not agree). `take_frames`: pose_frames() of the take's mean
/// rotations (motion_channels). Root channels (height, speeds, metres) are kept as they are.
/// `ref_joint` / `ref_axis` receive the take joint and unit axis (its local frame) of the adverb's
/// phase reference. Throws Error(mismatch) naming the roles the take's rig lacks (toes that are
/// end sites on the take are left alone, not missing), and for an adverb file without roles or
/// frames (learned before they were stored).
Adverb map_adverb(const Adverb& adverb, const Skeleton& take, const body::JointRoles& take_roles,
                  std::span<const Quat> take_frames, AppliedAdverb& report, int& ref_joint, Vec3& ref_axis);

/// Applies `adverbs` to `take` (see the top of this file). No adverbs, or all alpha = 0, returns
/// the take unchanged (bit for bit). An adverb of another topology is carried over by
/// map_adverb(). Throws Error(invalid_settings) for a non-finite alpha or bad settings,
/// Error(mismatch) for an adverb whose roles the take's rig lacks or of another angle mode than log map, Error(bad_data, "period") when no gait is detected (see track_phase()).
/// Pure; deterministic.
ApplyResult apply_to_take(const Motion& take, std::span<const WeightedAdverb> adverbs, const ApplySettings& settings = {});

}  // namespace koma::gait
