// koma gait: Fourier gait style (analyze, adverb, synth, style, apply). Parsing and reporting only.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "gait_options.hpp"
#include "koma/core/error.hpp"
#include "koma/gait/apply.hpp"
#include "koma/gait/files.hpp"
#include "koma/gait/report.hpp"
#include "koma/gait/style.hpp"
#include "koma/gait/synth.hpp"
#include "koma/render/plot.hpp"

namespace koma::cli {

namespace {

namespace fs = std::filesystem;

void add_analyze_options(CLI::App& cmd, AnalyzeOpts& o) {
  cmd.add_option("--harmonics", o.fourier.harmonics,
                 "Harmonics K on every channel; 0 = per channel, the fewest within --tolerance")
      ->capture_default_str();
  cmd.add_option("--tolerance", o.tolerance_deg, "Per-channel K: RMS rotation error left per joint (deg)")->capture_default_str();
  cmd.add_option("--max-harmonics", o.fourier.max_harmonics, "Per-channel K: at most this many harmonics")->capture_default_str();
  cmd.add_option("--samples", o.cycle.samples, "Samples per averaged cycle")->capture_default_str();
  cmd.add_option("--min-period", o.cycle.min_period, "Shortest period searched (s)")->capture_default_str();
  cmd.add_option("--max-period", o.cycle.max_period, "Longest period searched (s)")->capture_default_str();
  cmd.add_option("--min-confidence", o.cycle.min_confidence, "Reject a period below this autocorrelation [0,1]")
      ->capture_default_str();
  cmd.add_option("--outlier-factor", o.cycle.outlier_factor, "Drop cycles this many times farther than the median (0 keeps all)")
      ->capture_default_str();
  cmd.add_option("--period-joint", o.cycle.period_joint, "Joint whose rotation drives the period search (default: all joints)");
  cmd.add_option("--reference-joint", o.fourier.reference_joint, "Joint whose first harmonic sets phase 0 (default: a thigh)");
  cmd.add_option("--period-from", o.period_from,
                 "Period from: auto (autocorrelation, foot contacts when it fails or disagrees), autocorrelation, contacts")
      ->check(CLI::IsMember({"auto", "autocorrelation", "contacts"}))
      ->capture_default_str();
  cmd.add_flag("--euler", o.euler, "Channels are the file's Euler angles (unwrapped) instead of log maps");
  add_input_options(cmd, o.input);
}

using Analysis = gait::GaitAnalysis;

// The analysis settings the options ask for (validated).
void analysis_settings(AnalyzeOpts o, gait::CycleSettings& cycle, gait::FourierSettings& fourier) {
  o.cycle.angles = o.euler ? gait::AngleMode::euler : gait::AngleMode::log_map;
  o.cycle.period_method = o.period_from == "contacts"          ? gait::PeriodMethod::contacts
                          : o.period_from == "autocorrelation" ? gait::PeriodMethod::autocorrelation
                                                               : gait::PeriodMethod::automatic;
  o.fourier.tolerance = o.tolerance_deg * kDegToRad;
  o.fourier.validate();
  cycle = o.cycle;
  fourier = o.fourier;
}

Analysis analyze_motion(const std::string& path, const AnalyzeOpts& o, bool quiet) {
  gait::CycleSettings cycle;
  gait::FourierSettings fourier;
  analysis_settings(o, cycle, fourier);
  const io::ReadResult r = read_input(InputOptions{path, o.input.unit, o.input.animation, o.input.asset_root}, quiet);
  return gait::analyse_gait_of(r.motion, path, cycle, fourier);
}

// A gait from a gait file, or analysed from a motion file.
gait::Gait load_gait(const std::string& path, const AnalyzeOpts& o, bool quiet) {
  if (batch::is_gait_file(path)) return gait::read_gait(path);
  return analyze_motion(path, o, quiet).gait;
}

using gait::gait_summary;

void add_synth_settings(CLI::App& cmd, SynthOpts& o) {
  cmd.add_option("--adverb", o.adverbs, "Adverb file with optional weight, FILE[:ALPHA] (repeatable; ALPHA default 1)");
  cmd.add_option("--stride", o.synth.stride, "beta: scales swing amplitudes and distance per cycle")->capture_default_str();
  cmd.add_option("--speed", o.synth.speed, "Scales the cadence (omega)")->capture_default_str();
  cmd.add_option("--seconds", o.synth.seconds, "Duration of the output (s)")->capture_default_str();
  cmd.add_option("--fps", o.fps, "Output frame rate")->capture_default_str();
  cmd.add_option("--skeleton", o.skeleton, "Drive this BVH's skeleton (same topology, other bone lengths)");
  cmd.add_option("--then", o.then, "Transition to another gait file at a time, GAIT.json@SECONDS (repeatable; implies --no-loop)");
  cmd.add_option("--transition-cycles", o.synth.transition_cycles, "Cycles over which a --then transition blends")
      ->capture_default_str();
  cmd.add_flag("--no-loop", o.no_loop, "Do not snap the duration to whole cycles");
  add_output_options(cmd, o.write);
  cmd.add_flag("--in-place", o.synth.in_place, "Keep the root over the origin (no travel)");
}

void add_synth_options(CLI::App& cmd, SynthOpts& o) {
  add_synth_settings(cmd, o);
  cmd.add_option("--csv", o.csv, "Also write joint angles (radians, one column per DOF) to this CSV");
  cmd.add_option("-o,--output", o.output, "Output motion (.bvh)")->required();
  cmd.add_flag("--json", o.json, "Print a JSON summary");
}

void print_analysis(const std::string& in, const Analysis& a) {
  const gait::Gait& g = a.gait;
  const auto names = gait::channel_names(g.basis);
  fmt::print("{}: period {:.3f} s (from {}, confidence {:.2f}), {} of {} cycles averaged, K = {}\n", in,
             g.basis.period, gait::to_string(g.basis.period_method), g.basis.confidence, g.basis.cycles_used, g.basis.cycles_found, g.harmonics);
  fmt::print("  root {}  forward speed {:.2f} m/s  phase reference {}\n", g.basis.skeleton.names[g.basis.root_joint],
             g.coefficients(1, 0).real(), names[g.reference_channel]);
  fmt::print("  reconstruction: worst joint {} {:.2f} deg RMS, height {:.1f} mm RMS; seam correction {:.1f} deg\n",
             g.basis.skeleton.names[a.error.worst_joint], a.error.worst_rms * kRadToDeg, a.error.height_rms * 1000,
             a.cycle.max_seam_correction * kRadToDeg);
  fmt::print("  largest single-cycle drift {:.1f} deg (cycle-to-cycle variation; averaging cancels it)\n",
             a.cycle.max_cycle_drift * kRadToDeg);
  const std::vector<int> kj = gait::joint_harmonics(g);
  fmt::print("  {:<20} {:>3}  {:>8}  {:>11}  (deg; raw above K = the motion's own content above its K)\n", "joint", "K",
             "RMS", "raw above K");
  for (int j = 0; j < g.basis.skeleton.joint_count(); ++j) {
    const auto u = static_cast<size_t>(j);
    fmt::print("  {:<20} {:>3}  {:>8.3f}  {:>11.3f}\n", g.basis.skeleton.names[u], kj[u], a.error.joint_rms[u] * kRadToDeg,
               u < a.raw_above.size() ? a.raw_above[u] * kRadToDeg : 0.0);
  }
  for (const gait::RotationJump& j : a.cycle.jumps)
    fmt::print("  warning: {} turns {:.0f} deg from frame {} to {}: a glitch in the data? (it distorts that joint's cycle)\n",
               g.basis.skeleton.names[j.joint], j.angle * kRadToDeg, j.frame - 1, j.frame);
}

// The style pipeline's settings for the synthesis options (adverbs, later gaits and the target
// skeleton read); the analysis settings are the caller's.
batch::GaitStyleJob style_job(const SynthOpts& o) {
  batch::GaitStyleJob job;
  gait::StyleSettings& st = job.style;
  st.synth = o.synth;
  st.synth.frame_rate = parse_fps_option(o.fps, 24.0, "--fps");
  st.synth.loop = !o.no_loop;
  for (const std::string& a : o.adverbs) job.adverbs.push_back(gait::read_weighted_adverb(a));
  for (const std::string& t : o.then) st.then.push_back(gait::read_gait_segment(t));
  if (!o.skeleton.empty()) {
    gait::set_target(st, read_input(InputOptions{o.skeleton, "", "", ""}, o.json).motion);
  }
  job.csv = o.csv;
  job.write = write_options(o.write);
  return job;
}

// `koma gait style`'s settings: style_job() with the analysis of a motion input and its reading.
batch::GaitStyleJob analysed_style_job(const AnalyzeOpts& a, const SynthOpts& s) {
  batch::GaitStyleJob job = style_job(s);
  analysis_settings(a, job.style.cycle, job.style.fourier);
  job.read = read_options(a.input);
  return job;
}

// Runs the style pipeline (a gait file, or a motion analysed) and reports: `koma gait synth|style`.
void run_style(const std::string& input, batch::GaitStyleJob job, const SynthOpts& o) {
  if (!o.json) job.on_warning = print_warning;
  const batch::GaitStyleFileResult res = batch::run_gait_style_file(input, o.output, job);
  if (o.json) {
    nlohmann::json summary = res.summary;
    summary["adverbs"] = o.adverbs;
    print_json(summary);
    return;
  }
  if (res.analysis) print_analysis(input, *res.analysis);
  const Motion& out = res.styled.motion;
  fmt::print("synthesised {} frames at {:g} fps ({:.2f} s{}), cycle {:.3f} s, stride {:g}, speed {:g}\n", out.frame_count,
             out.frame_rate, out.frame_count / out.frame_rate, res.styled.loop ? ", loops seamlessly" : "",
             res.styled.styled.basis.period, job.style.synth.stride, job.style.synth.speed);
  fmt::print("  wrote {}\n", o.output);
  if (!o.csv.empty()) fmt::print("  wrote {}\n", o.csv);
}

// The text report of `koma gait apply`.
void print_apply(const std::string& input, const std::string& output, const batch::GaitApplyFileResult& r,
                 const gait::ApplySettings& settings) {
  const gait::ApplyResult& res = r.applied;
  const gait::TakePhase& p = res.phase;
  int steady = 0;
  for (double w : p.weight) steady += w >= 1.0 ? 1 : 0;
  fmt::print("{}: {} frames at {:g} fps, phase from {}{}, period {:.3f} s (confidence {:.2f}), {} steady cycles, "
             "{} of {} frames at full style\n",
             input, res.motion.frame_count, res.motion.frame_rate, gait::to_string(p.source),
             p.foot.empty() ? "" : " (" + p.foot + ")", p.period, p.confidence, p.cycles, steady, res.motion.frame_count);
  for (const gait::AppliedAdverb& a : res.adverbs)
    fmt::print("  adverb {} alpha {:g}, phase offset {:.1f} deg, cadence x{:.3f} not applied (timing kept)\n", a.name,
               a.weight, a.phase_offset * kRadToDeg, a.period_ratio_ignored);
  for (const gait::AppliedAdverb& a : res.adverbs) {
    if (a.same_rig) continue;
    fmt::print("  adverb {} from another rig: {} joints mapped by role or name, {} left alone\n", a.name, a.mapped.size(),
               a.left_alone.size());
    for (const std::string& m : a.mapped) fmt::print("    mapped {}\n", m);
    for (const std::string& m : a.left_alone) fmt::print("    left alone {}\n", m);
  }
  if (settings.plant_feet)
    fmt::print("  planted feet: {} leg-frames solved, {} out of reach\n", res.planted_frames, res.unreachable_frames);
  fmt::print("  wrote {}\n", output);
}

}  // namespace

void add_gait_apply_options(CLI::App& cmd, GaitApplyOptions& o) {
  // One file per --adverb (repeat the flag), so `koma batch gait-apply --adverb A FILES...` keeps its inputs.
  cmd.add_option("--adverb", o.adverbs, "Adverb file with optional weight, FILE[:ALPHA] (repeatable; ALPHA default 1)")
      ->required()
      ->allow_extra_args(false);
  cmd.add_option("--period", o.settings.fixed_period,
                 "Apply at this fixed period (s per cycle) instead of detecting the gait (0 = detect)")
      ->capture_default_str();
  cmd.add_option("--stride", o.settings.stride, "beta: scales the root's horizontal travel (1 keeps the root path)")
      ->capture_default_str();
  cmd.add_option("--blend", o.settings.blend_seconds, "Seconds over which the style eases in/out where the take is not periodic")
      ->capture_default_str();
  cmd.add_option("--min-period", o.settings.cycle.min_period, "Shortest period searched (s)")->capture_default_str();
  cmd.add_option("--max-period", o.settings.cycle.max_period, "Longest period searched (s)")->capture_default_str();
  cmd.add_option("--min-confidence", o.settings.cycle.min_confidence, "Reject a period below this autocorrelation [0,1]")
      ->capture_default_str();
  cmd.add_flag("--no-plant", o.no_plant, "Do not bend the legs to keep the take's foot contacts planted");
  cmd.add_flag("--no-hold-posture", o.no_hold_posture, "Ease the posture out with the harmonics where the take is not periodic");
  cmd.add_flag("--no-root-height", o.no_root_height, "Do not add the adverbs' root height difference");
  add_input_options(cmd, o.in);
  add_output_options(cmd, o.out);
  cmd.add_option("--roles", o.roles,
                 "JSON file naming the take's joints by role ({\"left_ankle\": \"leg_joint_L_3\", ...}) where koma does not "
                 "know its names; roles not named are found by name");
}

batch::GaitApplyJob gait_apply_job(const GaitApplyOptions& o) {
  batch::GaitApplyJob job;
  job.apply = o.settings;
  job.apply.plant_feet = !o.no_plant;
  job.apply.hold_posture = !o.no_hold_posture;
  job.apply.root_height = !o.no_root_height;
  for (const std::string& a : o.adverbs) job.adverbs.push_back(gait::read_weighted_adverb(a));
  job.roles = o.roles;
  job.read = read_options(o.in);
  job.write = write_options(o.out);
  return job;
}

nlohmann::json gait_apply_options_json(const GaitApplyOptions& o) {
  const gait::ApplySettings& s = o.settings;
  return {{"adverbs", o.adverbs},
          {"period", s.fixed_period},
          {"stride", s.stride},
          {"blend", s.blend_seconds},
          {"min_period", s.cycle.min_period},
          {"max_period", s.cycle.max_period},
          {"min_confidence", s.cycle.min_confidence},
          {"no_plant", o.no_plant},
          {"no_hold_posture", o.no_hold_posture},
          {"no_root_height", o.no_root_height},
          {"roles", o.roles},
          {"unit", o.in.unit},
          {"animation", o.in.animation}};
}

void add_gait_style_batch_options(CLI::App& cmd, GaitStyleBatchOptions& o) {
  add_analyze_options(cmd, o.a);
  add_synth_settings(cmd, o.s);
  // One file per flag, so `--adverb A FILES...` keeps its inputs (as gait-apply's --adverb).
  for (const char* repeated : {"--adverb", "--then"}) cmd.get_option(repeated)->allow_extra_args(false);
  cmd.add_flag("--csv", o.csv, "Also write each output's joint angles (radians, one column per DOF) beside it: out/walk.csv");
}

batch::GaitStyleJob gait_style_batch_job(const GaitStyleBatchOptions& o) {
  batch::GaitStyleJob job = analysed_style_job(o.a, o.s);
  job.csv_beside_output = o.csv;
  return job;
}

nlohmann::json gait_style_options_json(const GaitStyleBatchOptions& o) {
  const AnalyzeOpts& a = o.a;
  const SynthOpts& s = o.s;
  return {{"harmonics", a.fourier.harmonics},
          {"tolerance", a.tolerance_deg},
          {"max_harmonics", a.fourier.max_harmonics},
          {"samples", a.cycle.samples},
          {"min_period", a.cycle.min_period},
          {"max_period", a.cycle.max_period},
          {"min_confidence", a.cycle.min_confidence},
          {"outlier_factor", a.cycle.outlier_factor},
          {"period_joint", a.cycle.period_joint},
          {"reference_joint", a.fourier.reference_joint},
          {"period_from", a.period_from},
          {"euler", a.euler},
          {"unit", a.input.unit},
          {"animation", a.input.animation},
          {"adverbs", s.adverbs},
          {"stride", s.synth.stride},
          {"speed", s.synth.speed},
          {"seconds", s.synth.seconds},
          {"fps", s.fps},
          {"skeleton", s.skeleton},
          {"then", s.then},
          {"transition_cycles", s.synth.transition_cycles},
          {"no_loop", s.no_loop},
          {"in_place", s.synth.in_place},
          {"name", s.write.name},
          {"fbx_ascii", s.write.fbx_ascii},
          {"fbx_unit", s.write.fbx_unit},
          {"fbx_axes", s.write.fbx_axes},
          {"csv", o.csv}};
}

namespace {

void add_gait_analyze(CLI::App& gait_cmd) {
  struct Opts {
    std::string in, out, plot;
    AnalyzeOpts a;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = gait_cmd.add_subcommand("analyze", "Find the cycle of a walk or run and save its spectrum as a gait file");
  cmd->footer(
      "Examples:\n"
      "  koma gait analyze walk.bvh -o walk.gait.json\n"
      "  koma gait analyze walk.bvh -o walk.gait.json --harmonics 8 --json\n"
      "  koma gait analyze walk.bvh -o walk.gait.json --plot walk_spectra.svg   # or .png\n"
      "  koma gait analyze walk.bvh -o walk.gait.json --period-from contacts\n"
      "  koma gait analyze walk.bvh -o walk.gait.json --euler --period-joint LeftUpLeg");
  cmd->add_option("input", o->in, "Motion file (.bvh)")->required();
  cmd->add_option("-o,--output", o->out, "Gait file to write (.gait.json)")->required();
  add_analyze_options(*cmd, o->a);
  cmd->add_option("--plot", o->plot, "Also plot the spectra: per joint, the rotation amplitude of each harmonic (.svg or .png)");
  cmd->add_flag("--json", o->json, "Print a JSON summary (with per-joint reconstruction RMS)");
  cmd->callback([o] {
    if (!o->plot.empty() && !o->plot.ends_with(".svg") && !o->plot.ends_with(".png"))
      throw Error(ErrorCode::invalid_settings, "--plot", fmt::format("'{}' must end in .svg or .png", o->plot));
    const Analysis a = analyze_motion(o->in, o->a, o->json);
    if (!o->plot.empty()) {
      std::vector<std::vector<double>> amps = gait::joint_amplitudes(a.gait);
      for (auto& row : amps)
        for (double& v : row) v *= kRadToDeg;
      render::PlotSettings ps;
      ps.width = 1200;
      ps.title = fmt::format("{}: joint rotation spectra, K = {}, period {:.3f} s", fs::path(o->in).filename().string(),
                             a.gait.harmonics, a.gait.basis.period);
      ps.y_label = "amplitude (deg)";
      render::plot_spectra(o->plot, a.gait.basis.skeleton.names, amps, ps);
    }
    gait::write_gait(o->out, a.gait);
    if (o->json) {
      nlohmann::json j = gait::analysis_report(a);
      j["input"] = o->in;
      j["output"] = o->out;
      if (!o->plot.empty()) j["plot"] = o->plot;
      print_json(j);
      return;
    }
    print_analysis(o->in, a);
    fmt::print("  wrote {}\n", o->out);
    if (!o->plot.empty()) fmt::print("  wrote {}\n", o->plot);
  });
}

void add_gait_adverb(CLI::App& gait_cmd) {
  struct Opts {
    std::string neutral, styled, out;
    AnalyzeOpts a;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = gait_cmd.add_subcommand("adverb", "Learn a style as styled minus neutral gait (same skeleton topology)");
  cmd->footer(
      "NEUTRAL and STYLED are motion files (analysed with the options below) or gait files (.json).\n"
      "Examples:\n"
      "  koma gait adverb walk_normal.bvh walk_happy.bvh -o happy.adverb.json\n"
      "  koma gait adverb normal.gait.json tired.gait.json -o tired.adverb.json --json");
  cmd->add_option("neutral", o->neutral, "Neutral motion or gait file")->required();
  cmd->add_option("styled", o->styled, "Styled motion or gait file")->required();
  cmd->add_option("-o,--output", o->out, "Adverb file to write (.adverb.json)")->required();
  add_analyze_options(*cmd, o->a);
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  cmd->callback([o] {
    // Either walk's error says which of the two it was.
    auto load = [&](const std::string& path, const char* which) {
      try {
        return load_gait(path, o->a, o->json);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::bad_data) throw;
        throw Error(e.code(), e.context(), fmt::format("the {} walk: {}", which, e.message()));
      }
    };
    const gait::Gait n = load(o->neutral, "neutral");
    const gait::Gait s = load(o->styled, "styled");
    const gait::Adverb adv = gait::make_adverb(n, s);
    const double dist = gait::coefficient_distance(n, s);
    gait::write_adverb(o->out, adv);
    const double ratio = std::exp(adv.log_period_ratio);
    if (o->json) {
      print_json({{"neutral", gait_summary(n)}, {"styled", gait_summary(s)}, {"period_ratio", ratio},
                  {"coefficient_distance_rad", dist}, {"output", o->out}});
      return;
    }
    fmt::print("adverb: period x{:.3f} ({:.3f} s -> {:.3f} s), coefficient distance {:.3f} rad\n", ratio, n.basis.period,
               s.basis.period, dist);
    fmt::print("  wrote {}\n", o->out);
  });
}

void add_gait_synth(CLI::App& gait_cmd) {
  struct Opts {
    std::string in;
    SynthOpts s;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = gait_cmd.add_subcommand("synth", "Synthesise a gait file (plus adverbs) as a looping motion of any length");
  cmd->footer(
      "Examples:\n"
      "  koma gait synth walk.gait.json --seconds 10 -o walk.bvh\n"
      "  koma gait synth walk.gait.json --adverb happy.adverb.json:1.5 --adverb tired.adverb.json:0.3 \\\n"
      "      --stride 1.2 --speed 0.8 --seconds 10 --skeleton other.bvh -o out.bvh\n"
      "  koma gait synth walk.gait.json --then run.gait.json@4 --seconds 8 -o walk_to_run.bvh --csv angles.csv");
  cmd->add_option("gait", o->in, "Gait file (.gait.json)")->required();
  add_synth_options(*cmd, o->s);
  cmd->callback([o] {
    if (!batch::is_gait_file(o->in)) (void)gait::read_gait(o->in);  // synth reads gait files only: say why
    run_style(o->in, style_job(o->s), o->s);
  });
}

void add_gait_style(CLI::App& gait_cmd) {
  struct Opts {
    std::string in;
    AnalyzeOpts a;
    SynthOpts s;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = gait_cmd.add_subcommand("style", "Analyse a walk and synthesise it with adverbs in one step");
  cmd->footer(
      "Examples:\n"
      "  koma gait style walk.bvh --adverb happy.adverb.json -o happy_walk.bvh\n"
      "  koma gait style walk.bvh --adverb sad.adverb.json:2 --speed 0.7 --seconds 20 --fps 30 -o very_sad.bvh");
  cmd->add_option("input", o->in, "Motion file (.bvh)")->required();
  add_analyze_options(*cmd, o->a);
  add_synth_options(*cmd, o->s);
  cmd->callback([o] {
    // Read, analyse, style, write: one pipeline (koma/batch/gait_file.hpp), `koma batch gait-style`'s too.
    run_style(o->in, analysed_style_job(o->a, o->s), o->s);
  });
}

void add_gait_apply(CLI::App& gait_cmd) {
  struct Opts {
    GaitApplyOptions a;  // shared with `koma batch gait-apply` (gait_options.hpp)
    std::string out;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = gait_cmd.add_subcommand("apply", "Apply adverbs to a take itself: its turns, starts and stops are kept");
  cmd->footer(
      "The take's frame count, timing, root path and heading are kept; foot contacts stay planted.\n"
      "An adverb learned on another rig maps by joint role (hips, spine, left_shoulder, ... found by name);\n"
      "the text output lists what was mapped and what was left alone. Name the roles of a rig koma does\n"
      "not know with --roles.\n"
      "Examples:\n"
      "  koma gait apply take.bvh --adverb tired.adverb.json -o tired_take.bvh\n"
      "  koma gait apply take.bvh --adverb happy.adverb.json:0.5 --adverb proud.adverb.json:0.3 -o out.bvh --json\n"
      "  koma gait apply shuffle.bvh --adverb old.adverb.json --period 1.2 -o old_shuffle.bvh   # gait not detected\n"
      "  koma gait apply hero.fbx --animation \"Armature|Walk\" --period 1 --adverb tired.adverb.json -o tired_hero.bvh\n"
      "  koma gait apply CesiumMan.gltf --roles cesium.roles.json --period 1 --adverb tired.adverb.json -o out.glb\n"
      "    # cesium.roles.json: {\"left_ankle\": \"leg_joint_L_3\", \"right_ankle\": \"leg_joint_R_3\", ...}");
  cmd->add_option("input", o->a.in.path, "The take (.bvh, .glb, .gltf, .fbx)")->required();
  cmd->add_option("-o,--output", o->out, "Output motion")->required();
  add_gait_apply_options(*cmd, o->a);
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  cmd->callback([o] {
    batch::GaitApplyJob job = gait_apply_job(o->a);
    if (!o->json) job.on_warning = print_warning;
    // Read, apply, write: the pipeline of `koma batch gait-apply` too.
    const batch::GaitApplyFileResult r = batch::run_gait_apply_file(o->a.in.path, o->out, job);
    for (const std::string& w : r.applied.warnings) fmt::print(stderr, "koma: warning: {}\n", w);
    if (o->json) return print_json(r.summary);
    print_apply(o->a.in.path, o->out, r, job.apply);
  });
}

}  // namespace

void add_gait_command(CLI::App& app) {
  auto* gait_cmd = app.add_subcommand("gait", "Fourier gait style: analyse walks, learn adverbs, synthesise styled gaits");
  gait_cmd->require_subcommand(1);
  gait_cmd->footer(
      "Examples:\n"
      "  koma gait analyze walk.bvh -o walk.gait.json\n"
      "  koma gait adverb normal.bvh happy.bvh -o happy.adverb.json\n"
      "  koma gait synth walk.gait.json --adverb happy.adverb.json:1.5 --stride 1.2 --speed 0.8 --seconds 10 -o out.bvh\n"
      "  koma gait style walk.bvh --adverb happy.adverb.json -o happy_walk.bvh --csv happy_walk.csv\n"
      "  koma gait apply take.bvh --adverb happy.adverb.json:0.8 -o happy_take.bvh");

  add_gait_analyze(*gait_cmd);
  add_gait_adverb(*gait_cmd);
  add_gait_synth(*gait_cmd);
  add_gait_style(*gait_cmd);
  add_gait_apply(*gait_cmd);
}

}  // namespace koma::cli
