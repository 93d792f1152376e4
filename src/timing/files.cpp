#include "koma/timing/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "koma/body/roles_file.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::timing {

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
  const body::JointRoles roles = body::read_roles(examples.front().skeleton, roles_path);
  return make_timing_source(examples, roles, names, settings);
}

}  // namespace koma::timing
