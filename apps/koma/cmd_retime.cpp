#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/error.hpp"
#include "retime_options.hpp"

namespace koma::cli {

void add_retime_options(CLI::App& cmd, RetimeOptions& o) {
  cmd.add_option("--like", o.like, "Example motion, folder of examples, or timing.json")->required();
  cmd.add_flag("--global-only", o.global_only, "Only re-time steps (no succession lags, no amplitude)");
  cmd.add_flag("--no-amplitude", o.no_amplitude, "Do not scale arm/spine rotation ranges");
  cmd.add_flag("--no-key-correction", o.no_key_correction,
               "Do not search step boundaries so the output's re-detected foot keys land on the example's key times");
  cmd.add_flag("--on-beat", o.on_beat,
               "Make each step a whole number of the example's beats (error if the example has no steady beat)");
  cmd.add_option("--speed", o.speed,
                 "cadence (default: the example's step times), source (the example's speed in body sizes/s) "
                 "or input (the input's total step time)")
      ->capture_default_str();
  cmd.add_option("--fps", o.fps, "Output frame rate, or 'source' (default: the input's)");
  cmd.add_option("--roles", o.roles, "JSON object mapping role names to joint names (overrides)");
  add_input_options(cmd, o.in);
  add_output_options(cmd, o.out);
}

batch::RetimeJob retime_job(const RetimeOptions& o) {
  batch::RetimeJob job;
  timing::RetimeSettings& settings = job.retime;
  if (o.speed == "cadence") settings.speed = timing::SpeedFrom::cadence;
  else if (o.speed == "source") settings.speed = timing::SpeedFrom::source;
  else if (o.speed == "input") settings.speed = timing::SpeedFrom::input;
  else
    throw Error(ErrorCode::invalid_settings, "--speed",
                fmt::format("'{}': expected cadence, source or input", o.speed));
  // 'source' (the input's rate) is the pipeline's 0.
  if (!o.fps.empty()) settings.output_rate = parse_fps_option(o.fps, 0.0, "--fps");
  settings.succession = !o.global_only;
  settings.amplitude = !o.global_only && !o.no_amplitude;
  if (o.no_key_correction) settings.key_iterations = 0;
  settings.on_beat = o.on_beat;
  job.like = o.like;
  job.roles = o.roles;
  job.read = read_options(o.in);
  job.write = write_options(o.out);
  return job;
}

nlohmann::json retime_options_json(const RetimeOptions& o) {
  return {{"like", o.like},           {"roles", o.roles},
          {"fps", o.fps},             {"speed", o.speed},
          {"global_only", o.global_only}, {"no_amplitude", o.no_amplitude},
          {"no_key_correction", o.no_key_correction}, {"on_beat", o.on_beat},
          {"unit", o.in.unit},        {"animation", o.in.animation}};
}

void add_retime_command(CLI::App& app) {
  struct Opts {
    RetimeOptions r;  // shared with `koma batch retime` (retime_options.hpp)
    std::string out, report;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("retime", "Re-time a motion to an example's timing; the path stays unchanged");
  cmd->footer(
      "Keeps where the body goes and takes when it gets there from the example: by default the\n"
      "example's cadence (each step lasts as the example's steps do, the median step is the example's,\n"
      "and the input keeps its own stride, so its speed follows), the within-step spacing profile,\n"
      "parent->child succession lags and (optionally) arm/spine amplitude. --speed source takes the\n"
      "example's speed in body sizes per second instead (a long stride then walks slower steps),\n"
      "--speed input keeps the input's total step time. After the steps are re-timed, the output's own foot contacts\n"
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
  cmd->add_option("input", opts->r.in.path, "Input motion file")->required();
  cmd->add_option("-o,--output", opts->out, "Output motion file (.bvh)")->required();
  add_retime_options(*cmd, opts->r);
  cmd->add_option("--report", opts->report, "Write a JSON report (segments, warp, shifts) here");
  cmd->add_flag("--json", opts->json, "Print a JSON summary instead of text");
  cmd->callback([opts] {
    batch::RetimeJob job = retime_job(opts->r);
    job.report = opts->report;
    if (!opts->json) job.on_warning = print_warning;
    // Read, load the example's timing, re-time, write: the pipeline of `koma batch retime` too.
    const batch::RetimeFileResult res = batch::run_retime_file(opts->r.in.path, opts->out, job);
    if (opts->json) {
      print_json(batch::retime_figures(res));
      return;
    }
    const timing::RetimeReport& r = res.report;
    fmt::print("wrote {} ({} -> {} frames at {:g} fps, {} steps re-timed, path deviation {:.2g} m of {:.3f} m)\n",
               opts->out, r.input_frames, r.output_frames, r.output_rate, r.segments.size(), r.path_deviation,
               r.path_length);
    fmt::print("cadence ({}): steps of {:.3f} s (the example's median {:.3f} s, the input's {:.3f} s); "
               "speed {:.2f} -> {:.2f} m/s\n",
               timing::speed_from_name(r.speed), r.output_step, r.source_step, r.input_step, r.input_speed,
               r.output_speed);
    fmt::print("foot keys: the output's own contacts land within {:.2f} frames of the planned key times, "
               "within {:.2f} frames of the source's rhythm per two-step cycle ({} full stance(s) not found); "
               "root paths as curves: Hausdorff {:.2g} m (chord sag of resampling)\n",
               r.key_error, r.cycle_error, r.keys_unmatched, r.path_hausdorff);
    if (r.beat_period > 0)
      fmt::print("on beat: every step lasts a whole number of {:.3f} s beats ({:.1f} bpm)\n", r.beat_period,
                 60.0 / r.beat_period);
    if (!opts->report.empty()) fmt::print("wrote {}\n", opts->report);
  });
}

}  // namespace koma::cli
