// Joint roles (which joint is the left ankle, the head, ...) and the one shared foot-contact
// detector of koma. Key-time detection (timing) and planted-feet constraints (cartoon) both use it.
//
//   height  ▲     swing            swing
//           │   ╭──╮             ╭──╮
//   band ── │ ──┼──┼─────────────┼──┼──────   h_min + max(height_fraction * range, min_height_band)
//           │___╯  ╰─────────────╯  ╰____
//           └──[   )─────────────[   )────▶ frame      contact = low AND slow AND not accelerating
//              contact            contact               interval [begin, end), key frame, confidence
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"

namespace koma::timing {

/// A body role a joint (or end site) can play. Toes are points (a joint or an end site); all other
/// roles are joints. Names as role_name() spells them: "hips", "left_ankle", ...
enum class Role : std::uint8_t {
  hips,
  spine,  ///< First joint of the spine chain above the hips (may equal none).
  neck,
  head,
  left_shoulder,  ///< Upper-arm joint (the one whose child is the elbow).
  left_elbow,
  left_hand,  ///< Wrist / hand joint (the arm's end effector).
  right_shoulder,
  right_elbow,
  right_hand,
  left_hip,  ///< Thigh / upper-leg joint.
  left_knee,
  left_ankle,  ///< Foot / ankle joint (also stands for the heel).
  left_toe,    ///< Toe joint, or the ankle's end site when there is no toe joint (a point index).
  right_hip,
  right_knee,
  right_ankle,
  right_toe,
};

/// Number of roles.
inline constexpr int kRoleCount = static_cast<int>(Role::right_toe) + 1;

/// Lower-case role name ("left_ankle").
std::string_view role_name(Role role) noexcept;
/// All role names in enum order (for error messages and help texts).
std::array<std::string_view, kRoleCount> role_names() noexcept;
/// Parses a role name; throws Error(invalid_settings, "role <name>") listing the valid names.
Role parse_role(std::string_view name);

/// Which joint plays which role. Indices are joint indices, except the toes, which are point
/// indices (joints first, then end sites, as forward_kinematics() lays them out). -1 = not found.
struct JointRoles {
  std::array<int, kRoleCount> points{};  ///< Per role, the joint/point index or -1.

