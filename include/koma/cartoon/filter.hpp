// The cartoon animation filter (Wang, Drucker, Agrawala, Cohen, SIGGRAPH 2006):
//
//   x*(t) = x(t) - A * (G_sigma * x'')(t)
//
// One strength knob A adds anticipation (the motion first dips the other way), follow-through
// (it overshoots) and exaggeration. Zero-phase (the kernel is symmetric), so nothing is delayed.
// Response to a sinusoid of angular frequency w (radians per frame):
//
//   gain(w) = 1 + A * w^2 * exp(-sigma^2 w^2 / 2)      peak at w = sqrt(2) / sigma
//
// Constants and linear ramps pass unchanged (x'' = 0). See docs/cartoon.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"
#include "koma/body/parts.hpp"

namespace koma::cartoon {

/// Settings of the one-dimensional filter core, in frames of the sampled signal (the core sees
/// samples, not time). Whole motions are configured in seconds (CartoonSettings) and converted
/// with CartoonSettings::filter_at(); set CartoonSettings::per_frame to use these values as given
/// at every rate.
struct FilterSettings {
  /// Strength A (dimensionless; x'' is taken per frame^2). 0 = identity. Default 1. Must be finite
  /// and within +-1e6; negative values smooth instead of exaggerate.
  double strength = 1.0;
  /// Fixed Gaussian sigma in frames of the input; 0 = adaptive per frame (default).
  double sigma_frames = 0.0;
  /// Window of the adaptive sigma estimate, frames (8..1024; kissfft takes any size). Default 32.
  int window = 32;
  /// Clamp of the adaptive sigma, frames. Defaults 2 and 8 (below 2 frames the peak gain
  /// 1 + 2A/(e sigma^2) lands on mocap noise).
  double min_sigma = 2.0;
  double max_sigma = 8.0;
  /// The adaptive sigma is estimated every `hop` frames and interpolated, then averaged over
  /// +-`smooth` frames. Defaults 4 and 4 (>= 1 and >= 0).
  int hop = 4;
  int smooth = 4;

