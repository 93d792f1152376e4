// Gait cycle analysis: the period of a walk or run, and one averaged cycle sampled at a fixed
// number of phases (JP3312337B2; Unuma, Anjyo, Takeuchi, SIGGRAPH 1995).
//
//   motion ──channels──▶ [C x N] ──autocorrelation, or foot contacts (koma::timing)──▶ period T, confidence
//                                 ──cut every full cycle, align, drop outliers, average──▶ [C x M]
//
// Channels of a gait (rows of every matrix in this module; see channel_names()):
//   0  root height            world Y of the root joint, metres
//   1  root forward speed     world velocity along the travel direction, metres per second
//   2  root lateral speed     world velocity across it (Y x forward), metres per second
//   3 + 3j + a                joint j, component a: the log map of the joint's local rotation
//                             relative to its mean rotation (radians), or with AngleMode::euler the
//                             file's Euler angles of the joint, unwrapped (radians, in the joint's
//                             Euler order, so "ZXY" lists z, x, y). The root joint's rotation is
//                             heading-free (GaitBasis::mean_rotations).
// The "root" is the joint that carries the travel: the joint whose local translation varies most
// (the hips in most files, also when a static ground joint sits above it).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"

namespace koma::gait {

/// How joint rotations become channels.
enum class AngleMode : std::uint8_t {
  log_map,  ///< 3-vector log map relative to the joint's mean rotation (no gimbal flips). Default.
  euler,    ///< The file's Euler angles per joint, unwrapped over time (matches the source file).
};

/// The angle modes' names.
inline constexpr EnumNames<AngleMode, 2> kAngleModeNames{
    {{{AngleMode::log_map, "log_map"}, {AngleMode::euler, "euler"}}}, NameCase::exact, "log_map"};

/// "log_map" or "euler".
std::string_view to_string(AngleMode mode) noexcept;

/// How the period is found.
enum class PeriodMethod : std::uint8_t {
  /// Autocorrelation first; the foot contacts instead when the autocorrelation finds no period of
  /// sufficient confidence, or when its period is off the contacts' stride period by more than
  /// 20 % (it locked onto one step or two strides) and the contacts' period is confident. Default.
  automatic,
  /// Normalised autocorrelation of the joint channels (see estimate_period()).
  autocorrelation,
  /// Foot contacts from koma::body's shared detector: the mean interval between successive
  /// touch-downs of the same foot, over both feet.
  contacts,
};

/// The period methods' names.
inline constexpr EnumNames<PeriodMethod, 3> kPeriodMethodNames{{{{PeriodMethod::automatic, "automatic"},
                                                                {PeriodMethod::autocorrelation, "autocorrelation"},
                                                                {PeriodMethod::contacts, "contacts"}}},
                                                              NameCase::exact,
                                                              "automatic"};

/// "automatic", "autocorrelation" or "contacts".
std::string_view to_string(PeriodMethod method) noexcept;

/// Number of root channels before the joint channels (height, forward speed, lateral speed).
inline constexpr int kRootChannels = 3;
/// Row of joint `joint`'s component `axis` (0..2).
constexpr int joint_channel(int joint, int axis) noexcept { return kRootChannels + 3 * joint + axis; }

/// Settings of cycle analysis.
struct CycleSettings {
  int samples = 64;             ///< Samples per averaged cycle (phases 2*pi*i/samples). >= 8. Default 64.
  double min_period = 0.3;      ///< Shortest period searched, seconds. > 0. Default 0.3 s.
  double max_period = 3.0;      ///< Longest period searched, seconds. > min_period. Default 3 s.
  double min_confidence = 0.5;  ///< Reject the motion when the period's confidence is below this, [0, 1]. Default 0.5.
  /// Cycles whose RMS joint-angle distance to the median cycle exceeds this factor times the median
  /// of those distances are left out of the average (starts, stops, stumbles). >= 1; 0 keeps all.
  /// Cycles within 0.01 rad RMS of the median are always kept. Default 2.
  double outlier_factor = 2.0;
  AngleMode angles = AngleMode::log_map;  ///< Joint channel kind. Default log map.
  /// Joint whose rotation channels drive the period search (e.g. a hip for hip flexion). Empty
  /// (default) = all joint rotation channels summed, which needs no naming convention.
  std::string period_joint;
  /// Period route. Default automatic.
  PeriodMethod period_method = PeriodMethod::automatic;
  /// Foot-contact detection for the contacts route (koma::body's detector). Default: its
  /// defaults without hysteresis (release = 1): apply_to_take() holds every contact frame in place
  /// with IK, and the frames hysteresis adds (a foot rolling heel to toe) are not planted (with
  /// 1.2 the Bandai dataset-2 walk's plant error rose from under 1 cm to 1.06 cm).
  body::ContactSettings contact = [] {
    body::ContactSettings c;
    c.release = 1.0;
    return c;
  }();
  /// Feet for the contacts route. Empty (default) = the left and right foot found by name
  /// (body::find_joint_roles()); a rig whose names koma does not know passes
  /// body::foot_effectors() of its own roles. Point indices are checked against the motion.
  std::vector<body::Effector> feet;

