#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/timing/keytimes.hpp"
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
      "Feet: contact frame nearest the contact's mean position. Hands, head: acceleration minima.\n"
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
      nlohmann::json j;
      j["file"] = opts->in.path;
      j["frames"] = m.frame_count;
      j["fps"] = m.frame_rate;
      auto& roles_j = j["roles"] = nlohmann::json::object();
      for (int k = 0; k < body::kRoleCount; ++k) {
        if (roles.points[k] >= 0) roles_j[std::string(body::role_name(static_cast<body::Role>(k)))] =
            m.skeleton.point_name(roles.points[k]);
      }
      auto& eff = j["effectors"] = nlohmann::json::array();
      for (const auto& e : r.effectors) {
        nlohmann::json keys = nlohmann::json::array();
        for (const auto& k : e.keys)
          keys.push_back({{"frame", k.frame}, {"time", k.frame / m.frame_rate}, {"begin", k.begin}, {"end", k.end},
                          {"confidence", k.confidence}});
        eff.push_back({{"name", e.name}, {"kind", timing::to_string(e.kind)}, {"keys", keys}});
      }
      auto& tried = j["contact_thresholds_tried"] = nlohmann::json::array();
      for (const auto& t : r.attempts)
        tried.push_back({{"height_fraction", t.height_fraction}, {"speed_threshold", t.speed_threshold},
                         {"contacts", t.contacts}});
      print_json(j);
      return;
    }
    fmt::print("{}: {} frames at {:g} fps\n", opts->in.path, m.frame_count, m.frame_rate);
    for (const auto& e : r.effectors) {
      fmt::print("{:<11} {:<9} {} key(s):", e.name, timing::to_string(e.kind), e.keys.size());
      for (const auto& k : e.keys) fmt::print(" {}({:.2f})", k.frame, k.confidence);
      fmt::print("\n");
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
      print_json({{"output", opts->out},
                  {"examples", src.examples},
                  {"segments", src.segments.size()},
                  {"mean_cycle_seconds", src.mean_cycle_seconds},
                  {"lags", src.lags.size()}});
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
