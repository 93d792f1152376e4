#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/timing/keytimes.hpp"
#include "koma/timing/report.hpp"
#include "koma/timing/source.hpp"
#include "timing_options.hpp"

namespace koma::cli {

namespace {

void add_detect(CLI::App& parent) {
  struct Opts {
    InputOptions in;
    std::string roles;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = parent.add_subcommand("detect", "Key times per effector: foot contacts, hand/head acceleration minima");
  cmd->footer(
      "Feet: each contact's frame nearest its mean position, with a confidence calibrated on\n"
      "hand-labelled takes (the expected share of the contact's frames a person marks as planted).\n"
      "Hands and head: acceleration minima of\n"
      "the low-passed path (the passing moments of a swing), and extremes: the direction reversals\n"
      "relative to the hips (the rule of `koma keys --keep-extremes`). A hand that barely moves is\n"
      "reported still. The beat: a regular grid fitted to the foot touch-downs, with its tempo and a\n"
      "confidence (0 = no better than chance). Thresholds are in body sizes per second and seconds,\n"
      "so the same take gives the same keys at any frame rate and in any length unit.\n"
      "Examples:\n"
      "  koma timing detect walk.bvh\n"
      "  koma timing detect walk.bvh --json | jq '.effectors[0].keys'\n"
      "  koma timing detect odd_names.bvh --roles roles.json   # {\"left_ankle\": \"LFoot\", ...}");
  cmd->add_option("input", opts->in.path, "Input motion file")->required();
  cmd->add_option("--roles", opts->roles, "JSON object mapping role names to joint names (overrides)");
  cmd->add_flag("--json", opts->json, "Print a JSON object instead of text");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    const Motion m = read_input(opts->in, opts->json).motion;
    const body::JointRoles roles = load_roles(m.skeleton, opts->roles);
    const timing::KeyTimeReport r = timing::detect_key_times(m, roles);
    if (opts->json) {
      nlohmann::json j = timing::key_times_report(m, roles, r);
      j["file"] = opts->in.path;
      print_json(j);
      return;
    }
    fmt::print("{}: {} frames at {:g} fps\n", opts->in.path, m.frame_count, m.frame_rate);
    for (const auto& e : r.effectors) {
      if (e.still) {
        fmt::print("{:<11} still: it barely moves relative to the hips, no keys\n", e.name);
        continue;
      }
      if (!e.note.empty()) {
        fmt::print("{:<11} no keys: {}\n", e.name, e.note);
        continue;
      }
      fmt::print("{:<11} {:<9} {} key(s):", e.name, timing::to_string(e.kind), e.keys.size());
      for (const auto& k : e.keys) fmt::print(" {}({:.2f})", k.frame, k.confidence);
      fmt::print("\n");
      if (e.kind == timing::KeyKind::contact) continue;
      fmt::print("{:<11} {:<9} {} key(s):", "", "extreme", e.extremes.size());
      for (const auto& k : e.extremes) fmt::print(" {}", k.frame);
      fmt::print("\n");
    }
    if (r.beat.found()) {
      fmt::print("beat        {:.1f} bpm ({:.3f} s, first at {:.3f} s), {} of {} keys on the beat, confidence {:.2f}\n",
                 r.beat.tempo_bpm, r.beat.period, r.beat.phase, r.beat.on_beat, r.beat.keys, r.beat.confidence);
    } else {
      fmt::print("beat        none ({} key times; a beat needs 3)\n", r.beat.keys);
    }
  });
}

void add_source(CLI::App& parent) {
  struct Opts {
    std::string like, out, roles, unit;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = parent.add_subcommand("source", "Measure an example's timing (or a folder's) and save it as JSON");
  cmd->footer(
      "Examples:\n"
      "  koma timing source sad_walk.bvh -o sad.json\n"
      "  koma timing source styles/sad/ -o sad.json      # every .bvh in the folder, one skeleton\n"
      "  koma retime walk.bvh --like sad.json -o walk_sad.bvh");
  cmd->add_option("example", opts->like, "Example motion file or folder of examples")->required();
  cmd->add_option("-o,--output", opts->out, "Output timing source (.json)")->required();
  cmd->add_option("--roles", opts->roles, "JSON object mapping role names to joint names (overrides)");
  cmd->add_option("--unit", opts->unit, "Length unit of BVH examples (default: detected)");
  cmd->add_flag("--json", opts->json, "Print a JSON summary instead of text");
  cmd->callback([opts] {
    const timing::TimingSource src = load_timing_source(opts->like, opts->roles, opts->unit, opts->json);
    write_file_atomic(opts->out, timing::timing_source_to_json(src));
    if (opts->json) {
      nlohmann::json j = timing::timing_source_summary(src);
      j["output"] = opts->out;
      print_json(j);
      return;
    }
    fmt::print("wrote {} ({} example(s), {} step segments, mean cycle {:.3f} s, {} chain lags)\n", opts->out,
               src.examples.size(), src.segments.size(), src.mean_cycle_seconds, src.lags.size());
  });
}

}  // namespace

void add_timing_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("timing", "Key times and timing sources (see also `koma retime`)");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  koma timing detect walk.bvh\n"
      "  koma timing source sad_walk.bvh -o sad.json");
  add_detect(*cmd);
  add_source(*cmd);
}

}  // namespace koma::cli
