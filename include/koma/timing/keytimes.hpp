// Key times: the moments that define a motion's timing (Kim, Kim & Neff 2015; the ETRI method).
// Feet: the frame of each contact nearest the contact's mean position (from the shared contact
// detector). Hands and head: local minima of the acceleration magnitude of their low-passed world
// positions (the "passing" moments of a swing), and their extremes: the direction reversals
// relative to the hips that animators key first (body::direction_reversals(), the rule of the keys
// selector's --keep-extremes). Every threshold is relative: speeds in body sizes per second,
// durations in seconds, prominences against the clip's own robust |a| spread, so a clip gives the
// same keys at any frame rate and in any length unit. A beat grid is fitted to the touch-downs.
//
//   |a|  ▲   ╭╮        ╭╮        ╭╮
//        │  ╭╯╰╮      ╭╯╰╮      ╭╯╰╮
//        │──╯  ╰──╮╭──╯  ╰──╮╭──╯  ╰──   prominence = min(left peak, right peak) - minimum
//        └────────▼▼────────▼▼─────────▶ frame
//                 key        key
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"
#include "koma/body/extremes.hpp"
#include "koma/timing/beat.hpp"

namespace koma::timing {

/// How a key time was found.
enum class KeyKind : std::uint8_t {
  contact,     ///< A foot contact: key frame = contact frame nearest the contact's mean position.
  accel_min,   ///< A local minimum of the effector's acceleration magnitude.
};

/// The key kinds' names.
inline constexpr EnumNames<KeyKind, 2> kKeyKindNames{{{{KeyKind::contact, "contact"}, {KeyKind::accel_min, "accel_min"}}}};

/// "contact" or "accel_min".
std::string_view to_string(KeyKind kind) noexcept;

/// One key time of one effector.
struct KeyTime {
  int frame = 0;            ///< The key frame (0-based frame index of the motion).
  int begin = 0;            ///< Contacts: first frame of the contact; minima: equals frame.
  int end = 0;              ///< Contacts: one past the last contact frame; minima: frame + 1.
  double confidence = 0.0;  ///< In [0, 1]: contact confidence, or the minimum's relative prominence.
};

/// The key times of one effector, in time order.
struct EffectorKeyTimes {
  std::string name;           ///< "left_foot", "right_foot", "left_hand", "right_hand", "head".
  KeyKind kind = KeyKind::contact;
  std::vector<int> points;    ///< Tracked point indices (joints then end sites).
  std::vector<KeyTime> keys;  ///< In time order.
  /// Hands and head: direction reversals relative to the hips (begin = frame, end = frame + 1,
  /// confidence = the turn's sharpness), in time order. Empty for feet.
  std::vector<KeyTime> extremes;
  /// Hands and head: true when the effector barely moves relative to the hips (its 90th-percentile
  /// speed is under KeyTimeSettings::still_speed); it then has no keys and no extremes.
  bool still = false;
  /// Hands and head that move but get neither a key nor an extreme: why, in words (how fast the
  /// effector moves and over how long a take), for reports. Empty otherwise.
  std::string note;
};

/// One attempt of the contact-threshold ladder (see KeyTimeSettings::fallbacks).
struct ContactAttempt {
  double height_fraction = 0.0;  ///< ContactSettings::height_fraction tried.
  double speed_threshold = 0.0;  ///< ContactSettings::speed_threshold tried (body sizes / s).
  int contacts = 0;              ///< Contacts found with it.
};

/// Key-time detection settings.
struct KeyTimeSettings {
  /// Contact detection, tried first. Defaults: ContactSettings defaults.
  body::ContactSettings contact;
  /// When `contact` finds no foot contact at all, these (height_fraction, speed_threshold) pairs
  /// are tried in order, each looser than the last. Default {(0.35, 0.3), (0.5, 0.5)}.
  std::vector<std::pair<double, double>> fallbacks = {{0.35, 0.3}, {0.5, 0.5}};
  /// Cut-off of the zero-phase low-pass for hand/head acceleration, Hz. Default 4.
  double accel_cutoff_hz = 4.0;
  /// Acceleration minima closer than this are merged (the deeper one is kept), seconds. Default 0.2.
  double min_separation = 0.2;
  /// A minimum counts when its prominence is at least this fraction of the clip's robust |a|
  /// spread (95th minus 5th percentile: one mocap glitch does not hide every swing). Default 0.25;
  /// in [0, 1).
  double min_prominence = 0.25;
  /// Hand and head extremes (direction reversals relative to the hips). Defaults: the keys
  /// selector's --keep-extremes defaults.
  body::ReversalSettings extremes;
  /// A hand or the head whose speed relative to the hips stays under this (90th percentile) is
  /// still: no keys, reported as such. Body sizes per second; default 0.05 (~8 cm/s). >= 0.
  double still_speed = 0.05;
  /// The beat grid fitted to the foot touch-downs (KeyTimeReport::beat).
  BeatSettings beat;
  /// Detect hand and head key times too. Default true.
  bool hands_and_head = true;
  /// Throw Error(bad_data) when no foot contact is found with any threshold. Default true.
  bool require_contacts = true;

