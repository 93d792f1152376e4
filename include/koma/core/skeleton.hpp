// Skeleton: the joint hierarchy of a motion, in parent-before-child order, so forward kinematics is
// one forward loop (like ozz::animation::Skeleton).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/core/rotation.hpp"

namespace koma {

/// One BVH-style animation channel. Position channels carry a length, rotation channels an angle.
enum class Channel : std::uint8_t { Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation };

/// The channels' names, the BVH spelling (parsed ignoring case, as BVH readers do).
inline constexpr EnumNames<Channel, 6> kChannelNames{{{{Channel::Xposition, "Xposition"},
                                                      {Channel::Yposition, "Yposition"},
                                                      {Channel::Zposition, "Zposition"},
                                                      {Channel::Xrotation, "Xrotation"},
                                                      {Channel::Yrotation, "Yrotation"},
                                                      {Channel::Zrotation, "Zrotation"}}},
                                                    NameCase::ignore};

/// "Xposition", ..., "Zrotation" (the BVH spelling).
std::string_view to_string(Channel channel) noexcept;
/// The channel named `text` in any case ("xrotation"), or nullopt.
std::optional<Channel> parse_channel(std::string_view text) noexcept;
/// True for X/Y/Zrotation.
constexpr bool is_rotation(Channel c) noexcept { return c >= Channel::Xrotation; }
/// 0, 1, 2 for the X, Y, Z axis of the channel.
constexpr int channel_axis(Channel c) noexcept { return static_cast<int>(c) % 3; }

/// A leaf point without a joint of its own (BVH "End Site"): a fixed offset from its parent joint.
struct EndSite {
  std::int32_t parent = -1;  ///< Index of the joint it hangs from.
  Vec3 offset = Vec3::Zero();  ///< Offset from that joint, metres, in the joint's frame.
};

/// Joint hierarchy and rest layout.
///
/// Invariants (checked by validate()):
///  1. names, parents, offsets and channels all have joint_count() entries, and there is >= 1 joint;
///  2. joint 0 is the only root (parent -1); every other parent index is smaller than the joint's
///     own index (parent before child);
///  3. names are non-empty and unique;
///  4. each joint's channel list has no channel twice and at most 6 entries;
///  5. offsets are finite;
///  6. every end site hangs from an existing joint and has a finite offset.
struct Skeleton {
  std::vector<std::string> names;        ///< Joint names as in the file.
  std::vector<std::int32_t> parents;     ///< Parent index per joint; -1 for the root (joint 0).
  std::vector<Vec3> offsets;             ///< Rest offset from the parent, metres, parent's frame.
  std::vector<std::vector<Channel>> channels;  ///< File channel layout per joint, in file order.
  std::vector<EndSite> end_sites;        ///< Leaf points, in file order.

  /// Number of joints.
  int joint_count() const noexcept { return static_cast<int>(names.size()); }
  /// Number of end sites.
  int end_site_count() const noexcept { return static_cast<int>(end_sites.size()); }
  /// Joints plus end sites: the number of points forward kinematics produces per frame.
  int point_count() const noexcept { return joint_count() + end_site_count(); }
  /// Index of the joint named `name` (exact match), or -1.
  int find(std::string_view name) const noexcept;
  /// Name of point `p` (a joint, or an end site named "<parent>_end" / "<parent>_end2", ...).
  std::string point_name(int p) const;
  /// Parent joint of point `p` (for an end site, the joint it hangs from); -1 for the root.
  int point_parent(int p) const noexcept;

  /// Euler order of a joint's rotation channels (their listed order). Joints with fewer than three
  /// rotation channels complete the order with the missing axes in X, Y, Z order; joints without
  /// rotation channels report ZXY.
  EulerOrder euler_order(int joint) const noexcept;
  /// True if the joint has any position channel (its translation is animated).
  bool has_position_channels(int joint) const noexcept;
  /// Total number of channels (the values per BVH motion row).
  int channel_count() const noexcept;

  /// Highest minus lowest Y of all points in the rest pose (metres).
  double rest_height() const;
  /// Largest side of the rest pose's bounding box (metres): the character's size whatever axis
  /// its rest pose is laid out along (some exporters lay the rest pose along X).
  double rest_extent() const;

  /// Throws koma::Error(bad_data) naming the first broken invariant.
  void validate() const;
};

/// Throws koma::Error(mismatch) naming the first joint where `a` and `b` differ in name or parent.
/// Offsets (bone lengths) may differ: motions of the same topology drive either skeleton.
void require_same_topology(const Skeleton& a, const Skeleton& b);

}  // namespace koma
