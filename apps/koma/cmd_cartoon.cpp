#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "cartoon_options.hpp"
#include "flags.hpp"
#include "koma/core/error.hpp"
#include "koma/io/gltf.hpp"

namespace koma::cli {

namespace {

double parse_number(std::string_view text, std::string_view option) {
  try {
    size_t used = 0;
    const double v = std::stod(std::string(text), &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_settings, std::string(option), fmt::format("'{}' is not a number", text));
}

// A duration with its unit: "0.15s" -> {0.15, seconds}; "4f" -> {4, frames}. A bare number is
// refused: it meant frames before the filter was set in seconds, and guessing would change results.
struct Duration {
  double value = 0;
  bool seconds = true;
};

Duration parse_duration(const std::string& text, const char* flag, const char* what) {
  const char unit = text.empty() ? '\0' : text.back();
  if (unit != 's' && unit != 'f')
    throw Error(ErrorCode::invalid_settings, flag,
                fmt::format("'{}' must be {} > 0 with a unit: 0.15s (seconds) or 4f (frames of the file)", text, what));
  const double v = parse_number(std::string_view(text).substr(0, text.size() - 1), flag);
  if (!(v > 0) || !std::isfinite(v))
    throw Error(ErrorCode::invalid_settings, flag, fmt::format("'{}' must be {} > 0 (0.15s or 4f)", text, what));
  return {v, unit == 's'};
}

// "auto" -> adaptive; "0.15s" -> 0.15 seconds; "4f" -> 4 frames of each file.
void parse_sigma(const std::string& text, batch::CartoonJob& job) {
  if (text == "auto") return;
  const Duration d = parse_duration(text, "--sigma", "auto or");
  (d.seconds ? job.cartoon.sigma_seconds : job.sigma_frames) = d.value;
}

// "0.05s:0.3s" (seconds; the per-frame form "2f:8f" needs --strength-per-frame).
void parse_sigma_range(const std::string& text, cartoon::CartoonSettings& cs) {
  if (text.empty()) return;
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw Error(ErrorCode::invalid_settings, "--sigma-range", fmt::format("'{}' is not MIN:MAX, e.g. 0.05s:0.3s", text));
  const Duration lo = parse_duration(text.substr(0, colon), "--sigma-range", "a sigma");
  const Duration hi = parse_duration(text.substr(colon + 1), "--sigma-range", "a sigma");
  if (lo.seconds != hi.seconds)
    throw Error(ErrorCode::invalid_settings, "--sigma-range", fmt::format("'{}' mixes seconds and frames", text));
  if (lo.seconds != !cs.per_frame)
    throw Error(ErrorCode::invalid_settings, "--sigma-range",
                fmt::format("'{}': give seconds (0.05s:0.3s), or frames (2f:8f) with --strength-per-frame", text));
  if (cs.per_frame) {
    cs.per_frame->min_sigma = lo.value;
    cs.per_frame->max_sigma = hi.value;
  } else {
    cs.min_sigma_seconds = lo.value;
    cs.max_sigma_seconds = hi.value;
  }
}

// "arms:1.5,torso:0.5"
void parse_parts(const std::string& text, cartoon::CartoonSettings& cs) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw Error(ErrorCode::invalid_settings, "--parts", fmt::format("'{}' is not part:strength", item));
    const body::BodyPart part = body::parse_part(item.substr(0, colon));
    cs.part_strength[static_cast<int>(part)] = parse_number(item.substr(colon + 1), "--parts");
    pos = comma + 1;
  }
}

}  // namespace

