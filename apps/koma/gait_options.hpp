// The options of `koma gait apply`, shared with `koma batch gait-apply` (defined in cmd_gait.cpp).
// Parsing only: the pipeline is koma::batch::run_gait_apply_file.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common.hpp"
#include "koma/batch/gait_file.hpp"

namespace koma::cli {

/// The options of `koma gait apply` (not input/output or --json).
struct GaitApplyOptions {
  InputOptions in;
  OutputOptions out;  // --name (and the FBX form): how the output is written
  std::string roles;
  std::vector<std::string> adverbs;  // FILE[:ALPHA]
  gait::ApplySettings settings;
  bool no_plant = false, no_hold_posture = false, no_root_height = false;
};

/// Adds the apply options (and --unit, --animation, --roles, --name, --fbx-*) to `cmd`, writing into `o`.
void add_gait_apply_options(CLI::App& cmd, GaitApplyOptions& o);

/// The pipeline settings the options ask for, with the adverb files read.
batch::GaitApplyJob gait_apply_job(const GaitApplyOptions& o);

/// The options as JSON (for the batch report and its manifest).
nlohmann::json gait_apply_options_json(const GaitApplyOptions& o);

}  // namespace koma::cli