  /// Throws Error(invalid_settings, "<field>") for out-of-range values (including `contact`).
  void validate() const;
};

/// Result of detect_key_times().
struct KeyTimeReport {
  std::vector<EffectorKeyTimes> effectors;  ///< Feet first (as found), then hands and head.
  std::vector<ContactAttempt> attempts;     ///< Contact thresholds tried, in order; the last one is used.
  body::ContactReport contacts;                   ///< The contact report of the used attempt.
  /// Beat grid of the foot touch-downs (each contact's first frame, contacts already under way at
  /// frame 0 left out); with fewer than 3 touch-downs, of every hand and head key instead.
  Beat beat;

  /// The effector named `name`, or nullptr.
  const EffectorKeyTimes* find(std::string_view name) const noexcept;
};

/// A foot key of the step sequence: a contact key frame and which foot.
struct StepKey {
  int frame = 0;        ///< Key frame.
  std::string foot;     ///< Effector name ("left_foot", ...).
  double confidence = 0.0;
  int begin = 0;        ///< The contact's first frame.
  int end = 0;          ///< One past the contact's last frame.

  /// True when the contact touches neither end of a clip of `frame_count` frames: a full stance.
  /// A stance cut by the clip has no comparable key (its key is the frame nearest the mean of
  /// only part of the stance).
  bool full(int frame_count) const noexcept { return begin > 0 && end < frame_count; }
};

/// Detects key times of the feet (contacts), and unless disabled of hands and head, using `roles`
/// (find_joint_roles() or overridden). Pure, deterministic.
/// Throws Error(invalid_settings) for bad settings; Error(bad_data, "skeleton") when no foot role is
/// known; Error(bad_data, "foot contacts") listing every threshold tried when no contact is found
/// (unless require_contacts is false); Error(bad_data) for motions under 3 frames.
KeyTimeReport detect_key_times(const Motion& motion, const body::JointRoles& roles, const KeyTimeSettings& settings = {});

/// The same with the motion's world poses given (forward_kinematics(motion); only the tracked
/// foot, and if enabled hand and head, points are read). For callers that detect keys many times
/// on motions they can pose more cheaply than whole.
KeyTimeReport detect_key_times(const Motion& motion, const WorldPoses& poses, const body::JointRoles& roles,
                               const KeyTimeSettings& settings = {});

/// Local minima of |acceleration| of a (low-passed) track: frames with prominence >= min_prominence
/// of the |a| spread (95th minus 5th percentile over the track), at least min_separation apart.
/// `confidence` = prominence / spread, clamped to 1. Empty for tracks under 5 frames or with a
/// constant |a|. Throws nothing.
std::vector<KeyTime> acceleration_minima(std::span<const Vec3> track, double frame_rate, double cutoff_hz,
                                         double min_separation, double min_prominence);

/// The foot keys of a report merged in time order (every foot's contact key frames). Keys closer
/// than `min_gap_frames` are merged into the more confident one (standing with both feet down).
std::vector<StepKey> step_keys(const KeyTimeReport& report, int min_gap_frames = 2);

/// The keys of full stances (StepKey::full) of a clip of `frame_count` frames: the step sequence
/// timing is measured and transferred on. First, two consecutive keys of the same foot whose
/// contacts are at most `max_split_gap_frames` apart are one stance split by a brief hover: they
/// become one key (the longer contact's, spanning both). Then the clip's first and last, cut,
/// stances are dropped unless fewer than two full ones remain (then all merged keys are
/// returned). Throws nothing.
std::vector<StepKey> full_steps(std::span<const StepKey> keys, int frame_count, int max_split_gap_frames = 0);

}  // namespace koma::timing
