#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/stats.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/report.hpp"

namespace koma::cli {

void add_demo_command(CLI::App& app) {
  struct Opts {
    std::string out_dir = "out/demo";
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("demo", "Run koma on its built-in procedural character and write out/demo/");
  cmd->footer("The character (a walk, then a jump) is made by koma's own code; no data files are needed.");
  cmd->add_option("-o,--output-dir", opts->out_dir, "Folder for the results")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  cmd->callback([opts] {
    namespace fs = std::filesystem;
    fs::create_directories(opts->out_dir);
    const Motion walk = make_sample_motion();
    const fs::path walk_path = fs::path(opts->out_dir) / "walk.bvh";
    io::write_motion(walk_path, walk);
    const MotionStats s = motion_stats(walk);
    // Key poses: the walk at 24 fps, as many keys as "on 2s", placed optimally (exact), then held.
    const Motion walk24 = resample(walk, 24.0);
    keys::KeySettings ks_settings;
    ks_settings.on = 2;
    const keys::KeySelection ks = keys::select_keys(walk24, ks_settings);
    const fs::path keys_path = fs::path(opts->out_dir) / "keys.bvh";
    const fs::path report_path = fs::path(opts->out_dir) / "report.json";
    const fs::path xsheet_path = fs::path(opts->out_dir) / "xsheet.csv";
    write_file_atomic(report_path, keys::report_json(ks, walk24.skeleton, walk24.source_unit, ks_settings, walk_path.string()));
    write_file_atomic(xsheet_path, keys::exposure_sheet_csv(ks));
    io::write_motion(keys_path, keys::hold(walk24, ks));
    if (opts->json) {
      print_json({{"walk", walk_path.string()}, {"frames", s.frames}, {"fps", s.frame_rate},
                  {"joints", s.joints}, {"height_m", s.rest_height}, {"root_travel_m", s.root_travel},
                  {"keys", {{"bvh", keys_path.string()}, {"report", report_path.string()}, {"xsheet", xsheet_path.string()},
                            {"frames", walk24.frame_count}, {"fps", 24.0}, {"key_count", ks.keys().size()},
                            {"error_m2", ks.error}}}});
      return;
    }
    fmt::print("koma demo: built-in character, {} joints, {} frames at {:g} fps ({:.2f} s), {:.2f} m tall\n",
               s.joints, s.frames, s.frame_rate, s.duration, s.rest_height);
    fmt::print("  wrote {}  (open it in Blender: File > Import > Motion Capture (.bvh))\n", walk_path.string());
    fmt::print("  keys: {} of {} frames at 24 fps (exact, as many as on 2s), mean squared error {:.3g} cm^2\n",
               ks.keys().size(), walk24.frame_count, ks.error * 1e4);
    fmt::print("  wrote {}, {}, {}\n", keys_path.string(), report_path.string(), xsheet_path.string());
  });
}

}  // namespace koma::cli
