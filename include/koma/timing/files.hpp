// The timing module's files: a timing source named by a path (a saved timing.json, one example
// motion, or a folder of examples; the roles file is body's, koma/body/roles_file.hpp). The CLI
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

/// How load_timing_source() reads motion files (e.g. io::is_motion_file and io::read_motion).
struct MotionFileReader {
  std::function<bool(const std::filesystem::path&)> is_motion_file;  ///< Which folder entries are examples.
  std::function<Motion(const std::filesystem::path&)> read;          ///< Reads one example.
};

/// A timing source named by `like`:
///  - a path ending in .json: a saved source (timing_source_from_json());
///  - a folder: every motion file in it (reader.is_motion_file), sorted by name, one skeleton;
///  - anything else: one example motion file.
/// Examples are labelled by file name; roles come from body::read_roles() on the first example's
/// skeleton and `roles_path`. Throws Error(io) for unreadable files, Error(bad_data, like) for a
/// folder without motion files, and the errors of the reader, body::read_roles() and make_timing_source().
TimingSource load_timing_source(const std::filesystem::path& like, const MotionFileReader& reader,
                                const std::filesystem::path& roles_path = {}, const SourceSettings& settings = {});

}  // namespace koma::timing