void add_cartoon_options(CLI::App& cmd, CartoonOptions& o) {
  auto* strength = cmd.add_option("--strength", o.strength,
                                  "Strength A, the same at every frame rate (A per frame^2 at 30 fps; x16 per frame^2 "
                                  "at 120 fps is applied for you)")
                       ->capture_default_str();
  cmd.add_option("--strength-per-frame", o.strength_per_frame,
                 "Strength A per frame^2 of the file, used as given (the effect then shrinks as 1/fps^2); sigma "
                 "bounds and window in frames (2f..8f, 32)")
      ->excludes(strength);
  cmd.add_option("--sigma", o.sigma, "auto (per frame from the dominant frequency), Ns seconds (0.15s), or Nf frames (4f)")
      ->capture_default_str();
  cmd.add_option("--sigma-range", o.sigma_range, "Clamp of the auto sigma, MIN:MAX in seconds (default 0.067s:0.267s)");
  cmd.add_option("--parts", o.parts, "Strength multipliers per part, e.g. arms:1.5,torso:0.5");
  cmd.add_option("--squash", o.squash, "Squash-and-stretch amount K (0 = off): per-joint scale in a .glb/.gltf output and the report; BVH cannot store scale (warned)")
      ->capture_default_str();
  cmd.add_option("--squash-joint", o.squash_joint, "Joint that squashes (default: the root)");
  cmd.add_flag("--keep-feet", o.keep_feet, "Keep planted feet planted (contact detection + two-bone IK)");
  cmd.add_option("--bound", o.bound,
                 "Each joint's added rotation stays within this share of the joint's own range in the take "
                 "(warned, naming the joints and frames, where it holds the filter back); 0 = no bound")
      ->capture_default_str();
  cmd.add_option("--cut-speed", o.cut_speed,
                 "A frame step faster than this many body sizes per second (a T-pose frame, a jump cut) splits "
                 "the take into parts filtered on their own; 0 = never split")
      ->capture_default_str();
  add_input_options(cmd, o.in);
  add_output_options(cmd, o.out);
}

batch::CartoonJob cartoon_job(const CartoonOptions& o) {
  batch::CartoonJob job;
  cartoon::CartoonSettings& cs = job.cartoon;
  cs.strength = o.strength;
  if (o.strength_per_frame) {
    cs.per_frame = cartoon::FilterSettings{};
    cs.per_frame->strength = *o.strength_per_frame;
  }
  parse_sigma_range(o.sigma_range, cs);
  cs.squash = o.squash;
  cs.squash_joint = o.squash_joint;
  cs.keep_feet = o.keep_feet;
  cs.bound_share = o.bound;
  cs.cut_speed = o.cut_speed;
  if (!o.parts.empty()) parse_parts(o.parts, cs);
  parse_sigma(o.sigma, job);
  if (!o.in.unit.empty()) {
    parse_input_unit(o.in.unit, job.read);  // a name, or a number of metres per file unit
    if (job.read.unit) job.points_unit = *job.read.unit;
    else if (batch::is_points_csv(o.in.path))
      throw Error(ErrorCode::invalid_settings, "--unit", "point-track CSV input takes a unit name (m, cm, mm, in, ft)");
  }
  job.read.animation = o.in.animation;
  job.read.asset_root = o.in.asset_root;
  job.write = write_options(o.out);
  job.validate();
  return job;
}

nlohmann::json cartoon_options_json(const CartoonOptions& o) {
  nlohmann::json per_frame = o.strength_per_frame ? nlohmann::json(*o.strength_per_frame) : nlohmann::json(nullptr);
  return {{"strength", o.strength}, {"strength_per_frame", per_frame}, {"sigma", o.sigma}, {"sigma_range", o.sigma_range},
          {"parts", o.parts}, {"squash", o.squash},
          {"squash_joint", o.squash_joint}, {"keep_feet", o.keep_feet}, {"bound", o.bound}, {"cut_speed", o.cut_speed}, {"unit", o.in.unit}, {"animation", o.in.animation}};
}

