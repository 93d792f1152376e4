// Timing sources: what re-timing takes from an example. Per step segment (between consecutive
// foot key times) the speed along the root path, the speed ratio to the example's mean, the
// within-segment progress profile and the key pose that starts it; per parent->child chain the
// rotation-peak lag; per arm/spine joint the rotation range. Lengths are in body sizes
// (Skeleton::rest_extent()) so a source applies to characters of any size.
//
//   key:  L         R         L         R          progress ▲        ___
//         |--seg 0--|--seg 1--|--seg 2--|          (0..1)   │     _/
//          <- cycle (2 segs) ->                             │ ___/      (per segment, at its
//                                                           └──────────▶ own frames, time 0..1)
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"
#include "koma/timing/keytimes.hpp"

namespace koma::timing {

/// A key pose for matching segments across examples and characters: the world positions of the
/// role points relative to the hips, turned about Y so the character faces +Z, in body sizes.
struct PoseDescriptor {
  std::array<Vec3, body::kRoleCount> positions{};  ///< Per role; meaningful where `present`.
  std::array<bool, body::kRoleCount> present{};    ///< Roles the skeleton has.
};

/// Mean distance (body sizes) over the roles both descriptors have; +infinity when they share none.
double pose_distance(const PoseDescriptor& a, const PoseDescriptor& b) noexcept;

/// Descriptor of frame `frame` from world poses. Facing = (left_hip - right_hip) x up, else the
/// root's horizontal displacement over the clip, else +Z. `body_size` in metres (> 0).
PoseDescriptor pose_descriptor(const WorldPoses& poses, int frame, const body::JointRoles& roles, double body_size);

/// Timing of one step segment (between two consecutive foot key times) of an example.
struct SegmentTiming {
  int example = 0;             ///< Index of the example it came from.
  int begin = 0;               ///< First key frame in that example.
  int end = 0;                 ///< Second key frame.
  std::string start_foot;      ///< Foot of the first key ("left_foot").
  std::string end_foot;        ///< Foot of the second key.
  double duration = 0.0;       ///< Seconds.
  double length = 0.0;         ///< Root progress over the segment, body sizes.
  double speed = 0.0;          ///< length / duration, body sizes per second.
  double speed_ratio = 1.0;    ///< speed / the example's mean speed over all its step segments.
  double cycle_fraction = 0.5; ///< duration / (duration + the neighbouring segment's duration): the
                               ///< normalised key time within its two-step cycle.
  /// Normalised root progress (0 .. 1) at normalised times j / (size - 1), one per frame of the
  /// segment (begin .. end): the within-segment speed profile.
  std::vector<double> progress;
  PoseDescriptor pose;         ///< Key pose at `begin`.
};

/// A parent->child rotation-peak lag of a chain.
struct ChainLag {
  body::Role parent = body::Role::hips;
  body::Role child = body::Role::hips;
  double lag_seconds = 0.0;  ///< Child angular-speed peaks follow the parent's by this (signed).
  double lag_cycles = 0.0;   ///< lag_seconds / the mean cycle duration (two steps).
  double correlation = 0.0;  ///< Peak |normalised cross-correlation| in [0, 1] (confidence).
};

/// Rotation range of a role joint over the steps (rotation_range()), radians.
struct JointAmplitude {
  body::Role role = body::Role::hips;
  double range = 0.0;
};

/// Everything re-timing takes from one example or a folder of examples.
struct TimingSource {
  int version = 1;                     ///< JSON format version.
  std::vector<std::string> examples;   ///< Example names (file names), for reports.
  double mean_cycle_seconds = 0.0;     ///< Mean two-step cycle duration over the examples.
  std::vector<SegmentTiming> segments; ///< Every step segment of every example.
  std::vector<ChainLag> lags;          ///< Mean over examples per chain link.
  std::vector<JointAmplitude> amplitudes;  ///< Mean over examples per role.
  /// The examples' beat (KeyTimeReport::beat of their foot touch-downs): period = the
  /// confidence-weighted mean of the examples' periods, confidence = the best example's; phase 0.
  /// Not found (period 0) when no example has one. Re-timing onto it: RetimeSettings::on_beat.
  Beat beat;
  /// The examples' step times, seconds: between consecutive foot touch-downs (a contact's first
  /// frame, inside the clip) of alternating feet, a run of touch-downs of one foot (a skip's hop,
  /// a stance split in two) counting from its first, touch-downs within 0.1 s of it counting as
  /// the same event (both feet landing together). Unlike segments (full stance to full stance)
  /// a touch-down needs no full stance, so a short example still gives several. What re-timing's
  /// cadence is the median of (RetimeSettings::speed); empty in sources saved before it (the
  /// segments' durations are used then).
  std::vector<double> step_times;
};

/// The step times (see TimingSource::step_times) of one take's foot contacts at `frame_rate`.
/// Throws nothing.
std::vector<double> touch_down_steps(const body::ContactReport& contacts, double frame_rate);

/// Settings for measuring timing (sources and inputs alike).
struct SourceSettings {
  /// Key-time detection (hands/head are not needed and are skipped). Contacts without
  /// hysteresis (contact.release = 1): step keys, each contact's frame nearest its mean position,
  /// are compared across clips to the frame, and a stance extended by hysteresis moves them.
  KeyTimeSettings keys = [] {
    KeyTimeSettings k;
    k.contact.release = 1.0;
    return k;
  }();
  /// Cut-off of the zero-phase low-pass that gives the root path's travel direction, Hz.
  /// Default 1 (well below the step rate, so sway and bob do not turn it). > 0.
  double path_cutoff_hz = 1.0;
  /// Arc-length regularisation, body sizes per second added to the root speed so progress is
  /// strictly increasing even while standing still. Default 1e-3.
  double progress_epsilon = 1e-3;
  /// Cut-off of the angular-speed low-pass for rotation-peak lags, Hz. Default 6.
  double lag_cutoff_hz = 6.0;
  /// A foot's contact that starts within this many seconds of the end of that foot's previous
  /// contact, with no other foot's key between them, is one stance split by a brief hover (a foot
  /// slowing just before touch-down): the two give one step key (see full_steps()). Default
  /// 0.12 s (a hop's flight is longer); 0 = never merge. >= 0.
  double max_split_gap = 0.12;