  /// Throws Error(invalid_settings, "<field>"): non-finite strength, sigma_frames < 0 or
  /// non-finite, a window outside 8..1024, min_sigma <= 0, max < min,
  /// hop < 1, smooth < 0.
  void validate() const;
};

/// sigma (frames) whose filter gain peaks at angular frequency `omega` (radians per frame):
/// sqrt(2) / omega.
double sigma_for_frequency(double omega) noexcept;

/// Filters one channel with a fixed sigma (frames): the kernel h = delta - A * (g_sigma * D2) with
/// g truncated at +-ceil(5 sigma) and normalised, D2 the fourth-order second-difference stencil
/// (-1, 16, -30, 16, -1) / 12 (x'' per frame^2); the signal is extended linearly past both ends
/// with its mean slope over the first / last round(sigma) frames. Lossy (that is the point). Throws Error(invalid_settings) for
/// sigma <= 0 or non-finite strength; Error(bad_data) for fewer than 3 samples.
std::vector<double> filter_channel(std::span<const double> x, double sigma, double strength);

/// Allocation-free form: `out` has x.size() entries; `scratch` at least x.size() + 2 * (radius + 1)
/// with radius = ceil(5 sigma) + 2. Same preconditions (asserted, not thrown).
void filter_channel(std::span<const double> x, double sigma, double strength, std::span<double> scratch,
                    std::span<double> out);

/// Filters one channel with a per-frame sigma (frames, sigma.size() == x.size()).
std::vector<double> filter_channel(std::span<const double> x, std::span<const double> sigma, double strength);

/// Adaptive sigma of a group of channels sampled together (layout [frames x channels]): at each
/// frame, the power spectrum (Hann-windowed FFT, Eigen's kissfft) of the first difference over a
/// `window`-frame window centred there, summed over channels; its strongest non-DC bin (refined by
/// parabolic interpolation) is the dominant frequency w, and sigma = sqrt(2) / w, clamped to
/// [min_sigma, max_sigma]. Estimated every 4th frame and interpolated; weak windows lean towards the
/// clip's dominant sigma (log blend, weight P / (P + P_mean / 2), P = window power); then smoothed
/// over +-4 frames. A clip with no motion gives max_sigma. Throws Error(invalid_settings).
std::vector<double> adaptive_sigma(std::span<const double> samples, int frames, int channels,
                                   const FilterSettings& settings);

/// Frame rate at which the rate-independent strength equals the per-frame A (30 fps).
inline constexpr double kStrengthReferenceRate = 30.0;

/// Whole-motion settings. The filter is set in seconds, so one value does the same thing at 24,
/// 30, 60 or 120 fps; filter_at() gives the per-frame filter for a rate.
struct CartoonSettings {
  /// Strength A in units of (1/30 s)^2: the per-frame A at 30 fps, and A * (fps / 30)^2 per frame
  /// at another rate (x'' per frame^2 shrinks as 1/fps^2). 0 = identity; finite, within +-1e4;
  /// negative smooths. Default 1.
  double strength = 1.0;
  /// Fixed Gaussian sigma, seconds; 0 = adaptive per frame (default).
  double sigma_seconds = 0.0;
  /// Clamp of the adaptive sigma, seconds. Defaults 1/15 and 4/15 (2 and 8 frames at 30 fps).
  double min_sigma_seconds = 2.0 / 30.0;
  double max_sigma_seconds = 8.0 / 30.0;
  /// Window of the adaptive sigma estimate, seconds, rounded to whole frames (clamped to 8..1024).
  /// Default 16/15 (32 frames at 30 fps, 26 at 24 fps, 128 at 120 fps).
  double window_seconds = 32.0 / 30.0;
  /// Per-frame filter settings used as given, whatever the rate (the seconds fields above are then
  /// ignored). Empty (default) = derived from the seconds fields by filter_at().
  std::optional<FilterSettings> per_frame;
  /// Strength multiplier per body part (indexed by body::BodyPart: root = the root joint's
  /// translation, torso = its rotation and the spine, head, arms, legs; a joint's part is
  /// body::body_part_of(its name)), each finite; default all 1.
  std::array<double, body::kBodyPartCount> part_strength{1.0, 1.0, 1.0, 1.0, 1.0};
  /// Squash-and-stretch amount K (0 = off, default). Stretch factor along the acceleration
  /// direction s = exp(K * c * min(|a| / g, 3)), c = cos(velocity, acceleration) * |v| / (|v| + 0.5 m/s).
  double squash = 0.0;
  /// Joint that squashes ("" = the root).
  std::string squash_joint;
  /// Delay of the time-shifted copy that drives squash, seconds. Default 0.05.
  double squash_delay = 0.05;
  /// Keep planted feet planted (two-bone IK per leg). Default off.
  bool keep_feet = false;
  /// Time over which IK blends in before and out after each contact, seconds (rounded to frames,
  /// at least 1). Default 0.1 (3 frames at 30 fps, 12 at 120 fps); >= 0.
  double blend_seconds = 0.1;
  /// Foot-contact detection for keep_feet.
  body::ContactSettings contacts;
  /// The bound (docs/cartoon.md, "Within a body's reach"): the rotation the filter adds to a
  /// joint stays within `bound_share` times that joint's own range in the segment in the same
  /// direction (the ellipsoid of its local rotations as log maps about their mean: principal axes,
  /// largest extent along each), and so does the displacement added to an animated translation
  /// (the root's) within its own range of positions; by a smooth gain envelope on the added part,
  /// so the effect keeps its shape where it is cut down. 0 = no bound. Default 0.5; finite, >= 0.
  double bound_share = 0.5;
  /// Discontinuities (a T-pose frame before the motion, a jump cut) split the take into segments
  /// that are filtered on their own: a step between two frames is a cut when some point moves
  /// faster than `cut_speed` body sizes per second (body::body_size: 12 is ~20 m/s on a 1.7 m
  /// figure, beyond a kick or a punch), or faster than `cut_ratio` times the fastest step within
  /// 0.05 s on either side and at least 2 body sizes per second. cut_speed 0 = never split.
  /// Defaults 12 and 8; finite, cut_speed >= 0, cut_ratio > 1.
  double cut_speed = 12.0;
  double cut_ratio = 8.0;

  /// Validates filter and contact settings, part strengths, squash >= 0 finite, delay >= 0,
  /// blend_seconds >= 0; sigma_seconds >= 0, 0 < min_sigma_seconds <= max_sigma_seconds,
  /// window_seconds > 0, all finite. Throws Error(invalid_settings, "<field>").
  void validate() const;

