// Joint roles: which joint of a skeleton is the left ankle, the head, ... found by name, and the
// side (left / right) a joint name says it is on. The body vocabulary that key selection, gait,
// timing and the cartoon filter share; see docs/body.md.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "koma/core/skeleton.hpp"

namespace koma::body {

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

}  // namespace koma::body
