// The timing module's files: the roles file (which joint plays which role) and a timing source
// named by a path (a saved timing.json, one example motion, or a folder of examples). The CLI
// (`--roles`, `--like`) and Python (koma.timing_source, koma.retime_like) both call these, so the
// rules are written once. Motion files are read through a caller's reader: the timing module does
// not depend on io.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "koma/core/motion.hpp"
#include "koma/body/roles.hpp"
#include "koma/timing/source.hpp"

namespace koma::timing {

/// The roles of `skeleton` found by name (body::find_joint_roles()), then overridden by `text`: a JSON
/// object mapping role names to joint names, e.g. {"left_ankle": "LFoot"}. `where` names the text
/// in errors (the file). Throws Error(bad_file, where) for invalid JSON, a non-object or a
/// non-string joint name; body::assign_role()'s errors for an unknown role or joint.
body::JointRoles roles_from_json(const Skeleton& skeleton, std::string_view text, const std::string& where = "roles");

/// roles_from_json() of the file at `path`; body::find_joint_roles() alone when `path` is empty.
/// Throws Error(io) when the file cannot be read, else as roles_from_json().
body::JointRoles read_roles(const Skeleton& skeleton, const std::filesystem::path& path);

/// How load_timing_source() reads motion files (e.g. io::is_motion_file and io::read_motion).
struct MotionFileReader {
  std::function<bool(const std::filesystem::path&)> is_motion_file;  ///< Which folder entries are examples.
  std::function<Motion(const std::filesystem::path&)> read;          ///< Reads one example.
};

/// A timing source named by `like`:
///  - a path ending in .json: a saved source (timing_source_from_json());
///  - a folder: every motion file in it (reader.is_motion_file), sorted by name, one skeleton;
///  - anything else: one example motion file.
/// Examples are labelled by file name; roles come from read_roles() on the first example's
/// skeleton and `roles_path`. Throws Error(io) for unreadable files, Error(bad_data, like) for a
/// folder without motion files, and the errors of the reader, read_roles() and make_timing_source().
TimingSource load_timing_source(const std::filesystem::path& like, const MotionFileReader& reader,
                                const std::filesystem::path& roles_path = {}, const SourceSettings& settings = {});

}  // namespace koma::timing