void add_cartoon_command(CLI::App& app) {
  struct Opts {
    CartoonOptions c;  // the filter options, shared with `koma batch cartoon` (cartoon_options.hpp)
    std::string out, report;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("cartoon", "Cartoon animation filter: anticipation, follow-through, squash and stretch");
  cmd->footer(
      "x* = x - A * (G_sigma * x''); gain 1 + A w^2 exp(-sigma^2 w^2 / 2) peaks at w = sqrt(2)/sigma.\n"
      "Settings are in seconds: --strength 8 and --sigma 0.15s do the same on a 24, 30, 60 or 120 fps file\n"
      "(A is per frame^2 at 30 fps, and koma applies A*(fps/30)^2 per frame^2 at other rates).\n"
      "--strength-per-frame and --sigma 4f keep the old per-frame meaning.\n"
      "Parts: root (root translation), torso (alias spine), head, arms, legs. See docs/cartoon.md.\n"
      "Examples:\n"
      "  koma cartoon walk.bvh -o walk_cartoon.bvh --keep-feet\n"
      "  koma cartoon kick.bvh -o kick_cartoon.bvh --strength 20 --sigma 0.15s --parts arms:1.5,torso:0.5\n"
      "  koma cartoon jump.bvh -o jump.bvh --squash 0.3 --report jump_report.json\n"
      "  koma cartoon points.csv -o points_cartoon.csv --sigma 4f");
  cmd->add_option("input", opts->c.in.path, "Input motion (BVH) or point tracks (CSV)")->required();
  cmd->add_option("-o,--output", opts->out, "Output BVH, or CSV for point-track input")->required();
  add_cartoon_options(*cmd, opts->c);
  cmd->add_option("--report", opts->report, "Write a JSON report (sigma, contacts, skating, squash per frame)");
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  cmd->callback([opts] {
    const bool csv_in = batch::is_points_csv(opts->c.in.path);
    if (csv_in && !batch::is_points_csv(opts->out))
      throw Error(ErrorCode::invalid_settings, "--output",
                  io::is_motion_file(opts->out)
                      ? "point-track CSV input has no skeleton, so it cannot become a motion file (.fbx, .glb, "
                        ".bvh); write a .csv output"
                      : "point-track CSV input needs a .csv output");
    if (csv_in && (opts->c.keep_feet || opts->c.squash > 0))
      throw Error(ErrorCode::invalid_settings, "--keep-feet/--squash", "need a skeleton (BVH input)");
    if (!csv_in && batch::is_points_csv(opts->out))
      throw Error(ErrorCode::invalid_settings, "--output", "motion input writes BVH; use `koma positions` for CSV");
    batch::CartoonJob job = cartoon_job(opts->c);
    job.report = opts->report;
    // Read, filter, write: the same pipeline as `koma batch cartoon` (koma/batch/pipelines.hpp).
    const batch::CartoonFileResult r = batch::run_cartoon_file(opts->c.in.path, opts->out, job);
    for (const auto& w : r.warnings) fmt::print(stderr, "koma: warning: {}\n", with_flags(w));
    if (!csv_in && opts->c.squash > 0 && !io::is_gltf_file(opts->out)) {
      // BVH has no scale channel: the squash is only in the report. Said, not dropped silently.
      fmt::print(stderr, "koma: warning: --squash {:g} makes per-joint scale, which {} cannot store (BVH has no "
                         "scale channels); it is only in the report. Write .glb or .gltf to keep it, e.g. -o {}\n",
                 opts->c.squash, opts->out, std::filesystem::path(opts->out).replace_extension(".glb").string());
    }
    const nlohmann::json& summary = r.summary;
    if (opts->json) {
      print_json(summary);
      return;
    }
    fmt::print("wrote {}  (strength {:g}{}, sigma {})\n", opts->out,
               opts->c.strength_per_frame.value_or(opts->c.strength), opts->c.strength_per_frame ? " per frame^2" : "",
               opts->c.sigma);
    if (summary.contains("body_change_mm"))
      fmt::print("  body moved {:.1f} mm on average (max {:.1f} mm: {} at frame {})\n",
                 summary["body_change_mm"]["mean"].get<double>(), summary["body_change_mm"]["max"].get<double>(),
                 summary["body_change_mm"]["worst_joint"].get<std::string>(),
                 summary["body_change_mm"]["worst_frame"].get<int>());
    if (summary.contains("skating_mm_per_frame"))
      fmt::print("  {} contacts kept planted: foot skating {:.2f} -> {:.2f} mm/frame\n", summary["contacts"].get<int>(),
                 summary["skating_mm_per_frame"]["input"].get<double>(),
                 summary["skating_mm_per_frame"]["output"].get<double>());
    if (!opts->report.empty()) fmt::print("  report {}\n", opts->report);
  });
}

}  // namespace koma::cli
