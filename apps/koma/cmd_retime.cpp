#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/timing/report.hpp"
#include "koma/timing/retime.hpp"
#include "timing_options.hpp"

namespace koma::cli {

void add_retime_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string like, out, report, roles, fps, speed = "source";
    bool global_only = false, no_amplitude = false, no_key_correction = false, on_beat = false, json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("retime", "Re-time a motion to an example's timing; the path stays unchanged");
  cmd->footer(
      "Keeps where the body goes and takes when it gets there from the example: step durations from\n"
      "the example's per-step speeds, the within-step speed profile, parent->child succession lags and\n"
      "(optionally) arm/spine amplitude. After the steps are re-timed, the output's own foot contacts\n"
      "are detected (as `koma timing detect` would) and each step boundary is searched along the\n"
      "unchanged path until the output's keys land on the example's key times (the summary says how\n"
      "close: within a frame on typical walks). --no-key-correction skips that search: faster on\n"
      "long high-rate clips. --on-beat puts every step on the example's beat (the steady tempo of its\n"
      "foot touch-downs, as `koma timing detect` reports it): each step lasts a whole number of beats.\n"
      "Examples:\n"
      "  koma retime walk.bvh --like sad_walk.bvh -o walk_sad.bvh\n"
      "  koma retime walk.bvh --like styles/sad/ -o walk_sad.bvh --report report.json\n"
      "  koma timing source sad_walk.bvh -o sad.json && koma retime walk.bvh --like sad.json -o out.bvh\n"
      "  koma retime walk.bvh --like sad.json -o out.bvh --global-only --speed input");
  cmd->add_option("input", opts->in.path, "Input motion file")->required();
  cmd->add_option("--like", opts->like, "Example motion, folder of examples, or timing.json")->required();
  cmd->add_option("-o,--output", opts->out, "Output motion file (.bvh)")->required();
  cmd->add_flag("--global-only", opts->global_only, "Only re-time steps (no succession lags, no amplitude)");
  cmd->add_flag("--no-amplitude", opts->no_amplitude, "Do not scale arm/spine rotation ranges");
  cmd->add_flag("--no-key-correction", opts->no_key_correction,
                "Do not search step boundaries so the output's re-detected foot keys land on the example's key times");
  cmd->add_flag("--on-beat", opts->on_beat,
                "Make each step a whole number of the example's beats (error if the example has no steady beat)");
  cmd->add_option("--speed", opts->speed, "Overall speed from the 'source' (default) or the 'input'");
  cmd->add_option("--fps", opts->fps, "Output frame rate, or 'source' (default: the input's)");
  cmd->add_option("--report", opts->report, "Write a JSON report (segments, warp, shifts) here");
  cmd->add_option("--roles", opts->roles, "JSON object mapping role names to joint names (overrides)");
  cmd->add_flag("--json", opts->json, "Print a JSON summary instead of text");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    const io::ReadResult in = read_input(opts->in, opts->json);
    const Motion& m = in.motion;
    timing::RetimeSettings settings;
    if (opts->speed == "source") settings.speed = timing::SpeedFrom::source;
    else if (opts->speed == "input") settings.speed = timing::SpeedFrom::input;
    else throw Error(ErrorCode::invalid_settings, "--speed", fmt::format("'{}': expected source or input", opts->speed));
    if (!opts->fps.empty()) settings.output_rate = parse_fps_option(opts->fps, m.frame_rate, "--fps");
    settings.succession = !opts->global_only;
    settings.amplitude = !opts->global_only && !opts->no_amplitude;
    if (opts->no_key_correction) settings.key_iterations = 0;
    settings.on_beat = opts->on_beat;
    const body::JointRoles roles = load_roles(m.skeleton, opts->roles);
    const timing::TimingSource src = load_timing_source(opts->like, opts->roles, opts->in.unit, opts->json);
    const timing::RetimeResult r = timing::retime(m, roles, src, settings);
    nlohmann::json rep = timing::retime_report(r.report, src);
    rep["input"] = opts->in.path;
    rep["output"] = opts->out;
    // Both outputs are produced before either is committed: nothing is written on error.
    std::string report_text = rep.dump(1) + "\n";
    io::WriteOptions wo;
    wo.gltf_scene = in.gltf_scene;  // the input's character (glTF/FBX) carries over to a glTF output
    io::write_motion(opts->out, r.motion, wo);
    if (!opts->report.empty()) write_file_atomic(opts->report, report_text);
    if (opts->json) {
      nlohmann::json j = rep;
      j.erase("warp");
      print_json(j);
      return;
    }
    fmt::print("wrote {} ({} -> {} frames at {:g} fps, {} steps re-timed, path deviation {:.2g} m of {:.3f} m)\n",
               opts->out, r.report.input_frames, r.report.output_frames, r.report.output_rate,
               r.report.segments.size(), r.report.path_deviation, r.report.path_length);
    fmt::print("foot keys: the output's own contacts land within {:.2f} frames of the planned key times, "
               "within {:.2f} frames of the source's rhythm per two-step cycle ({} full stance(s) not found); "
               "root paths as curves: Hausdorff {:.2g} m (chord sag of resampling)\n",
               r.report.key_error, r.report.cycle_error, r.report.keys_unmatched, r.report.path_hausdorff);
    if (r.report.beat_period > 0)
      fmt::print("on beat: every step lasts a whole number of {:.3f} s beats ({:.1f} bpm)\n", r.report.beat_period,
                 60.0 / r.report.beat_period);
    if (!opts->report.empty()) fmt::print("wrote {}\n", opts->report);
  });
}

}  // namespace koma::cli
