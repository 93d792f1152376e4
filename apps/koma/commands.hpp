// One function per subcommand: each adds its CLI11 subcommand (options, help, callback) to `app`.
// The callbacks parse options, call the library and report; all logic lives in libkoma.
#pragma once

#include <CLI/CLI.hpp>

namespace koma::cli {

void add_info_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_positions_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_cartoon_command(CLI::App& app);
void add_timing_command(CLI::App& app);
void add_retime_command(CLI::App& app);
void add_gait_command(CLI::App& app);
void add_render_command(CLI::App& app);
void add_view_command(CLI::App& app);
void add_batch_command(CLI::App& app);

}  // namespace koma::cli
