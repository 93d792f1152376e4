// The filter options of `koma cartoon`, shared with `koma batch cartoon` (defined in cmd_cartoon.cpp).
// Parsing only: the pipeline is koma::batch::run_cartoon_file.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "common.hpp"
#include "koma/batch/pipelines.hpp"

namespace koma::cli {

/// The filter options of `koma cartoon` (not input/output or reports).
struct CartoonOptions {
  InputOptions in;
  OutputOptions out;  // --name (and the FBX form): how the outputs are written
  std::string sigma = "auto", sigma_range, parts, squash_joint;
  double strength = 8.0, squash = 0.0, bound = 0.5, cut_speed = 12.0;
  std::optional<double> strength_per_frame;
  bool keep_feet = false;
};

/// Adds the filter options (and --unit, --animation) to `cmd`, writing into `o`.
void add_cartoon_options(CLI::App& cmd, CartoonOptions& o);

/// The pipeline settings the options ask for, validated. Throws Error(invalid_settings, "--flag").
batch::CartoonJob cartoon_job(const CartoonOptions& o);

/// The options as JSON (for the batch report).
nlohmann::json cartoon_options_json(const CartoonOptions& o);

}  // namespace koma::cli
