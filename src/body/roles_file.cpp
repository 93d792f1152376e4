#include "koma/body/roles_file.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::body {

JointRoles roles_from_json(const Skeleton& skeleton, std::string_view text, const std::string& where) {
  JointRoles roles = find_joint_roles(skeleton);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::bad_file, where, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) {
    throw Error(ErrorCode::bad_file, where, "expected a JSON object {\"role\": \"joint name\", ...}");
  }
  for (const auto& [role, joint] : doc.items()) {
    if (!joint.is_string()) {
      throw Error(ErrorCode::bad_file, where, fmt::format("role {}: the joint name must be a string", role));
    }
    try {
      assign_role(roles, skeleton, role, joint.get<std::string>());
    } catch (const Error& e) {
      throw Error(e.code(), where, fmt::format("{}: {}", e.context(), e.message()));  // which file said it
    }
  }
  return roles;
}

JointRoles read_roles(const Skeleton& skeleton, const std::filesystem::path& path) {
  if (path.empty()) return find_joint_roles(skeleton);
  return roles_from_json(skeleton, read_file(path), path.string());
}

}  // namespace koma::body
