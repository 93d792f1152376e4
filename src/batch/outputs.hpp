// Private to src/batch: how a pipeline writes a file's outputs together.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/io/motion_file.hpp"

namespace koma::batch::detail {

/// A text output: where, and what (an empty path is skipped).
using TextOutput = std::pair<std::filesystem::path, std::string>;

/// Writes `motion` to `output` (format by extension, with `options`) and every text of `texts`,
/// all staged in one OutputBatch: they appear together, or (an error, a full disk, Ctrl-C) none
/// does. A glTF output is not staged: a .gltf names its .bin after itself, and a glTF animation
/// is named after the file's stem, which a staged name would change; it is written first, on its
/// own (atomically, a .gltf's .bin first), then the texts together. Throws what the writers throw,
/// naming the destinations (not the staged names).
void write_motion_outputs(const std::filesystem::path& output, const Motion& motion, const io::WriteOptions& options,
                          const std::vector<TextOutput>& texts = {});

}  // namespace koma::batch::detail