  /// Throws Error(invalid_settings) naming the first out-of-range field (including `contact`).
  void validate() const;
};

/// The period of a motion.
struct PeriodEstimate {
  double period_frames = 0;  ///< Period in frames of the input (sub-frame).
  double period = 0;         ///< Period in seconds.
  /// Normalised autocorrelation of the joint channels at the period, clamped to [0, 1], whichever
  /// route found the period: 1 = every cycle repeats exactly, 0 = no repetition.
  double confidence = 0;
  /// Route that found the period: autocorrelation or contacts (never automatic).
  PeriodMethod method = PeriodMethod::autocorrelation;
  /// Contacts route: foot touch-downs used (both feet). 0 for autocorrelation.
  int contacts = 0;
};

/// What every gait representation (averaged cycle, spectrum, adverb target) shares: the skeleton,
/// how channels are defined, the travel frame and the period.
struct GaitBasis {
  Skeleton skeleton;                       ///< Topology, rest offsets, channel layout (for writing BVH).
  LengthUnit source_unit = LengthUnit::metre;  ///< Unit of the analysed file; BVH output restores it.
  AngleMode angles = AngleMode::log_map;   ///< Joint channel kind.
  int root_joint = 0;                      ///< Joint carrying height and travel.
  Eigen::Vector2d forward{0.0, 1.0};       ///< Unit travel direction in the world XZ plane (x, z).
  double period = 1.0;                     ///< Seconds per cycle (two steps of a walk).
  double confidence = 0;                   ///< Confidence of the period, [0, 1].
  /// Route that found the period (autocorrelation or contacts).
  PeriodMethod period_method = PeriodMethod::autocorrelation;
  int cycles_found = 0;                    ///< Full cycles cut from the input.
  int cycles_used = 0;                     ///< Cycles averaged (cycles_found minus outliers).
  /// Per joint: the mean local rotation (log-map mode; identity in Euler mode). The root joint's
  /// rotations (its mean and its channels) are heading-free: the travel heading
  /// heading_rotation(forward) is taken out in the world frame, A^-1 H^-1 A q_root with A the world
  /// rotation of the root's parent, so walks in different directions compare and combine; synthesis
  /// puts the heading back.
  std::vector<Quat> mean_rotations;
  /// Per joint: the mean local translation (bone vector), metres. The root joint's entry is unused.
  std::vector<Vec3> bones;

