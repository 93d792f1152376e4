// The demo's pictures: kept in their own file so the demo command stays a short list of steps
// that other capabilities extend.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::cli {

/// Renders into `out_dir`: walk.mp4 (the motion alone, perspective camera), side_by_side.mp4 (the
/// smooth motion beside it held on `kept_frames`), contact_sheet.png and xsheet.png of those
/// drawings, in the toon look (a cel-shaded mannequin) when OpenGL can run, else as stick figures.
/// `kept_frames` are output frames at 24 fps; `label` names the selection ("on 3s").
/// Returns the names of the files written.
std::vector<std::string> render_demo_outputs(const Motion& motion, const std::filesystem::path& out_dir,
                                             const std::vector<int>& kept_frames, const std::string& label,
                                             bool progress);

/// Writes out_dir/index.html showing every file in out_dir (videos, pictures, links).
void write_demo_index(const std::filesystem::path& out_dir);

}  // namespace koma::cli
