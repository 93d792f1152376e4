#include "timing_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::cli {

body::JointRoles load_roles(const Skeleton& skeleton, const std::string& roles_path) {
  body::JointRoles roles = body::find_joint_roles(skeleton);
  if (roles_path.empty()) return roles;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_file(roles_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::bad_file, roles_path, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) {
    throw Error(ErrorCode::bad_file, roles_path, "expected a JSON object {\"role\": \"joint name\", ...}");
  }
  for (const auto& [role, joint] : doc.items()) {
    if (!joint.is_string()) {
      throw Error(ErrorCode::bad_file, roles_path, fmt::format("role {}: the joint name must be a string", role));
    }
    body::assign_role(roles, skeleton, role, joint.get<std::string>());
  }
  return roles;
}

timing::TimingSource load_timing_source(const std::string& like, const std::string& roles_path,
                                        const std::string& unit, bool quiet) {
  namespace fs = std::filesystem;
  const fs::path path(like);
  if (path.extension() == ".json") return timing::timing_source_from_json(read_file(path), like);
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_regular_file() && io::is_motion_file(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw Error(ErrorCode::bad_data, like, "folder holds no motion file (.bvh)");
  } else {
    files.push_back(path);
  }
  std::vector<Motion> examples;
  std::vector<std::string> names;
  for (const fs::path& f : files) {
    InputOptions in;
    in.path = f.string();
    in.unit = unit;
    examples.push_back(read_input(in, quiet).motion);
    names.push_back(f.filename().string());
  }
  const body::JointRoles roles = load_roles(examples.front().skeleton, roles_path);
  return timing::make_timing_source(examples, roles, names);
}

}  // namespace koma::cli
