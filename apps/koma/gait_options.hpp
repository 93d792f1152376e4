// The options of `koma gait apply` and `koma gait style`, shared with `koma batch gait-apply` and
// `koma batch gait-style` (defined in cmd_gait.cpp). Parsing only: the pipelines are
// koma::batch::run_gait_apply_file and run_gait_style_file.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common.hpp"
#include "koma/batch/gait_file.hpp"
#include "koma/core/units.hpp"

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

/// The analysis options of `koma gait analyze|adverb|style`.
struct AnalyzeOpts {
  gait::CycleSettings cycle;
  gait::FourierSettings fourier;
  bool euler = false;
  InputOptions input;  // unit and animation for every motion read; the path is set per file
  std::string period_from = "auto";
  double tolerance_deg = gait::FourierSettings{}.tolerance * kRadToDeg;
};

/// The synthesis options of `koma gait synth|style`.
struct SynthOpts {
  gait::SynthSettings synth;
  std::vector<std::string> adverbs;
  std::vector<std::string> then;  // "gait.json@seconds"
  std::string skeleton;
  std::string csv;
  std::string output;
  std::string fps = "24";
  OutputOptions write;  // --name (and the FBX form)
  bool no_loop = false;
  bool json = false;
};

/// The options of `koma batch gait-style`: `koma gait style`'s, with --csv a flag (each output's
/// angles beside it) instead of one path.
struct GaitStyleBatchOptions {
  AnalyzeOpts a;
  SynthOpts s;  // csv, output and json unused
  bool csv = false;
};

/// Adds `koma gait style`'s analysis and synthesis options and the --csv flag to `cmd`.
void add_gait_style_batch_options(CLI::App& cmd, GaitStyleBatchOptions& o);

/// The pipeline settings the options ask for, with the adverbs, later gaits and skeleton read.
batch::GaitStyleJob gait_style_batch_job(const GaitStyleBatchOptions& o);

/// The options as JSON (for the batch report and its manifest).
nlohmann::json gait_style_options_json(const GaitStyleBatchOptions& o);

}  // namespace koma::cli
