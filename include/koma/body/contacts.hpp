// The one foot-contact detector of koma, and the fade in and out of contacts. Key selection (keys),
// cycle detection (gait), key times and re-timing (timing) and planted feet (cartoon) all use it.
//
//   height  ▲     swing            swing
//           │   ╭──╮             ╭──╮
//   band ── │ ──┼──┼─────────────┼──┼──────   h_min + max(height_fraction * range, min_height_band)
//           │___╯  ╰─────────────╯  ╰____
//           └──[   )─────────────[   )────▶ frame      contact = low AND slow AND not accelerating
//              contact            contact               interval [begin, end), key frame, confidence
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/body/roles.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"

namespace koma::body {

/// A tracked body part: one or more points whose contact is detected together (a foot = ankle
/// and toe: in contact when either the heel or the toe is planted).
struct Effector {
  std::string name;         ///< "left_foot", "right_foot", or any caller-chosen name.
  std::vector<int> points;  ///< Point indices (joints then end sites); >= 1.
};

/// The feet of `roles` as effectors {"left_foot": ankle + toe, "right_foot": ...}; a side missing
/// its ankle is left out, a missing toe leaves the ankle alone.
std::vector<Effector> foot_effectors(const JointRoles& roles);

/// The body size every setting of the body module is relative to: Skeleton::rest_extent(), or
/// 1.7 (metres: a human) for a skeleton with no extent (one joint).
double body_size(const Skeleton& skeleton);

/// The map from a frame's contact score (EffectorContacts::score) to the
/// probability that a person reading the motion marks the frame as in contact:
/// p = 1 / (1 + exp(-(slope * score + offset))). The defaults are the logistic fit to the
/// hand-labelled frames in tests/data/labels (a walk, a punch and a salsa: 1,131 frames of both
/// feet); the test ContactCalibration.ShippedDefaultsAreTheFitToTheLabels re-fits them and fails
/// when the detector drifts from them. fit_contact_calibration() fits them to other labels.
struct ContactCalibration {
  double slope = 2.965;   ///< > 0: a higher score is likelier contact.
  double offset = 0.673;  ///< Log-odds at score 0 (the edge of the thresholds).

  /// p for one score; 0.5 at score -offset / slope.
  double probability(double score) const noexcept;
};

/// Contact detection settings. Every threshold is relative to the figure or in seconds (body size
/// = Skeleton::rest_extent(), ~1.7 m for a human; heights relative to the clip's own robust height
/// spread), so the same settings find the same contacts at 24-120 fps and in any length unit.
struct ContactSettings {
  /// Cut-off of the zero-phase Gaussian low-pass applied to world positions before
  /// differentiating, Hz (-3 dB point). Default 6. <= 0 disables smoothing.
  double cutoff_hz = 6.0;
  /// A point is low when its height (world Y) is below floor + height_fraction * spread, with
  /// floor the 5th percentile and spread the 95th minus the 5th percentile of its own smoothed
  /// height over the clip (percentiles, not min and max: a marker glitch to the floor or a
  /// single jump does not move the band). Default 0.25; in (0, 1].
  double height_fraction = 0.25;
  /// The height band is at least this many body sizes (so a foot that never lifts still counts).
  /// Default 0.012 (2 cm on a 1.7 m figure). >= 0.
  double min_height_band = 0.012;
  /// A point is slow when its speed is below speed_threshold body sizes per second (body size =
  /// rest_extent, ~1.7 m for a human: 0.2 -> 0.35 m/s). Default 0.2; > 0.
  double speed_threshold = 0.2;
  /// A point is not accelerating when |a| is below accel_threshold body sizes per s^2.
  /// Default 6 (~10 m/s^2, generous: it trims heel-strike impacts only). > 0.
  double accel_threshold = 6.0;
  /// Hysteresis: a contact starts on frames inside the thresholds above and lasts while the
  /// effector stays within `release` times each of them (height band, speed, acceleration), so a
  /// planted foot that rocks from heel to toe stays one contact. 1 = no hysteresis. Default 1.2;
  /// >= 1.
  double release = 1.2;
  /// Contacts whose frames inside the thresholds (first to last) span less than this are dropped,
  /// seconds (hysteresis extends contacts; it does not make a brief dip one). Default 0.05.
  double min_duration = 0.05;
  /// Gaps shorter than this between two contacts of one effector are closed, seconds. Default 0.05.
  double max_gap = 0.05;
  /// Weight shifts: two consecutive contacts of one effector at most this many seconds apart whose
  /// mean positions are within `same_place` body sizes (horizontally) are one contact (a foot
  /// lifted in place, a heel raised while the weight moves). Default 0 = never merge (0.5 s joins
  /// a heel strike to its stance and moves the stance key); >= 0.
  double max_shift_gap = 0.0;
  /// See max_shift_gap. Body sizes; default 0.03 (5 cm on a 1.7 m figure). >= 0.
  double same_place = 0.03;
  /// Positions within this many body sizes of the nearest one count as equally near the
  /// contact's mean (mocap noise, a planted foot's plateau): the key is their weighted middle
  /// (see Contact::key_time). Default 0.001 (~2 mm); 0 = the nearest frame alone. >= 0.
  double key_tolerance = 0.001;
  /// Per-frame score to probability (Contact::confidence, EffectorContacts::probability).
  /// The defaults are fitted to tests/data/labels (see ContactCalibration).
  ContactCalibration calibration;

