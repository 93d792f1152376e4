// koma demo: the whole pipeline on the built-in procedural character, written to out/demo/.
// Each capability adds one step below; every step records its files in `summary` and prints a line.
#include <fmt/format.h>

#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "demo_render.hpp"
#include "koma/cartoon/filter.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/stats.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/report.hpp"
#include "koma/render/plot.hpp"
#include "koma/timing/retime.hpp"
#include "koma/timing/source.hpp"
#include "koma/gait/synth.hpp"
#include "koma/view/viewer.hpp"

namespace koma::cli {

namespace {

namespace fs = std::filesystem;

// What the demo's steps share: the folder, the JSON summary and the text lines they add to.
struct Demo {
  fs::path dir;
  nlohmann::json summary;
  std::vector<std::string> lines;
};

// The input: a walk, then a jump, at 60 fps.
Motion demo_walk(Demo& d) {
  const Motion walk = make_sample_motion();
  const fs::path walk_path = d.dir / "walk.bvh";
  io::write_motion(walk_path, walk);
  const MotionStats s = motion_stats(walk);
  d.summary["walk"] = {{"bvh", walk_path.string()}, {"frames", s.frames},        {"fps", s.frame_rate},
                       {"joints", s.joints},        {"height_m", s.rest_height}, {"root_travel_m", s.root_travel}};
  d.lines.push_back(fmt::format("character: {} joints, {} frames at {:g} fps ({:.2f} s), {:.2f} m tall -> {}", s.joints,
                                s.frames, s.frame_rate, s.duration, s.rest_height, walk_path.string()));
  return walk;
}

// Key poses: the walk at 24 fps, as many keys as "on 2s", placed optimally (exact) with 1s
// allowed on fast action (`koma keys --on 2 --allow-ones`), then held.
struct DemoKeys {
  Motion walk24;
  std::vector<int> kept;
  std::vector<std::pair<int, double>> curve;
};
DemoKeys demo_keys(Demo& d, const Motion& walk) {
  DemoKeys out;
  Motion& walk24 = out.walk24;
  std::vector<int>& kept = out.kept;
  std::vector<std::pair<int, double>>& curve = out.curve;
  walk24 = resample(walk, 24.0);
  keys::KeySettings ks_settings;
  ks_settings.on = 2;
  ks_settings.allow_ones = true;
  const keys::KeySelection ks = keys::select_keys(walk24, ks_settings);
  const fs::path keys_path = d.dir / "keys.bvh";
  const fs::path report_path = d.dir / "report.json";
  const fs::path xsheet_path = d.dir / "xsheet.csv";
  write_file_atomic(report_path, keys::report_json(ks, walk24.skeleton, walk24.source_unit, ks_settings,
                                                   (d.dir / "walk.bvh").string()));
  write_file_atomic(xsheet_path, keys::exposure_sheet_csv(ks));
  io::write_motion(keys_path, keys::hold(walk24, ks));
  kept = ks.keys();
  // The optimal error for every key count from the same pass, the chosen count marked.
  std::vector<int> counts;
  std::vector<double> errors;
  for (const auto& p : ks.layers.front().curve) {
    counts.push_back(p.keys);
    errors.push_back(p.error * 1e4);  // cm^2
    curve.emplace_back(p.keys, p.error);
  }
  const fs::path curve_path = d.dir / "error_curve.svg";
  render::PlotSettings ps;
  ps.title = "Optimal error by number of key poses (exact selector)";
  ps.y_label = "mean squared error (cm^2)";
  render::plot_error_curve(curve_path, counts, errors, static_cast<int>(kept.size()), ps);
  d.summary["keys"] = {{"bvh", keys_path.string()},      {"report", report_path.string()},
                       {"xsheet", xsheet_path.string()}, {"error_curve", curve_path.string()},
                       {"frames", walk24.frame_count},   {"fps", 24.0},
                       {"key_count", ks.keys().size()},  {"error_m2", ks.error}};
  d.lines.push_back(
      fmt::format("key poses: {} of {} frames at 24 fps (exact, as many as on 2s, 1s allowed on fast "
                  "action), mean squared "
                  "error {:.3g} cm^2 -> {}, {}, {}",
                  ks.keys().size(), walk24.frame_count, ks.error * 1e4, keys_path.string(), report_path.string(),
                  xsheet_path.string()));
  return out;
}

// Cartoon filter at 60 fps with planted feet (strength 8: the same effect at every frame rate).
void demo_cartoon(Demo& d, const Motion& walk) {
  cartoon::CartoonSettings cs;
  cs.strength = 8.0;
  cs.keep_feet = true;
  const cartoon::CartoonResult toon = cartoon::cartoon_motion(walk, cs);
  const fs::path toon_path = d.dir / "cartoon.bvh";
  io::write_motion(toon_path, toon.motion);
  d.summary["cartoon"] = {{"bvh", toon_path.string()},
                          {"strength", cs.strength},
                          {"skating_input_mm_per_frame", toon.skating_input_mm},
                          {"skating_output_mm_per_frame", toon.skating_output_mm}};
  d.lines.push_back(
      fmt::format("cartoon filter: strength {:g}, feet kept planted (skating {:.2f} -> {:.2f} "
                  "mm/frame) -> {}",
                  cs.strength, toon.skating_input_mm, toon.skating_output_mm, toon_path.string()));
}

// Gait style: the spectrum of a steady sample walk, an adverb learned from a version with
// bigger arm swing, applied 1.5x with a 20 % longer stride as a seamless 6 s loop.
void demo_gait(Demo& d) {
  SampleSettings steady;
  steady.walk_cycles = 6;
  steady.jump = false;
  const gait::Gait neutral = gait::analyze_gait(make_sample_motion(steady));
  steady.arm_swing = 2.0;
  const gait::Gait swingy = gait::analyze_gait(make_sample_motion(steady));
  const gait::WeightedAdverb adverb{gait::make_adverb(neutral, swingy), 1.5, "arm swing"};
  const gait::Gait styled = gait::apply_adverbs(neutral, std::span(&adverb, 1));
  gait::SynthSettings synth;
  synth.seconds = 6.0;
  synth.stride = 1.2;
  const Motion gait_motion = gait::synthesize(styled, synth);
  const fs::path gait_path = d.dir / "gait.bvh";
  io::write_motion(gait_path, gait_motion);
  d.summary["gait"] = {
      {"bvh", gait_path.string()}, {"period_s", neutral.basis.period}, {"confidence", neutral.basis.confidence}};
  d.lines.push_back(
      fmt::format("gait style: the walk's spectrum (period {:.2f} s) with 1.5x an arm-swing adverb "
                  "and a 1.2x stride, looping seamlessly -> {}",
                  neutral.basis.period, gait_path.string()));
}

// Timing transfer: the walk re-timed like a slower, heavier walk of the same character; the
// path stays the same curve, only when the body gets there changes.
void demo_retime(Demo& d) {
  SampleSettings brisk, heavy;
  brisk.walk_cycles = heavy.walk_cycles = 3;
  brisk.jump = heavy.jump = false;
  heavy.cycle_seconds = 1.6;
  heavy.arm_swing = 0.5;
  const Motion input = make_sample_motion(brisk);
  const Motion example = make_sample_motion(heavy);
  const body::JointRoles roles = body::find_joint_roles(input.skeleton);
  const timing::TimingSource source = timing::make_timing_source(std::span<const Motion>(&example, 1), roles);
  const timing::RetimeResult rt = timing::retime(input, roles, source);
  const fs::path rt_path = d.dir / "retimed.bvh";
  io::write_motion(rt_path, rt.motion);
  d.summary["retime"] = {{"bvh", rt_path.string()},
                         {"input_frames", rt.report.input_frames},
                         {"output_frames", rt.report.output_frames},
                         {"path_deviation_m", rt.report.path_deviation}};
  d.lines.push_back(
      fmt::format("timing transfer: a brisk walk re-timed like a heavy one, {} -> {} frames, path "
                  "unchanged (deviation {:.1e} m) -> {}",
                  rt.report.input_frames, rt.report.output_frames, rt.report.path_deviation, rt_path.string()));
}

// The web viewer: the walk at 24 fps beside its held key poses (needs the build's three.js).
void demo_viewer(Demo& d, const DemoKeys& k) {
  view::ViewClip original{k.walk24, nullptr, "walk.bvh at 24 fps", {}};
  view::ViewClip held{k.walk24, nullptr, fmt::format("keys.bvh - {} drawings", k.kept.size()), k.kept};
  view::ViewerSettings vs;
  vs.title = "koma demo - key poses of the sample walk";
  vs.curve = k.curve;
  vs.chosen_keys = static_cast<int>(k.kept.size());
  vs.source = "report.json";
  try {
    view::write_viewer(d.dir / "viewer", view_assets_dir(), original, held, vs);
    d.summary["viewer"] = (d.dir / "viewer" / "index.html").string();
    d.lines.push_back(fmt::format("web viewer: the walk and its {} drawings side by side, offline -> {}", k.kept.size(),
                                  (d.dir / "viewer" / "index.html").string()));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::io) throw;
    d.lines.push_back(fmt::format("web viewer: skipped ({})", e.what()));
  }
}

// Pictures: the walk, the smooth motion beside the held key poses, contact and exposure sheets,
// and an index.html that shows every file of the folder.
void demo_pictures(Demo& d, const Motion& walk, const std::vector<int>& kept, bool progress) {
  const auto pictures = render_demo_outputs(walk, d.dir, kept, fmt::format("exact, {} keys", kept.size()), progress);
  write_demo_index(d.dir);
  d.summary["pictures"] = pictures;
  d.summary["index"] = (d.dir / "index.html").string();
  d.lines.push_back(fmt::format("pictures: {} -> open {} in a browser to see everything", fmt::join(pictures, ", "),
                                (d.dir / "index.html").string()));
}

}  // namespace

