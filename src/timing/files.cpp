#include "koma/timing/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::timing {

body::JointRoles roles_from_json(const Skeleton& skeleton, std::string_view text, const std::string& where) {
  body::JointRoles roles = body::find_joint_roles(skeleton);
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
      body::assign_role(roles, skeleton, role, joint.get<std::string>());
    } catch (const Error& e) {
      throw Error(e.code(), where, fmt::format("{}: {}", e.context(), e.message()));  // which file said it
    }
  }
  return roles;
}

body::JointRoles read_roles(const Skeleton& skeleton, const std::filesystem::path& path) {
  if (path.empty()) return body::find_joint_roles(skeleton);
  return roles_from_json(skeleton, read_file(path), path.string());
}

TimingSource load_timing_source(const std::filesystem::path& like, const MotionFileReader& reader,
                                const std::filesystem::path& roles_path, const SourceSettings& settings) {
  namespace fs = std::filesystem;
  if (like.extension() == ".json") return timing_source_from_json(read_file(like), like.string());
  std::vector<fs::path> files;
  if (fs::is_directory(like)) {
    for (const auto& entry : fs::directory_iterator(like)) {
      if (entry.is_regular_file() && reader.is_motion_file(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw Error(ErrorCode::bad_data, like.string(), "folder holds no motion file (.bvh)");
  } else {
    files.push_back(like);
  }
  std::vector<Motion> examples;
  std::vector<std::string> names;
  for (const fs::path& f : files) {
    examples.push_back(reader.read(f));
    names.push_back(f.filename().string());
  }
  const body::JointRoles roles = read_roles(examples.front().skeleton, roles_path);
  return make_timing_source(examples, roles, names, settings);
}

}  // namespace koma::timing
