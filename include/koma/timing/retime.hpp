// Re-timing: keep where the body goes, take when it gets there from an example (timing transfer,
// after Kim, Kim & Neff 2015 / ETRI US 10,049,484).
//
//   input   0 ─head─ k0 ───seg 0─── k1 ───seg 1─── k2 ─tail─ N-1     (key frames, root progress s)
//   output  0 ─head─ T0 ─seg 0─ T1 ─────seg 1───── T2 ─tail─ end     (durations from the source)
//
//   (a) global: step keys are the full stances' (full_steps()). Each input step segment i is
//       matched to the source segment m(i) with the nearest key pose; it gets duration
//       D_m(i) * c, one tempo factor c for the clip: by default (SpeedFrom::cadence) making the
//       median step time the source's median over all its steps, so the output steps like the
//       example and its speed follows from its own stride; or (SpeedFrom::source) making the mean
//       speed sum(L_i) / sum(D_i) the source's in body sizes per second; or (input) keeping the
//       input's total step time. The per-segment durations then follow the source's and the
//       normalised key times are the source's exactly. Inside a segment, output time tau in [0,1] goes to root progress
//       s(k_i) + L_i * profile_src(tau), and the pose is the input's pose where its root progress
//       equals that: poses are resampled along the unchanged path. Head and tail take their
//       neighbouring step's tempo.
//   (a') key correction: the output's own contact detector is run on it, and each step boundary
//       whose key lands off its planned time is searched along the input path (key_iterations).
//   (b) succession: each chain child is time-shifted so its rotation-peak lag after its parent
//       matches the source's (a smooth, monotone warp that keeps the first and last frames);
//       knees and ankles only in the swing, so planted feet do not move.
//   (c) amplitude: arm/spine rotations are scaled about their mean by source range / input range.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/core/resample.hpp"
#include "koma/body/contacts.hpp"
#include "koma/timing/source.hpp"

namespace koma::timing {

/// Where the output's overall speed comes from.
enum class SpeedFrom : std::uint8_t {
  /// The source's cadence (default): each step lasts its matched source step's time, scaled so the
  /// median step is the source's median over all its steps; the input keeps its own stride, so its
  /// speed follows (stride / the source's step time).
  cadence,
  source,  ///< The output's mean step speed is the source's, over all its steps (body sizes / s).
  input,   ///< The output's mean step speed is the input's (total step time unchanged).
};

/// "cadence", "source" or "input".
std::string_view speed_from_name(SpeedFrom speed) noexcept;

/// Re-timing settings.
struct RetimeSettings {
  SourceSettings measure;      ///< How key times, progress and lags are measured on the input.
  /// Apply (b) succession lags. Knee/ankle shifts are blended out inside that foot's contacts
  /// (planted feet stay where (a) put them). Default true.
  bool succession = true;
  bool amplitude = true;       ///< Apply (c) amplitude scaling. Default true.
  SpeedFrom speed = SpeedFrom::cadence;  ///< Default cadence (the example's step times).
  double output_rate = 0.0;    ///< Output frames per second; 0 = the input's rate. Default 0.
  /// Each segment's duration stays within [1 / max_duration_scale, max_duration_scale] times the
  /// input's. Default 4; >= 1.
  double max_duration_scale = 4.0;
  /// A chain link is shifted only when the peak cross-correlation of its lag is at least this
  /// in both the source and the input (weakly coupled joints have no meaningful lag). Default 0.6.
  double min_lag_correlation = 0.6;
  /// Largest succession shift, in cycles (fraction of the mean two-step cycle). Default 0.1.
  double max_shift_cycles = 0.1;
  /// Amplitude scale factors are clamped to [1 / max_amplitude_scale, max_amplitude_scale].
  /// Default 2; >= 1.
  double max_amplitude_scale = 2.0;
  /// Key correction after (a), at most this many sweeps: the output's foot keys are detected with
  /// `measure.keys` (the detector a user would run on the output), and each step boundary that
  /// places a key off its planned frame (or, second, a key off the source's rhythm within its
  /// two-step cycle: RetimeReport::cycle_error) is searched along the input path, keeping a
  /// position only if the whole output scores better (missing keys, then worst error, then the
  /// sum). The planned key times and the path never change. 0 = off. Default 6; in [0, 100].
  int key_iterations = 6;
  /// Key correction moves a boundary at most this fraction of each neighbouring input segment
  /// from the input's key, and every step keeps at least half its input length. Default 0.5;
  /// in [0, 0.5].
  double max_key_shift = 0.5;
  /// Put every step on the source's beat (TimingSource::beat): after (a) each segment's duration
  /// becomes the nearest whole number of beat periods (at least one), so the output's foot
  /// touch-downs fall on one steady grid at the source's tempo. This overrides the tempo factor
  /// and max_duration_scale by up to half a period. retime() throws Error(bad_data, "source")
  /// when the source has no beat. Default false.
  bool on_beat = false;

