// Many files through one command on a oneTBB pool, with a summary report.
//
//   inputs (files, folders, globs) --plan()--> items (input, relative path, output under OUTDIR)
//   items --run()--> a parallel_pipeline of `jobs` tokens: a worker reads a file only when it takes
//                    it (memory bounded by `jobs` files), largest files first; one bad file is
//                    recorded and the batch goes on --> one Record per item --> report()
//
// Outputs mirror the input tree under the output directory, so the same relative path gives the
// same output; they are written atomically by the command, so a killed batch leaves no partial
// file and `resume` skips what is complete. Same inputs and settings give the same bytes whatever
// `jobs` is (the commands are deterministic and files are independent).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"

namespace koma::batch {

/// How inputs become items.
struct PlanSettings {
  /// Endings (lower case, with the dot: ".bvh", ".gait.json") of the file names that a folder or
  /// glob search picks up. Files named directly are taken whatever their extension. Default: the
  /// motion formats koma reads.
  std::vector<std::string> extensions = {".bvh", ".gltf", ".glb", ".fbx"};
  /// Extension of the outputs (with the dot), one of output_formats; empty (default) = the input's
  /// own extension, except that an .fbx input writes .glb (as before koma wrote FBX; the GLB carries
  /// the FBX character; ".fbx" writes FBX) and a .json input (a gait file) writes .bvh
  /// (walk.gait.json -> walk.gait.bvh, beside the walk.bvh it may have been analysed from). ".png"
  /// is a folder of PNG frames named after the input (`OUTDIR/<relative path without extension>/`,
  /// the path ending in '/').
  std::string output_extension;
  /// The output extensions the command writes: the motion formats (default), or for render ".mp4",
  /// ".gif" and ".png" (a folder of frames).
  std::vector<std::string> output_formats = {".bvh", ".glb", ".gltf", ".fbx"};
  /// false (default): one item per file, reading its first animation (or the job's). true: one item
  /// per animation of every glTF and FBX file (FBX stacks of at most one frame interval, the rest
  /// poses exporters keep, are left out), each written to `<stem>.<animation>.<ext>` with the
  /// animation's name after its last '|' (characters other than letters, digits, '-', '_' and '.'
  /// become '_'; an empty or repeated name gets its index). BVH files stay one item each.
  bool every_animation = false;
};

/// One file of a batch.
struct Item {
  std::filesystem::path input;     ///< as found (the input argument joined with the relative part)
  std::filesystem::path relative;  ///< its path below the input folder (a named file: its file name)
  std::filesystem::path output;    ///< output_dir / relative, with PlanSettings::output_extension
  std::uintmax_t bytes = 0;        ///< input size (the run starts with the largest files)
  /// PlanSettings::every_animation: the animation this item reads (its name, or its index when the
  /// name is empty, a number, or shared by several); empty = the job's own choice.
  std::string animation;
};

/// Expands `inputs` into items sorted by relative path. Each input is a file; a folder (searched
/// recursively for PlanSettings::extensions; hidden files and folders, and anything inside
/// `output_dir`, are skipped); or a glob pattern (`*`, `?`, `[...]`, POSIX glob(3); the relative
/// path starts after the pattern's last wildcard-free folder). A file reached twice is taken once.
/// Throws Error(invalid_settings, "output_extension") for an output extension not in
/// PlanSettings::output_formats, Error(io, input) for an input that does not exist or a pattern
/// that matches nothing,
/// Error(invalid_settings, "inputs") when no file is found or two inputs map to the same output
/// (naming both).
std::vector<Item> plan(const std::vector<std::string>& inputs, const std::filesystem::path& output_dir,
                       const PlanSettings& settings = {});

/// What happened to one item.
enum class Status : std::uint8_t {
  pending = 0,  ///< not started (the batch was cancelled first)
  ok,           ///< output written
  failed,       ///< the command threw; the error is recorded
  skipped,      ///< resume: the output was already complete
  cancelled,    ///< abandoned mid-way by cancellation; nothing written
};
inline constexpr EnumNames<Status, 5> kStatusNames{{{{Status::pending, "pending"},
                                                    {Status::ok, "ok"},
                                                    {Status::failed, "failed"},
                                                    {Status::skipped, "skipped"},
                                                    {Status::cancelled, "cancelled"}}},
                                                  NameCase::exact,
                                                  "unknown"};
std::string_view to_string(Status status) noexcept;

/// One item's outcome.
struct Record {
  Item item;
  Status status = Status::pending;
  double seconds = 0;             ///< wall-clock time of the command on this file
  std::string error_code;         ///< failed: ErrorCode name ("bad_file", ...), or "internal"
  std::string error_context;      ///< failed: where (file:line, field)
  std::string error_message;      ///< failed: what went wrong
  nlohmann::json figures;         ///< ok: the command's own figures (null otherwise)
  std::vector<std::string> warnings;  ///< the reader's warnings
};

/// Counts over a batch, as run() reports them after each file.
struct Counts {
  int total = 0;
  int ok = 0;
  int failed = 0;
  int skipped = 0;
  int cancelled = 0;
  double seconds = 0;  ///< wall clock since run() started
  int finished() const { return ok + failed + skipped + cancelled; }
};

/// How run() runs.
struct RunSettings {
  int jobs = 0;         ///< files processed at once; 0 (default) = the cores available (oneTBB)
  bool resume = false;  ///< skip items whose output exists and is not older than the input
  /// Throws Error(invalid_settings, "jobs") for jobs < 0 or > 1024.
  void validate() const;
};

/// Thrown by the progress callback run() hands to a task once `cancelled()` is true; run() records
/// the file as cancelled. Tasks should let it through (it is not a koma::Error).
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

/// The command run on one item: writes item.output (atomically) and returns its figures (JSON),
/// appending reader warnings to `warnings`. It should call `progress` now and then.
using Task = std::function<nlohmann::json(const Item& item, const std::function<void(double)>& progress,
                                          std::vector<std::string>& warnings)>;
/// Called after each item finishes, one call at a time (serialised), from a worker thread.
using OnFile = std::function<void(const Record& record, const Counts& counts)>;

/// Runs `task` on every item on a oneTBB pool of settings.jobs threads. Creates each output's
/// folder. A koma::Error or any other exception from a task fails that item only (recorded with
/// code, context and message). Once `cancelled` returns true no new item starts and running ones
/// are abandoned at their next progress call. Returns one record per item, in the items' order.
/// Throws Error(invalid_settings) for invalid settings.
std::vector<Record> run(const std::vector<Item>& items, const RunSettings& settings, const Task& task,
                        const OnFile& on_file = {}, const std::function<bool()>& cancelled = {});

/// One item on its own (what run() does per item; a Dask worker calls it per file): skipped when
/// `resume` and the output is complete, else the task's outcome with failures captured. Creates the
/// output's folder.
Record run_item(const Item& item, const Task& task, bool resume = false, const std::function<bool()>& cancelled = {});

/// The file in an output folder that records which batch fills it: {"command", "front_end",
/// "settings"}.
inline constexpr std::string_view kManifestName = ".koma-batch.json";

/// Claims `output_dir` for a batch of `command` with `settings` (as the front end gives them; its
/// name, "cli" or "python", is `front_end`), before any file runs. With `resume`, an existing
/// manifest must name the same command, front end and settings, else Error(invalid_settings,
/// "resume") lists what differs: the outputs there were made otherwise, and skipping them would
/// mix two settings silently. Then (re)writes the manifest atomically. Without `resume` the
/// manifest is simply written. Throws Error(io) when the folder cannot be written.
void claim_output_dir(const std::filesystem::path& output_dir, std::string_view command, std::string_view front_end,
                      const nlohmann::json& settings, bool resume);

/// Counts of a finished run's records (seconds left 0).
Counts count(const std::vector<Record>& records);

/// One file's entry of the report: {input, relative, output, status, seconds, figures,
/// error {code, context, message} (failed only), warnings}.
nlohmann::json record_json(const Record& record);

/// The summary report: {"command", "settings" (as given), "jobs", "resume", "counts" {total, ok,
/// failed, skipped, cancelled, pending}, "seconds", "files": [{input, relative, output, status,
/// seconds, figures, error {code, context, message}, warnings}]}. Paths as strings.
nlohmann::json report(std::string_view command, const nlohmann::json& settings, const RunSettings& run_settings,
                      const std::vector<Record>& records, double seconds);
/// The same from entries made by record_json() (e.g. gathered from cluster workers); counts come
/// from each entry's "status".
nlohmann::json report(std::string_view command, const nlohmann::json& settings, const RunSettings& run_settings,
                      const nlohmann::json& files, double seconds);

}  // namespace koma::batch
