// Body parts: the one vocabulary for "which part of the body" across koma. Key-selection timing
// layers (`--layers legs:3,arms:2`), cartoon strengths per part (`--parts arms:1.5,torso:0.5`) and
// reports all use these names.
//
//   name    aliases   what it holds
//   root              the root joint's translation (cartoon strengths; key layers have no root part)
//   torso   spine     hips, spine, chest: every joint that is not head, arms or legs
//   head              neck and head
//   arms              collar / shoulder down to the fingers
//   legs              thigh / upper leg down to the toes
//
// "torso" is the canonical word (to_string gives it; "spine" is also the name of a joint role,
// Role::spine, a single joint). The old cartoon word "spine" parses to the same part.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "koma/core/skeleton.hpp"

namespace koma::body {

/// A part of the body. The order indexes per-part arrays (CartoonSettings::part_strength).
enum class BodyPart : std::uint8_t { root, torso, head, arms, legs };

/// Number of body parts.
inline constexpr int kBodyPartCount = static_cast<int>(BodyPart::legs) + 1;

/// Canonical lower-case name: "root", "torso", "head", "arms", "legs".
std::string_view part_name(BodyPart part) noexcept;
/// All canonical part names in enum order (for error messages and help texts).
std::array<std::string_view, kBodyPartCount> part_names() noexcept;
/// The part a name (canonical or alias, exact lower-case spelling) stands for, or nullopt.
std::optional<BodyPart> find_part(std::string_view name) noexcept;
/// Parses a part name (canonical or alias); throws Error(invalid_settings, "part <name>") listing
/// the valid names.
BodyPart parse_part(std::string_view name);

/// Part of one joint or point from its own name, case-insensitively and without any namespace
/// prefix: arm/hand/wrist/elbow/shoulder/shldr/collar/clavicle/fingers -> arms;
/// leg/thigh/knee/shin/calf/foot/ankle/toe/buttock or a sided hip ("LeftHip", "hip_L") -> legs;
/// head/neck/eye/jaw/nose -> head; anything else -> torso. Never returns root. Used where there is
/// no tree to inherit from (point tracks) and per joint by the cartoon filter.
BodyPart body_part_of(std::string_view name) noexcept;

/// Part of every joint of a skeleton, decided at the top of each limb and inherited by its
/// children (so a hand's "Index1" is arms): a joint whose parent is torso is legs when its name
/// contains leg/thigh/knee/shin/calf/foot/toe/ankle/buttock/hipjoint, arms for
/// shoulder/shldr/collar/clavicle/arm/elbow/hand/wrist/finger/thumb, head for head/neck, else
/// torso; the root is torso. Case-insensitive. Never returns root. Used by key-selection layers.
std::vector<BodyPart> joint_parts(const Skeleton& skeleton);

}  // namespace koma::body
