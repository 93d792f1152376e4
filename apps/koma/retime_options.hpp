// The options of `koma retime`, shared with `koma batch retime` (defined in cmd_retime.cpp).
// Parsing only: the pipeline is koma::batch::run_retime_file.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "common.hpp"
#include "koma/batch/retime_file.hpp"

namespace koma::cli {

/// The re-timing options of `koma retime` (not input/output, report or --json).
struct RetimeOptions {
  InputOptions in;
  OutputOptions out;  // --name (and the FBX form): how the output is written
  std::string like, roles, fps, speed = "cadence";
  bool global_only = false, no_amplitude = false, no_key_correction = false, on_beat = false;
};

/// Adds the re-timing options (and --unit, --animation, --name, --fbx-*) to `cmd`, writing into `o`.
void add_retime_options(CLI::App& cmd, RetimeOptions& o);

/// The pipeline settings the options ask for. Throws Error(invalid_settings, "--flag") for a bad value.
batch::RetimeJob retime_job(const RetimeOptions& o);

/// The options as JSON (for the batch report and its manifest).
nlohmann::json retime_options_json(const RetimeOptions& o);

}  // namespace koma::cli
