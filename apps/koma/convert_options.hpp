// The options of `koma convert`, shared with `koma batch convert` (defined in cmd_convert.cpp).
// Parsing only: the pipeline is koma::batch::run_convert_file.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "common.hpp"
#include "koma/batch/convert_file.hpp"

namespace koma::cli {

/// The conversion options of `koma convert` (not input/output).
struct ConvertOptions {
  InputOptions in;
  OutputOptions out;  // --name (and the FBX form): how the output is written
  std::string fps, unit_out, range;
};

/// Adds --fps, --out-unit, --range (and --unit, --animation, --name, --fbx-*) to `cmd`, writing into `o`.
void add_convert_options(CLI::App& cmd, ConvertOptions& o);

/// The pipeline settings the options ask for. Throws Error(invalid_settings, "--flag") for a bad value.
batch::ConvertJob convert_job(const ConvertOptions& o);

/// The options as JSON (for the batch report and its manifest).
nlohmann::json convert_options_json(const ConvertOptions& o);

}  // namespace koma::cli