  JointRoles() { points.fill(-1); }
  /// The index for `role`, or -1.
  int operator[](Role role) const noexcept { return points[static_cast<int>(role)]; }
  /// Sets the index for `role` (no checks; use assign_role() for checked overrides by name).
  void set(Role role, int index) noexcept { points[static_cast<int>(role)] = index; }
  /// True if `role` was found.
  bool has(Role role) const noexcept { return (*this)[role] >= 0; }
};

/// Finds the roles by joint-name patterns, case-insensitively, after stripping any namespace
/// prefix ("mixamorig:"). Covers the Bandai-Namco (Foot_L, UpperLeg_L), CMU (LeftFoot, LeftUpLeg;
/// LeftAnkle, LeftHip; lFoot, lThigh, lShldr), Mixamo, Blender (foot_L, thigh_L, calf_L), Xia and
/// koma sample skeletons. Strategy: the ankle is the shallowest joint of a side named foot/ankle,
/// the knee and hip are its parent and grandparent (skipping twist joints); the hand is the
/// shallowest hand/wrist joint, elbow and shoulder its ancestors; the toe is the ankle's child joint
/// (preferring toe-named ones), else its end site; hips = shallowest hips/pelvis/hip joint, else the
/// root; head = shallowest head joint. Never throws; missing roles stay -1.
JointRoles find_joint_roles(const Skeleton& skeleton);

/// Overrides one role with the joint (or, for toes, joint or end-site point name as
/// Skeleton::point_name() spells it) named `joint_name`. Throws Error(invalid_settings) for an
/// unknown role name and Error(mismatch, "role <role>") when the skeleton has no such joint.
void assign_role(JointRoles& roles, const Skeleton& skeleton, std::string_view role,
                 std::string_view joint_name);

/// Side of a joint name: -1 = left, +1 = right, 0 = neither ("LeftFoot", "lFoot", "Foot_L",
/// "foot.L", "mixamorig:LeftFoot" are left). Exposed for body-part grouping elsewhere.
int name_side(std::string_view name) noexcept;

/// A tracked body part: one or more points whose contact is detected together (a foot = ankle
/// and toe: in contact when either the heel or the toe is planted).
struct Effector {
  std::string name;         ///< "left_foot", "right_foot", or any caller-chosen name.
  std::vector<int> points;  ///< Point indices (joints then end sites); >= 1.
};

/// The feet of `roles` as effectors {"left_foot": ankle + toe, "right_foot": ...}; a side missing
/// its ankle is left out, a missing toe leaves the ankle alone.
std::vector<Effector> foot_effectors(const JointRoles& roles);

/// Contact detection settings. Defaults work for walks and runs at 24-120 fps of human-sized
/// characters; speeds are relative to the character's size (Skeleton::rest_extent()).
struct ContactSettings {
  /// Cut-off of the zero-phase Gaussian low-pass applied to world positions before
  /// differentiating, Hz (-3 dB point). Default 6. <= 0 disables smoothing.
  double cutoff_hz = 6.0;
  /// A point is low when its height (world Y) is below min + height_fraction * (max - min) of its
  /// own smoothed height over the clip. Default 0.25; in (0, 1].
  double height_fraction = 0.25;
  /// The height band is at least this many metres (so a foot that never lifts still counts).
  /// Default 0.02 m.
  double min_height_band = 0.02;
  /// A point is slow when its speed is below speed_threshold body sizes per second (body size =
  /// rest_extent, ~1.7 m for a human: 0.2 -> 0.35 m/s). Default 0.2; > 0.
  double speed_threshold = 0.2;
  /// A point is not accelerating when |a| is below accel_threshold body sizes per s^2.
  /// Default 6 (~10 m/s^2, generous: it trims heel-strike impacts only). > 0.
  double accel_threshold = 6.0;
  /// Contacts shorter than this are dropped, seconds. Default 0.05.
  double min_duration = 0.05;
  /// Gaps shorter than this between two contacts of one effector are closed, seconds. Default 0.05.
  double max_gap = 0.05;
  /// Positions within this many body sizes of the nearest one count as equally near the
  /// contact's mean (mocap noise, a planted foot's plateau): the key is their weighted middle
  /// (see Contact::key_time). Default 0.001 (~2 mm); 0 = the nearest frame alone. >= 0.
  double key_tolerance = 0.001;

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
  /// In [0, 1]: mean over the contact of how far inside the thresholds the effector is
  /// (min of 1 - speed/threshold and 1 - height_above_min/band), times min(1, duration / 0.2 s).
  double confidence = 0.0;

  int length() const noexcept { return end - begin; }
};

/// Contacts of one effector, in time order, disjoint.
struct EffectorContacts {
  Effector effector;
  std::vector<Contact> contacts;
  double height_band = 0.0;      ///< Metres above the lowest point counted as low (per effector).
  std::vector<std::uint8_t> in_contact;  ///< Per frame: 1 inside a contact, else 0.
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

/// Zero-phase Gaussian low-pass of a track sampled at `frame_rate` with -3 dB cut-off `cutoff_hz`
/// (sigma = sqrt(ln 2) / (2 pi cutoff) seconds, kernel truncated at +-3 sigma). Ends are extended
/// linearly (a ramp passes unchanged). Returns the input unchanged when cutoff_hz <= 0 or the
/// kernel is under one frame wide. Throws nothing.
std::vector<Vec3> lowpass_zero_phase(std::span<const Vec3> track, double frame_rate, double cutoff_hz);

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

}  // namespace koma::timing
