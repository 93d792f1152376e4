// CLI plumbing shared by `koma timing` and `koma retime`: the --roles override file and loading a
// timing source from an example file, a folder of examples or a saved timing.json.
#pragma once

#include <string>

#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"
#include "koma/timing/source.hpp"

namespace koma::cli {

/// Roles of `skeleton` found by name, then overridden by `roles_path` (a JSON object mapping role
/// names to joint names, e.g. {"left_ankle": "LFoot"}) unless it is empty. Throws Error for an
/// unreadable or malformed file, an unknown role name or a joint the skeleton lacks.
body::JointRoles load_roles(const Skeleton& skeleton, const std::string& roles_path);

/// A timing source from `like`: a timing.json (by extension), a folder of motion files with one
/// skeleton (sorted by name), or one motion file. `unit` as for read_input (may be empty).
/// Throws Error as make_timing_source() and the readers do; Error(bad_data) for an empty folder.
timing::TimingSource load_timing_source(const std::string& like, const std::string& roles_path,
                                        const std::string& unit, bool quiet);

}  // namespace koma::cli
