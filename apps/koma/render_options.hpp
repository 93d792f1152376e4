// The options of `koma render`, shared with `koma batch render` (defined in cmd_render.cpp).
// Parsing only: the pipeline is koma::batch::run_render_file.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "common.hpp"
#include "koma/batch/render_file.hpp"

namespace koma::cli {

/// The drawing options of `koma render` (not the input, output, --json or --quiet).
struct RenderOptions {
  InputOptions in;
  std::string compare, compare_animation, keys, camera = "side", size = "1280x720", fps, layout = "side";
  std::string look = "toon", shading = "cel", ink = "#1a171f";
  int onion = 0, tones = 2;
  double line_width = 3.0, smear_threshold = 12.0;
  bool transparent = false, smear = false, multiples = false;
};

/// Adds --compare, --compare-animation, --keys, the look, camera and layout options (and --unit,
/// --animation, --asset-root) to `cmd`. `batch`: --keys and --compare are described as a batch
/// reads them (a folder of reports; a file or a folder that mirrors the inputs).
void add_render_options(CLI::App& cmd, RenderOptions& o, bool batch = false);

/// The pipeline's settings from the options. Throws Error(invalid_settings, "--flag") for a value
/// that does not parse; the pipeline checks the settings against each other.
batch::RenderJob render_job(const RenderOptions& o);

/// The options as JSON (for the batch report and its manifest).
nlohmann::json render_options_json(const RenderOptions& o);

}  // namespace koma::cli