void add_demo_command(CLI::App& app) {
  struct Opts {
    std::string out_dir = "out/demo";
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("demo", "Run koma on its built-in procedural character and write out/demo/");
  cmd->footer(
      "The character (a walk, then a jump) is made by koma's own code; no data files are needed.\n"
      "Writes walk.bvh (the input), keys.bvh + report.json + xsheet.csv (key poses held at 24 fps),\n"
      "cartoon.bvh (cartoon filter with planted feet) and more as capabilities land.");
  cmd->add_option("-o,--output-dir", opts->out_dir, "Folder for the results")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print a JSON summary instead of text");
  cmd->callback([opts] {
    Demo d;
    d.dir = opts->out_dir;
    fs::create_directories(d.dir);
    const Motion walk = demo_walk(d);
    const DemoKeys k = demo_keys(d, walk);
    demo_cartoon(d, walk);
    demo_gait(d);
    demo_retime(d);
    demo_viewer(d, k);
    demo_pictures(d, walk, k.kept, !opts->json);
    if (opts->json) {
      print_json(d.summary);
      return;
    }
    fmt::print("koma demo: the built-in character through the pipeline\n");
    for (const auto& l : d.lines) fmt::print("  {}\n", l);
    fmt::print("Open the .bvh files in Blender with the koma add-on (File > Import > Motion capture via koma;\n"
               "Blender 3.4's own BVH importer fails on Python 3.11, see docs/blender.md) to compare them.\n");
  });
}

}  // namespace koma::cli
