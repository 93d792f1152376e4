// The options of `koma keys` that choose the selection (moved out of cmd_keys.cpp so `koma batch
// keys` registers and parses exactly the same flags). Parsing only: the pipeline is
// koma::batch::run_keys_file.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "koma/batch/pipelines.hpp"

namespace koma::cli {

/// The selection options of `koma keys` (not input/output, reports or video-only options).
struct KeysOptions {
  InputOptions in;
  OutputOptions out;  // --name (and the FBX form): how the outputs are written
  std::string fps = "24", selector = "exact", exact_method = "auto", metric = "position", interp = "linear", lock, layers,
              camera, weights = "equal", schedule = "geometric", anneal_eval = "delta", chart = "source", chart_sheet;
  int keys = 0, on = 0, offset = 0, min_hold = 1, max_hold = 0, iterations = 200000;
  double ratio = 0, max_error = -1;
  std::uint64_t seed = 1;
  bool keep_contacts = false, keep_extremes = false, allow_ones = false;
};

/// Adds the selection options (and --unit, --animation) to `cmd`, writing into `o`.
void add_keys_options(CLI::App& cmd, KeysOptions& o);

/// The pipeline settings the options ask for (lengths in the file's unit), validated. `cmd` tells
/// whether --max-hold was given. Throws Error(invalid_settings, "--flag") for a bad value.
/// Spacing: with a key count (--keys, --ratio, --max-error), --on N or a chart other than source
/// (--chart, --chart-sheet) draws inbetweens every N frames (default 2) between the keys; --on
/// alone keeps its meaning (as many keys as on Ns), and --chart source alone changes nothing.
batch::KeysJob keys_job(const KeysOptions& o, const CLI::App& cmd);

/// The options as JSON (for the batch report).
nlohmann::json keys_options_json(const KeysOptions& o);

}  // namespace koma::cli
