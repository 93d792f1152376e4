#include "timing_options.hpp"

#include "common.hpp"
#include "koma/body/roles_file.hpp"
#include "koma/timing/files.hpp"

namespace koma::cli {

body::JointRoles load_roles(const Skeleton& skeleton, const std::string& roles_path) {
  return body::read_roles(skeleton, roles_path);
}

timing::TimingSource load_timing_source(const std::string& like, const std::string& roles_path,
                                        const std::string& unit, bool quiet) {
  timing::MotionFileReader reader;
  reader.is_motion_file = [](const std::filesystem::path& p) { return io::is_motion_file(p); };
  reader.read = [&](const std::filesystem::path& p) { return read_input(InputOptions{p.string(), unit, "", ""}, quiet).motion; };
  return timing::load_timing_source(like, reader, roles_path);
}

}  // namespace koma::cli
