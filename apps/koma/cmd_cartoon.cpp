#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "koma/io/gltf.hpp"
#include "koma/cartoon/filter.hpp"
#include "koma/cartoon/report.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/csv.hpp"

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

// "auto" -> 0 (adaptive); "S" frames; "0.15s" seconds.
double parse_sigma(const std::string& text, double frame_rate) {
  if (text == "auto") return 0.0;
  const bool seconds = !text.empty() && text.back() == 's';
  const double v = parse_number(seconds ? std::string_view(text).substr(0, text.size() - 1) : text, "--sigma");
  const double frames = seconds ? v * frame_rate : v;
  if (!(frames > 0) || !std::isfinite(frames))
    throw Error(ErrorCode::invalid_settings, "--sigma", fmt::format("'{}' must be auto or > 0 (frames, or seconds with s)", text));
  return frames;
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

bool is_csv(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

}  // namespace

void add_cartoon_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string out, sigma = "auto", parts, report, squash_joint;
    double strength = 8.0, squash = 0.0;
    bool keep_feet = false, json = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("cartoon", "Cartoon animation filter: anticipation, follow-through, squash and stretch");
  cmd->footer(
      "x* = x - A * (G_sigma * x''), x'' per frame^2; gain 1 + A w^2 exp(-sigma^2 w^2 / 2) peaks at\n"
      "w = sqrt(2)/sigma. The effect of a given A scales with 1/fps^2 (at 120 fps use ~16x the 30 fps A).\n"
      "Parts: root (root translation), torso (alias spine), head, arms, legs. See docs/cartoon.md.\n"
      "Examples:\n"
      "  koma cartoon walk.bvh -o walk_cartoon.bvh --keep-feet\n"
      "  koma cartoon kick.bvh -o kick_cartoon.bvh --strength 20 --sigma 0.15s --parts arms:1.5,torso:0.5\n"
      "  koma cartoon jump.bvh -o jump.bvh --squash 0.3 --report jump_report.json\n"
      "  koma cartoon points.csv -o points_cartoon.csv --sigma 4");
  cmd->add_option("input", opts->in.path, "Input motion (BVH) or point tracks (CSV)")->required();
  cmd->add_option("-o,--output", opts->out, "Output BVH, or CSV for point-track input")->required();
  cmd->add_option("--strength", opts->strength, "Strength A (x'' per frame^2)")->capture_default_str();
  cmd->add_option("--sigma", opts->sigma, "auto (per frame from the dominant frequency), S frames, or Ns seconds")
      ->capture_default_str();
  cmd->add_option("--parts", opts->parts, "Strength multipliers per part, e.g. arms:1.5,torso:0.5");
  cmd->add_option("--squash", opts->squash, "Squash-and-stretch amount K (0 = off): per-joint scale in a .glb/.gltf output and the report; BVH cannot store scale (warned)")
      ->capture_default_str();
  cmd->add_option("--squash-joint", opts->squash_joint, "Joint that squashes (default: the root)");
  cmd->add_flag("--keep-feet", opts->keep_feet, "Keep planted feet planted (contact detection + two-bone IK)");
  cmd->add_option("--report", opts->report, "Write a JSON report (sigma, contacts, skating, squash per frame)");
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    cartoon::CartoonSettings cs;
    cs.filter.strength = opts->strength;
    cs.squash = opts->squash;
    cs.squash_joint = opts->squash_joint;
    cs.keep_feet = opts->keep_feet;
    if (!opts->parts.empty()) parse_parts(opts->parts, cs);
    nlohmann::json summary, report;
    if (is_csv(opts->in.path)) {
      if (!is_csv(opts->out))
        throw Error(ErrorCode::invalid_settings, "--output", "point-track CSV input needs a .csv output");
      if (opts->keep_feet || opts->squash > 0)
        throw Error(ErrorCode::invalid_settings, "--keep-feet/--squash", "need a skeleton (BVH input)");
      const LengthUnit unit = opts->in.unit.empty() ? LengthUnit::metre : parse_unit_option(opts->in.unit, "--unit");
      io::PointTracks t = io::read_points_csv(opts->in.path, unit);
      cs.filter.sigma_frames = parse_sigma(opts->sigma, t.frame_rate);
      t.positions = cartoon::cartoon_points(t.positions, t.frame_count, t.names, t.frame_rate, cs);
      io::write_points_csv(opts->out, t, unit);
      summary = report = cartoon::cartoon_points_summary(t.frame_count, static_cast<int>(t.names.size()), cs);
    } else {
      if (is_csv(opts->out))
        throw Error(ErrorCode::invalid_settings, "--output", "motion input writes BVH; use `koma positions` for CSV");
      const io::ReadResult in = read_input(opts->in);
      cs.filter.sigma_frames = parse_sigma(opts->sigma, in.motion.frame_rate);
      const cartoon::CartoonResult r = cartoon::cartoon_motion(in.motion, cs);
      summary = cartoon::cartoon_summary(r, cs);
      report = cartoon::cartoon_report(r, cs);
      io::write_motion(opts->out, r.motion);
      if (opts->squash > 0 && !io::is_gltf_file(opts->out)) {
        // BVH has no scale channel: the squash is only in the report. Said, not dropped silently.
        fmt::print(stderr, "koma: warning: --squash {:g} makes per-joint scale, which {} cannot store (BVH has no "
                           "scale channels); it is only in the report. Write .glb or .gltf to keep it, e.g. -o {}\n",
                   opts->squash, opts->out, std::filesystem::path(opts->out).replace_extension(".glb").string());
      }
    }
    for (nlohmann::json* doc : {&summary, &report}) {
      (*doc)["input"] = opts->in.path;
      (*doc)["output"] = opts->out;
    }
    if (!opts->report.empty()) write_file_atomic(opts->report, report.dump(2) + "\n");
    if (opts->json) {
      print_json(summary);
      return;
    }
    fmt::print("wrote {}  (strength {:g}, sigma {})\n", opts->out, opts->strength, opts->sigma);
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