  /// kRootChannels + 3 * joints.
  int channel_count() const noexcept { return kRootChannels + 3 * skeleton.joint_count(); }
  /// Throws Error(bad_data) naming the first broken invariant: valid skeleton; root_joint in range;
  /// forward unit length; period finite and > 0; mean_rotations and bones sized per joint and finite.
  void validate() const;
};

/// Channel names, one per row: "<root>.height", "<root>.forward_speed", "<root>.lateral_speed",
/// then "<joint>.lx/.ly/.lz" (log map) or "<joint>.Zrotation"... in Euler order (Euler mode).
std::vector<std::string> channel_names(const GaitBasis& basis);

/// The yaw about +Y that turns +Z into the travel direction `forward` (x, z; unit length).
Quat heading_rotation(const Eigen::Vector2d& forward);

/// The local rotation of joint `joint` from its three channel values `v` (radians). For the root
/// joint this is heading-free (see GaitBasis::mean_rotations).
Quat joint_rotation(const GaitBasis& basis, int joint, const Vec3& v);

/// A joint that turns by more than 90 degrees from one input frame to the next: no joint of a
/// walk moves that fast, so it is a glitch in the data (e.g. a 180 degree twist of a zero-length
/// toe bone), and it distorts the averaged cycle of that joint.
struct RotationJump {
  int joint = 0;       ///< Joint index.
  int frame = 0;       ///< The later frame of the pair (frame - 1 -> frame).
  double angle = 0;    ///< Rotation between the two frames, radians (> pi/2).
};

/// One averaged cycle.
struct GaitCycle {
  GaitBasis basis;
  /// channel_count() x samples. Column i is phase 2*pi*i/samples of the cycle; the cycle starts at
  /// the first frame of the first cycle that was kept (so the spectrum's phases mean nothing until
  /// fourier.hpp makes them relative).
  Eigen::MatrixXd samples;
  /// Largest linear drift removed from a joint channel of the averaged cycle (radians), the price
  /// of a seamless cycle: the kept cycles, averaged as cut, end on average this far from where
  /// they began (the mean of their drifts x(start + T) - x(start)), and that ramp is subtracted.
  /// Lossy; small for a steady walk of several cycles (<= 5.0 degrees on the shared walks of 4 or
  /// more cycles), larger when two cycles of a clip differ (up to 21 degrees on 2-cycle clips).
  double max_seam_correction = 0;
  /// Per joint, radians: the norm of the ramp removed from its three channels (see above).
  std::vector<double> seam_correction;
  /// Largest drift of a single kept cycle in a joint channel (radians): cycle-to-cycle variation
  /// of the input, which averaging cancels. A diagnostic (earlier versions reported this as the
  /// seam correction); large where arms, head or toes vary between cycles.
  double max_cycle_drift = 0;
  /// The kept cycles: each one's first input frame (fractional, after alignment), in order.
  std::vector<double> starts;
  /// The period in input frames (fractional): each kept cycle spans [start, start + period_frames].
  double period_frames = 0;
  /// Per joint with any, the largest frame-to-frame jump above 90 degrees in the input, in joint
  /// order (empty for clean data). Reported, not repaired.
  std::vector<RotationJump> jumps;
};

/// Every frame of a motion as gait channels.
struct MotionChannels {
  GaitBasis basis;         ///< Root joint, forward, mean rotations (whole motion), bones; no period yet.
  Eigen::MatrixXd values;  ///< channel_count() x frames.
};

/// The channels of every frame of `motion`. Speeds are central differences of the root's world
/// position; forward is the root's horizontal displacement from first to last frame (+Z when it
/// travels less than 1 cm). Throws Error(bad_data) for a motion of fewer than 3 frames.
MotionChannels motion_channels(const Motion& motion, AngleMode angles);

/// The period of `motion` by settings.period_method (automatic by default: see PeriodMethod).
/// Autocorrelation: the lag in [min_period, max_period] (and at most 2/3 of the motion) with the
/// highest normalised autocorrelation of the centred joint channels, preferring the shortest lag
/// within 85 % of the best peak (so two cycles are not mistaken for one), refined to a sub-frame
/// lag. Contacts: (sum over feet of last - first touch-down) / (number of strides between them),
/// where a gap of about n median intervals counts as n strides (a missed contact), then refined to
/// the best fractional lag within a frame (touch-downs are whole frames). Either way the
/// confidence is the normalised autocorrelation at the period.
/// Throws Error(bad_data, "period", ...) naming the confidence found (and, for contacts, the
/// touch-downs found) when it is below min_confidence or no period exists, Error(bad_data) when
/// the motion is too short for two min_period cycles, Error(bad_data, "skeleton") for the contacts
/// route on a skeleton without recognisable feet, Error(invalid_settings) for bad settings or an
/// unknown period_joint.
PeriodEstimate estimate_period(const Motion& motion, const CycleSettings& settings = {});

/// The averaged cycle of a periodic motion: finds the period, cuts every full cycle, aligns each to
/// the median cycle (shift within a quarter period), drops outliers, averages, and resamples to
/// `samples` phases. Lossy (averaging, seam correction). In log-map mode the mean rotations are
/// re-centred on the averaged cycle, so each joint channel has (near) zero mean.
/// Throws like estimate_period(), and Error(bad_data) when not one full cycle fits.
GaitCycle extract_cycle(const Motion& motion, const CycleSettings& settings = {});

}  // namespace koma::gait
