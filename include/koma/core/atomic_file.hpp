// Atomic output: write to a temporary file beside the destination, then rename over it, so a
// failure never leaves a partial or truncated output behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/error.hpp"

namespace koma {

/// A temporary path next to `destination` that becomes `destination` on commit(). Destroying an
/// uncommitted AtomicFile removes the temporary file. Producers that write through their own
/// machinery (ffmpeg, Cairo) write to temp_path() and call commit() once they are done.
class AtomicFile {
 public:
  /// Throws Error(io) when the destination's directory does not exist or is not a directory.
  explicit AtomicFile(std::filesystem::path destination);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& temp_path() const noexcept { return temp_; }
  const std::filesystem::path& destination() const noexcept { return destination_; }
  /// Renames the temporary file over the destination. Throws Error(io) when it cannot.
  void commit();

 private:
  std::filesystem::path destination_;
  std::filesystem::path temp_;
  bool committed_ = false;
  int slot_ = -1;  // its entry in the table remove_temp_files_now() reads
};

/// The outputs of one command (motion + report + sheets) that appear all together or not at all.
/// Each is written to a staged temporary path; commit() then renames them all. Destroying an
/// uncommitted batch (an error, an exception, Ctrl-C) removes every staged file and replaces none.
class OutputBatch {
 public:
  OutputBatch() = default;
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;

  /// A temporary path beside `destination` that keeps its extension (`.NAME.koma-PID-N.tmp.EXT`,
  /// so writers that choose the format from the extension write it as they would the destination).
  /// Throws Error(io) as AtomicFile does.
  std::filesystem::path stage(const std::filesystem::path& destination);
  /// Renames every staged file that was written over its destination. If a rename fails, the
  /// destinations already replaced get their previous file back (kept as a hard link until the
  /// end) or are removed when they are new, and Error(io) names the one that failed. A staged
  /// path that was never written is an error too (its writer failed without throwing).
  void commit();

  /// Runs `write` (which writes staged paths) and rethrows its Error with every staged path in
  /// the context and message replaced by its destination, so errors name the file asked for.
  template <class Write>
  void write(Write&& write) {
    try {
      write();
    } catch (const Error& e) {
      throw named(e);
    }
  }
  /// `e` with staged paths replaced by their destinations.
  Error named(const Error& e) const;

 private:
  struct Staged {
    std::filesystem::path destination, temp;
    int slot = -1;
  };
  std::vector<Staged> staged_;
  bool committed_ = false;
};

/// The temporary-file table behind remove_temp_files_now(): register_temp returns a slot (or -1
/// when the table is full), unregister_temp frees it. AtomicFile uses them; so may producers
/// that make their own temporary files (a frames folder for ffmpeg).
int register_temp(const std::filesystem::path& path);
void unregister_temp(int slot) noexcept;
/// Kills every running child process (kill_children_now() in child_process.hpp, so none writes on
/// after koma is gone), then removes every registered temporary file or folder (unlink; a folder
/// with remove_tree_now()). Async-signal-safe: a signal handler calls it before ending the process, so a second
/// Ctrl-C or a SIGTERM leaves no `.NAME.koma-PID-*.tmp` behind.
void remove_temp_files_now() noexcept;

/// Writes `content` to `path` atomically. Throws Error(io) naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Throws Error(io) naming the path unless a file can be written there: its folder exists and
/// the path is not a folder. AtomicFile checks this; so does the CLI, before any work.
void require_output_path(const std::filesystem::path& destination);

/// Throws Error(io) naming the path unless it is an existing regular file (or a link to one):
/// a directory, FIFO, device or socket gets a clear error instead of a hang or a huge allocation.
void require_input_file(const std::filesystem::path& path);

/// Reads a whole file. Throws Error(io) naming the path when it cannot be opened or read.
std::string read_file(const std::filesystem::path& path);

/// A whole file's bytes, read-only, for parsers: a regular file is memory-mapped (no copy of a
/// 750 MB take, and its pages come straight from the page cache), anything else is read with
/// read_file(). Throws Error(io) as read_file() does. The view lives as long as the object.
class FileBytes {
 public:
  explicit FileBytes(const std::filesystem::path& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::string_view view() const noexcept { return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(copy_); }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string copy_;
};

}  // namespace koma