  /// Throws Error(invalid_settings, "<field>").
  void validate() const;
};

/// The parent->child links re-timing succession uses: spine -> shoulder -> elbow -> hand (both
/// sides) and hip -> knee -> ankle (both sides), in chain order.
std::vector<std::pair<body::Role, body::Role>> succession_links();

/// Roles whose rotation range amplitude scaling transfers: spine, neck, head, shoulders, elbows,
/// hands (not the legs: changing them would make planted feet slide).
std::vector<body::Role> amplitude_roles();

/// Root progress per frame, metres: the arc length of the world path of point `root_point` (the
/// hips: path_point()) measured along its travel direction: each frame adds its raw horizontal
/// displacement projected on the direction of the low-passed path (negative steps count as 0),
/// plus progress_epsilon * body_size / frame_rate. Strictly increasing. Throws nothing.
std::vector<double> root_progress(const Motion& motion, const WorldPoses& poses, int root_point,
                                  const SourceSettings& settings);

/// The point whose world path is "the root path": the hips role if known, else joint 0 (some
/// exporters put a static root above the hips, e.g. Bandai-Namco's joint_Root).
int path_point(const body::JointRoles& roles) noexcept;

/// The step segments of one motion from its step keys (see step_keys()); `example` is copied
/// into each. Needs >= 2 keys (else empty). Throws nothing.
std::vector<SegmentTiming> segment_timings(const Motion& motion, const WorldPoses& poses, const body::JointRoles& roles,
                                           std::span<const StepKey> keys, std::span<const double> progress,
                                           int example = 0);

/// Rotation-peak lag of `child` after `parent` (joint indices): the lag maximising the absolute
/// normalised cross-correlation of their low-passed swing signals (local rotation about the mean,
/// projected on its principal axis), searched within +-window_frames, refined to sub-frame by a
/// parabola. Returns {lag_seconds, |correlation|}; the correlation is 0 when the best lag lies on
/// the window's edge (no interior peak). Throws nothing.
std::pair<double, double> rotation_peak_lag(const Motion& motion, int parent, int child, int window_frames,
                                            double cutoff_hz);

/// The 95th percentile of the angle (radians) of the joint's local rotation from its mean rotation
/// over frames [begin, end) (end < 0: to the last frame): a range nearly independent of timing.
/// Sources measure it between their first and last step key. Throws nothing.
double rotation_range(const Motion& motion, int joint, int begin = 0, int end = -1);

/// Builds a timing source from examples that share one skeleton topology (`roles` found on it).
/// Throws Error(mismatch) naming the first mismatched joint (require_same_topology) when examples
/// differ; Error(bad_data, "<name>") when an example has fewer than two foot key times; plus the
/// errors of detect_key_times(). `names` labels the examples (may be empty).
TimingSource make_timing_source(std::span<const Motion> examples, const body::JointRoles& roles,
                                std::span<const std::string> names = {}, const SourceSettings& settings = {});

/// The source as JSON text (doubles at full round-trip precision). Throws nothing.
std::string timing_source_to_json(const TimingSource& source);

/// Parses timing_source_to_json() output. Throws Error(bad_file, context) for malformed JSON,
/// missing fields, an unknown version or unknown role names.
TimingSource timing_source_from_json(std::string_view text, const std::string& context = "timing source");

}  // namespace koma::timing
