// The roles file: a JSON object naming which joint plays which role ({"left_ankle": "LFoot"}), for
// rigs whose joint names koma does not know. The one reader behind every `--roles` (retime, timing,
// gait apply), Python's roles= and the Blender add-on.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "koma/body/roles.hpp"
#include "koma/core/skeleton.hpp"

namespace koma::body {

/// The roles of `skeleton` found by name (find_joint_roles()), then overridden by `text`: a JSON
/// object mapping role names to joint names, e.g. {"left_ankle": "LFoot"}. `where` names the text
/// in errors (the file). Throws Error(bad_file, where) for invalid JSON, a non-object or a
/// non-string joint name; assign_role()'s errors (with `where` as context) for an unknown role or joint.
JointRoles roles_from_json(const Skeleton& skeleton, std::string_view text, const std::string& where = "roles");

/// roles_from_json() of the file at `path`; find_joint_roles() alone when `path` is empty.
/// Throws Error(io) when the file cannot be read, else as roles_from_json().
JointRoles read_roles(const Skeleton& skeleton, const std::filesystem::path& path);

}  // namespace koma::body
