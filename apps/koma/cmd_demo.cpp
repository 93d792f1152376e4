#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "demo_render.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/stats.hpp"

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
    // Pictures. Until the key-pose selector lands, the drawings are the uniform "on 3s" baseline.
    std::vector<int> kept;
    for (int f = 0; f < resampled_frame_count(walk.frame_count, walk.frame_rate, 24.0); f += 3) kept.push_back(f);
    const auto pictures = render_demo_outputs(walk, opts->out_dir, kept, "on 3s (uniform)", !opts->json);
    write_demo_index(opts->out_dir);
    if (opts->json) {
      print_json({{"walk", walk_path.string()}, {"frames", s.frames}, {"fps", s.frame_rate},
                  {"joints", s.joints}, {"height_m", s.rest_height}, {"root_travel_m", s.root_travel},
                  {"pictures", pictures}, {"index", (fs::path(opts->out_dir) / "index.html").string()}});
      return;
    }
    fmt::print("koma demo: built-in character, {} joints, {} frames at {:g} fps ({:.2f} s), {:.2f} m tall\n",
               s.joints, s.frames, s.frame_rate, s.duration, s.rest_height);
    fmt::print("  wrote {}  (open it in Blender: File > Import > Motion Capture (.bvh))\n", walk_path.string());
    for (const auto& p : pictures) fmt::print("  wrote {}\n", (fs::path(opts->out_dir) / p).string());
    fmt::print("  wrote {}  (open it in a browser: every result in one page)\n",
               (fs::path(opts->out_dir) / "index.html").string());
  });
}

}  // namespace koma::cli