  /// Throws Error(invalid_settings, "<field>") for a non-finite or out-of-range field.
  void validate() const;
};

/// One contact of one effector: frames [begin, end).
struct Contact {
  int begin = 0;          ///< First frame in contact.
  int end = 0;            ///< One past the last frame in contact.
  /// The moment the effector (mean of its points, smoothed) is nearest the contact's mean
  /// position, fractional frames: the soft minimum sum(f * w_f) / sum(w_f) with
  /// w_f = exp(-((d_f - d_min) / tolerance)^2), d_f the frame's distance from the mean. One
  /// clear nearest frame gives that frame; a planted foot's plateau of equally near frames gives
  /// its middle, which a change of timing moves only as far as it moves the plateau.
  double key_time = 0.0;
  int key_frame = 0;      ///< key_time rounded to a frame in [begin, end).
  Vec3 mean_position = Vec3::Zero();  ///< Mean smoothed effector position over the contact, metres.
  /// In [0, 1]: the mean over the contact's frames of EffectorContacts::probability, so the
  /// expected share of its frames a person reading the motion marks as in contact (calibrated on
  /// hand-labelled frames: see ContactCalibration and docs/timing.md).
  double confidence = 0.0;

  int length() const noexcept { return end - begin; }
};

/// Contacts of one effector, in time order, disjoint.
struct EffectorContacts {
  Effector effector;
  std::vector<Contact> contacts;
  double height_band = 0.0;      ///< Metres above the floor (5th percentile) counted as low (largest over the points).
  std::vector<std::uint8_t> in_contact;  ///< Per frame: 1 inside a contact, else 0.
  /// Per frame: how far inside the contact thresholds the effector is, its best point's
  /// min(1 - speed / speed threshold, 1 - height above the floor / band), clamped to [-4, 1]:
  /// 1 = resting on the floor, 0 = on a threshold, < 0 outside. (The acceleration threshold,
  /// which only trims impacts, is left out: it did not help the fit to the labels.)
  std::vector<double> score;
  /// Per frame: calibration.probability(score), the calibrated probability of contact.
  std::vector<double> probability;
};

/// All effectors' contacts plus the absolute thresholds used (for reports and error messages).
struct ContactReport {
  std::vector<EffectorContacts> effectors;
  double speed_threshold = 0.0;  ///< m/s actually used.
  double accel_threshold = 0.0;  ///< m/s^2 actually used.
  double smoothing_sigma_frames = 0.0;  ///< Gaussian sigma of the low-pass, frames.

  /// The effector named `name`, or nullptr.
  const EffectorContacts* find(std::string_view name) const noexcept;
  /// Total number of contacts over all effectors.
  int contact_count() const noexcept;
};

/// Detects contacts of `effectors` in `motion` (world poses computed with forward_kinematics()).
/// Throws Error(invalid_settings) for bad settings, Error(bad_data) for a motion with fewer than 3
/// frames, and Error(invalid_settings, "effector <name>") for an effector with no points or a point
/// index out of range. Pure; deterministic.
ContactReport detect_contacts(const Motion& motion, std::span<const Effector> effectors,
                              const ContactSettings& settings = {});

/// The same from precomputed world poses (avoids a second forward-kinematics pass).
ContactReport detect_contacts(const Motion& motion, const WorldPoses& poses,
                              std::span<const Effector> effectors, const ContactSettings& settings = {});

/// Convenience: roles found by name, then the feet's contacts. Throws Error(bad_data,
/// "skeleton") when no foot (ankle) can be identified.
ContactReport detect_foot_contacts(const Motion& motion, const ContactSettings& settings = {});

/// The logistic fit of `labels` (1 = in contact) on `scores` (EffectorContacts::score of the same
/// frames): maximum likelihood by Newton's method, with a weak ridge (1e-3) so separable labels
/// still give a finite fit. Throws Error(bad_data) for spans of different sizes, fewer than 10
/// frames, labels of one class only, or a non-finite score. Pure.
ContactCalibration fit_contact_calibration(std::span<const double> scores, std::span<const std::uint8_t> labels);

/// Expected calibration error of `probabilities` against `labels`: frames binned by probability
/// into `bins` equal bins, the frame-weighted mean of |mean probability - share labelled 1|.
/// 0 for empty input. `bins` >= 1 (asserted).
double expected_calibration_error(std::span<const double> probabilities, std::span<const std::uint8_t> labels,
                                  int bins = 10);

/// Distance in frames from every frame to the nearest frame in contact (`in_contact` as in
/// EffectorContacts: 1 = in contact): 0 inside a contact, kNoContactNearby (a large number) for
/// every frame when no frame is in contact. Throws nothing.
std::vector<int> frames_to_contact(std::span<const std::uint8_t> in_contact);

/// Frames farther than any real clip from a contact (frames_to_contact() of a track without one).
inline constexpr int kNoContactNearby = 1 << 29;

/// The distance-to-contact fade: per frame, smoothstep(clamp(1 - d / fade_frames, 0, 1)) with d =
/// frames_to_contact(), so 1 inside a contact, easing (zero slope at both ends) to 0 at
/// `fade_frames` frames or more from it, 0 everywhere when there is no contact. The cartoon
/// filter blends planted-feet IK in with it; re-timing keeps leg shifts out of stances with
/// 1 - fade. `fade_frames` > 0 (asserted).
std::vector<double> contact_fade(std::span<const std::uint8_t> in_contact, double fade_frames);

}  // namespace koma::body