  /// The per-frame filter at `frame_rate` (> 0, finite): `per_frame` when set; otherwise strength
  /// * (frame_rate / 30)^2, sigmas * frame_rate, the window in whole frames, and hop and
  /// smooth of 4 frames at 30 fps scaled with the rate (at least 1). Throws Error(invalid_settings).
  FilterSettings filter_at(double frame_rate) const;
};

/// Frames [begin, end) of the input filtered together (between discontinuities).
struct Segment {
  int begin = 0;
  int end = 0;
};

/// A joint whose added rotation (or, for an animated translation such as the root's, added
/// displacement) the bound cut down (CartoonSettings::bound_share).
struct BoundReport {
  int joint = 0;                        ///< Skeleton joint index.
  bool translation = false;             ///< true: the joint's translation; range, bound, requested in metres.
  std::vector<Segment> frames;          ///< Frame ranges where the bound reduced the added part.
  /// The joint's own range in the direction of the added part at the worst frame (radians, or
  /// metres for a translation): see CartoonSettings::bound_share.
  double range = 0;
  double bound = 0;                     ///< bound_share * range.
  double requested = 0;                 ///< The added part the filter asked for there.
  int requested_frame = 0;              ///< The worst frame (largest requested / bound).
};

/// One frame of squash and stretch.
struct SquashFrame {
  double stretch = 1.0;                 ///< s along `direction`; 1/sqrt(s) across it; product 1.
  Vec3 direction = Vec3::UnitY();       ///< Unit world direction of the (delayed) acceleration.
  Vec3 axis_scale = Vec3::Ones();       ///< Per local axis scale stored in Motion::scales (product 1).
};

/// Result of cartoon_motion().
struct CartoonResult {
  Motion motion;                        ///< The filtered motion (scales filled when squash > 0).
  std::vector<double> root_sigma;       ///< Per frame sigma used for the root translation, frames.
  double sigma_min = 0, sigma_mean = 0, sigma_max = 0;  ///< Over all channel groups and frames, frames.
  double frame_rate = 0;                ///< The input's rate: sigma in seconds = sigma / frame_rate.
  FilterSettings filter;                ///< The per-frame filter that was applied (filter_at).
  std::vector<SquashFrame> squash;      ///< Per frame, empty when squash = 0.
  body::ContactReport contacts;       ///< Contacts of the input (when keep_feet).
  double skating_input_mm = 0;          ///< Mean horizontal toe travel per frame during contacts, input.
  double skating_output_mm = 0;         ///< The same for the output (keep_feet only).
  double body_change_m = 0;             ///< Mean world displacement of all joints, input -> output.
  double max_change_m = 0;              ///< Largest world displacement of any joint.
  int max_change_joint = 0;             ///< The joint of max_change_m (skeleton joint index).
  int max_change_frame = 0;             ///< The frame of max_change_m.
  int unreachable_frames = 0;           ///< Leg-frames where the IK target was out of reach.
  /// The segments filtered on their own (one for a take without discontinuities); frames outside
  /// every segment (a cut's own frames, a segment shorter than 3 frames) are left as they were.
  std::vector<Segment> segments;
  /// Joints whose added rotation the bound reduced, in skeleton order (empty when none was).
  std::vector<BoundReport> bounded;
};

/// Applies the filter to a motion: root translation (3 channels, part root), every joint's
/// rotation as the log map relative to the joint's mean rotation, unwrapped over time so a joint
/// turning through +-180 degrees does not jump (part by joint name), and animated translations of
/// other joints; back to unit quaternions. Each segment between discontinuities (find_segments)
/// is filtered on its own, and each joint's added rotation is bounded (bound_share). Optional
/// squash and stretch, optional planted feet.
/// Lossy. Throws Error(invalid_settings) for bad settings, Error(bad_data) for a motion with
/// fewer than 3 frames or invalid data, Error(bad_data, "skeleton") for keep_feet without legs,
/// Error(invalid_settings, "squash_joint") for an unknown squash joint.
CartoonResult cartoon_motion(const Motion& motion, const CartoonSettings& settings);

/// Applies the filter to point tracks (layout [frames x names.size()], metres), each point's x, y, z
/// with its own adaptive sigma and the strength of its name's part (body::body_part_of). Same errors.
std::vector<Vec3> cartoon_points(std::span<const Vec3> positions, int frames, std::span<const std::string> names,
                                 double frame_rate, const CartoonSettings& settings);

/// The segments of `motion` between discontinuities (see CartoonSettings::cut_speed), from its
/// world poses `poses` (forward_kinematics(motion)); one segment [0, frame_count) when there is none
/// or cut_speed is 0. Segments are disjoint, in order, and may be shorter than 3 frames. Throws
/// nothing.
std::vector<Segment> find_segments(const Motion& motion, const WorldPoses& poses, const CartoonSettings& settings);

/// Mean horizontal (XZ) travel per frame of the contacts' toe (last effector point) over all
/// contact frames, millimetres. 0 when there are no contacts.
double foot_skating_mm(const Motion& motion, const body::ContactReport& contacts);

}  // namespace koma::cartoon
