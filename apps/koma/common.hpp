// Shared plumbing of the koma CLI: option parsing helpers, reporting, progress. No algorithms here.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/io/motion_file.hpp"

namespace koma::cli {

/// Options every command that reads a motion shares.
struct InputOptions {
  std::string path;
  std::string unit;       // "" = detect
  std::string animation;  // glTF animation
  std::string asset_root;  // glTF: the folder its URIs must stay in ("" = the file's folder)
};

/// Options every command that writes a motion file shares.
struct OutputOptions {
  std::string name;  // --name: the written animation's name ("" = the source animation's)
  bool fbx_ascii = false;
  std::string fbx_unit = "cm", fbx_axes = "y-up";
};

/// Adds --name, --fbx-ascii, --fbx-unit and --fbx-axes to `cmd`.
void add_output_options(CLI::App& cmd, OutputOptions& opts);
/// The write options they ask for. Throws Error(invalid_settings, "--fbx-unit" / "--fbx-axes").
io::WriteOptions write_options(const OutputOptions& opts);

/// Adds --unit (and friends) for reading `opts.path`.
void add_input_options(CLI::App& cmd, InputOptions& opts);
/// The read options they ask for (--unit parsed: a name or metres per file unit).
io::ReadOptions read_options(const InputOptions& opts);
/// Prints a reader's warning to stderr as `koma: warning: ...` (settings fields as their flags):
/// what a pipeline job's on_warning does for the CLI.
void print_warning(const std::string& warning);
/// Reads the motion, printing the reader's warnings to stderr unless `quiet`.
io::ReadResult read_input(const InputOptions& opts, bool quiet = false);
/// Parses a unit name or throws Error(invalid_settings) naming `option`.
LengthUnit parse_unit_option(std::string_view text, std::string_view option);
/// --unit: a unit name (ro.unit) or a positive number of metres per file unit (ro.scale); throws
/// Error(invalid_settings, "--unit") for anything else.
void parse_input_unit(std::string_view text, io::ReadOptions& ro);
/// The source unit as reports name it: "cm", or "0.056 m" for a unit given as a number.
std::string unit_label(const Motion& m);
/// Parses "source" (returns `source_rate`) or a positive number of frames per second.
double parse_fps_option(std::string_view text, double source_rate, std::string_view option);

/// The folder the build fills with the web viewer's page and three.js (koma view, koma demo):
/// $KOMA_VIEW_ASSETS when set, else the build tree's.
std::filesystem::path view_assets_dir();

/// Prints a JSON document to stdout (pretty, with a final newline).
void print_json(const nlohmann::json& doc);

/// Ctrl-C: the first SIGINT sets a flag that the next Progress::update() turns into an
/// Interrupted exception, so the command unwinds (temporary output files are removed, nothing is
/// renamed into place) and main() exits with 130. A second SIGINT ends the process at once.
struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};
/// SIGINT and SIGTERM both stop the command this way (exit 130 and 143). A second signal, or one
/// that arrives while nothing checks the flag for long, removes every temporary output file
/// (koma::remove_temp_files_now) and ends the process at once with the same status.
void install_interrupt_handler();
/// The exit status for the signal that interrupted the command: 130 (SIGINT) or 143 (SIGTERM).
int interrupt_status() noexcept;

/// Adds `--force` to every (sub)command that has `--output`, and checks every output path before
/// any work: its folder exists, it is not a folder itself, and (unless --force) it is not one of
/// the command's input files. Runs from the root app's parse-complete callback.
void guard_outputs(CLI::App& app);
/// Thrown by a command that finished but must exit with a particular status (batch: 7 when some
/// files failed, 8 when all did); main() returns `code`.
struct ExitStatus {
  int code = 0;
};
/// True once SIGINT arrived.
bool interrupted() noexcept;
/// Throws Interrupted when SIGINT arrived.
void check_interrupt();

/// A terminal progress bar on stderr; silent when stderr is not a terminal or when disabled.
/// Updating is cheap and throttled; finish() clears the line.
class Progress {
 public:
  Progress(std::string label, bool enabled);
  ~Progress();
  void update(double fraction);
  void finish();

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace koma::cli
