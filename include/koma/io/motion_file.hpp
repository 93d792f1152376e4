// Reading and writing motions by file extension: the one entry point the CLI and Python use.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "koma/io/bvh.hpp"

namespace koma::io {

/// Options for read_motion(); each applies to the formats that have the notion.
struct ReadOptions {
  std::optional<LengthUnit> unit;  ///< BVH: the file's length unit; nullopt detects it.
  std::string animation;           ///< glTF: animation name or index; empty = the first.
};

/// Options for write_motion().
struct WriteOptions {
  std::optional<LengthUnit> unit;  ///< BVH: unit to write; nullopt restores the source unit.
};

/// Reads a motion, choosing the reader by extension (.bvh). Throws Error(bad_file) for an
/// unsupported extension, naming the ones supported.
ReadResult read_motion(const std::filesystem::path& path, const ReadOptions& options = {});

/// Writes a motion atomically, choosing the writer by extension (.bvh).
void write_motion(const std::filesystem::path& path, const Motion& motion, const WriteOptions& options = {});

/// True if read_motion() has a reader for this path's extension.
bool is_motion_file(const std::filesystem::path& path);

}  // namespace koma::io
