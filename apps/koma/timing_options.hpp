// CLI plumbing shared by `koma timing` and `koma retime`: --roles and --like through the timing
// library's file rules (koma/timing/files.hpp), reading motions as every command does.
#pragma once

#include <string>

#include "koma/body/roles.hpp"
#include "koma/core/motion.hpp"
#include "koma/timing/source.hpp"

namespace koma::cli {

/// body::read_roles(): roles found by name, overridden by the --roles file unless empty.
body::JointRoles load_roles(const Skeleton& skeleton, const std::string& roles_path);

/// timing::load_timing_source() with the CLI's reader (`unit` as for read_input, may be empty;
/// reader warnings printed unless `quiet`).
timing::TimingSource load_timing_source(const std::string& like, const std::string& roles_path,
                                        const std::string& unit, bool quiet);

}  // namespace koma::cli
