#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "koma/cartoon/filter.hpp"
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
    // Cartoon step: the filter at 60 fps with planted feet (strength per frame^2; 32 at 60 fps
    // is 8 at 30 fps).
    cartoon::CartoonSettings cs;
    cs.filter.strength = 32.0;
    cs.keep_feet = true;
    const cartoon::CartoonResult toon = cartoon::cartoon_motion(walk, cs);
    const fs::path toon_path = fs::path(opts->out_dir) / "cartoon.bvh";
    io::write_motion(toon_path, toon.motion);
    if (opts->json) {
      print_json({{"walk", walk_path.string()}, {"frames", s.frames}, {"fps", s.frame_rate},
                  {"joints", s.joints}, {"height_m", s.rest_height}, {"root_travel_m", s.root_travel},
                  {"cartoon", toon_path.string()}, {"cartoon_skating_mm_per_frame", toon.skating_output_mm}});
      return;
    }
    fmt::print("koma demo: built-in character, {} joints, {} frames at {:g} fps ({:.2f} s), {:.2f} m tall\n",
               s.joints, s.frames, s.frame_rate, s.duration, s.rest_height);
    fmt::print("  wrote {}  (open it in Blender: File > Import > Motion Capture (.bvh))\n", walk_path.string());
    fmt::print("  wrote {}  (cartoon filter, strength {:g}, feet kept planted: skating {:.2f} -> {:.2f} mm/frame)\n",
               toon_path.string(), cs.filter.strength, toon.skating_input_mm, toon.skating_output_mm);
  });
}

}  // namespace koma::cli