  /// Throws Error(invalid_settings, "<field>").
  void validate() const;
};

/// How one input step segment was re-timed.
struct SegmentReport {
  int input_begin = 0;        ///< Input key frames.
  int input_end = 0;
  double output_begin = 0.0;  ///< Output key times, output frames (fractional).
  double output_end = 0.0;
  int source_segment = -1;    ///< Index into TimingSource::segments.
  double pose_distance = 0.0; ///< Body sizes, between the input and source key poses.
  double input_duration = 0.0;   ///< Seconds.
  double output_duration = 0.0;  ///< Seconds.
};

/// One foot key of the output: where re-timing planned it and where the contact detector finds it.
struct KeyReport {
  std::string foot;          ///< Effector name ("left_foot", ...).
  int input_key = 0;         ///< The input's key frame (detected on the input).
  double planned = 0.0;      ///< Planned output frame (fractional): the source's timing.
  /// Input frame (fractional) shown at the planned time: the input key, moved by key correction.
  double input_frame = 0.0;
  /// Output frame of the matched output key (same foot, nearest the planned frame, within half
  /// the shorter neighbouring segment), or -1 when the output has none there.
  int detected = -1;
  /// False when the input's contact touches the first or last frame: a stance cut by the clip
  /// has no full contact, so its key (nearest the contact's mean position) is not comparable.
  /// Step keys are full stances, so this is false only where a clip has fewer than two of them
  /// (full_steps() then keeps the cut ones).
  bool interior = false;
};

/// A succession shift applied to one chain child.
struct ShiftReport {
  body::Role parent = body::Role::hips;
  body::Role child = body::Role::hips;
  double source_lag = 0.0;  ///< Seconds, the source's lag scaled to the output's cycle.
  double input_lag = 0.0;   ///< Seconds, measured after the global re-timing.
  double correlation = 0.0; ///< The smaller of the source's and the input's peak correlation.
  double shift = 0.0;       ///< Seconds the child was delayed (its own link plus its parent's).
};

/// An amplitude scale applied to one role joint.
struct AmplitudeReport {
  body::Role role = body::Role::hips;
  double source_range = 0.0;  ///< Radians.
  double input_range = 0.0;   ///< Radians.
  double scale = 1.0;         ///< Applied factor.
};

/// What retime() did.
struct RetimeReport {
  int input_frames = 0;
  int output_frames = 0;
  double input_rate = 0.0;
  double output_rate = 0.0;
  /// Seconds: the beat period the steps were put on (RetimeSettings::on_beat); 0 = off.
  double beat_period = 0.0;
  /// The cadence applied (RetimeSettings::speed): the median step time of the output's step
  /// segments (planned), of the source's steps (all of them) and of the input's, seconds; and the
  /// mean step speed of the output and the input, metres per second.
  SpeedFrom speed = SpeedFrom::cadence;
  double output_step = 0.0;
  double source_step = 0.0;
  double input_step = 0.0;
  double output_speed = 0.0;
  double input_speed = 0.0;
  std::vector<StepKey> input_keys;         ///< The input's step keys: full_steps() of its foot keys.
  std::vector<SegmentReport> segments;     ///< One per input step segment.
  std::vector<KeyReport> keys;             ///< One per input step key (segments + 1), after (a).
  /// Largest |detected - planned| output frames over the interior matched keys after (a) and key
  /// correction (succession and amplitude, which run later, can move the legs' keys again).
  double key_error = 0.0;
  /// Largest error of a matched key's time normalised per two-step cycle (key i+1 within keys i
  /// and i+2) against the planned normalised time, in output frames: how far the output's own
  /// rhythm is from the source's. Same keys and stage as key_error.
  double cycle_error = 0.0;
  int key_passes = 0;                      ///< Boundary searches run (at most 4 per key).
  /// Interior keys the output's detector does not find near the planned frame (see KeyReport).
  int keys_unmatched = 0;
  std::vector<double> warp;                ///< Per output frame, the input frame (fractional) its pose came from.
  std::vector<ShiftReport> shifts;
  std::vector<AmplitudeReport> amplitudes;
  /// Metres: an upper bound of the largest distance of an output root (hips) position from the
  /// input's root polyline (each output point measured against the input segments around the
  /// frame its pose came from). ~1e-16 when only timing changed.
  double path_deviation = 0.0;
  double path_length = 0.0;     ///< Metres: length of the input root path.
  /// Metres: symmetric Hausdorff distance between the input's and the output's root polylines
  /// (hausdorff_distance(), every point of both curves, not only the samples). Where an output
  /// segment spans an input vertex it is a chord of the input path, so this is the chord sag of
  /// sampling the same curve at other times (see docs/timing.md), not a change of the path.
  double path_hausdorff = 0.0;
};

/// Output of retime(): the re-timed motion (same skeleton, output_rate) and the report.
struct RetimeResult {
  Motion motion;
  RetimeReport report;
};

/// Re-times `input` to `source` (a). Lossy (poses are resampled). Root positions of the output lie
/// on the input's root path; the first and last frames are kept. Then (b) and (c) as enabled.
/// Throws Error(invalid_settings); the errors of detect_key_times(); Error(bad_data, "input") when
/// the input has fewer than two foot key times; Error(bad_data, "timing source") when the source
/// has no segments.
RetimeResult retime(const Motion& input, const body::JointRoles& roles, const TimingSource& source,
                    const RetimeSettings& settings = {});

/// koma::sample_at_frames (core/resample.hpp): the poses at fractional frames, as a motion.
using koma::sample_at_frames;

/// True if `warp` is non-decreasing, starts at 0 and ends at last_frame (within 1e-9).
bool is_monotone_warp(std::span<const double> warp, double last_frame) noexcept;

/// A warp of `frame_count` frames that delays by `shift_frames` in the middle and by nothing at
/// both ends (smoothstep ramps of `ramp_frames`): w(f) = f - shift * b(f). The shift is reduced
/// if needed so w stays strictly increasing. Throws nothing.
std::vector<double> shift_warp(int frame_count, double shift_frames, double ramp_frames);

/// World path (metres) of joint `joint` per frame (forward kinematics of its ancestor chain).
/// Throws nothing.
std::vector<Vec3> joint_path(const Motion& motion, int joint);

/// Directed Hausdorff distance (metres) from the points `b` to the polyline through `a`: the
/// largest distance of a point of b from the polyline a. Throws nothing.
double polyline_deviation(std::span<const Vec3> a, std::span<const Vec3> b) noexcept;

/// Directed Hausdorff distance (metres) between polylines as curves: the largest distance of any
/// point of polyline `b` (vertices and every point on its segments) from polyline `a`. Exact to
/// `tolerance` metres (branch and bound along b's segments: the distance to a is 1-Lipschitz).
/// A single point is a polyline; 0 when either is empty. Throws nothing.
double directed_hausdorff(std::span<const Vec3> a, std::span<const Vec3> b, double tolerance = 1e-12) noexcept;

/// Symmetric Hausdorff distance (metres) between two polylines as curves:
/// max(directed_hausdorff(a, b), directed_hausdorff(b, a)). Throws nothing.
double hausdorff_distance(std::span<const Vec3> a, std::span<const Vec3> b, double tolerance = 1e-12) noexcept;

/// Length of a polyline, metres.
double polyline_length(std::span<const Vec3> a) noexcept;

}  // namespace koma::timing
