#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"

namespace koma::cli {

namespace {
// "A:B" with B exclusive; either side may be empty ("100:", ":50"); negative counts from the end.
std::pair<int, int> parse_range(const std::string& text, int frames) {
  const auto colon = text.find(':');
  auto bad = [&] {
    throw Error(ErrorCode::invalid_settings, "--range",
                fmt::format("'{}' is not a frame range; expected A:B (frames A up to B, B excluded), e.g. 0:120", text));
  };
  if (colon == std::string::npos) bad();
  auto number = [&](const std::string& s, int fallback) {
    if (s.empty()) return fallback;
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      bad();
    }
    if (used != s.size()) bad();
    return v < 0 ? frames + v : v;
  };
  return {number(text.substr(0, colon), 0), number(text.substr(colon + 1), frames)};
}
}  // namespace

void add_convert_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string out, fps, unit_out, range;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("convert", "Convert a motion: other format, frame rate, unit or frame range");
  cmd->footer(
      "Examples:\n"
      "  koma convert mocap_120fps.bvh clip_24fps.bvh --fps 24\n"
      "  koma convert in.bvh out.bvh --unit m           # rewrite lengths in metres\n"
      "  koma convert in.bvh part.bvh --range 100:340   # frames 100..339 of the input\n"
      "  koma convert walk.bvh walk.glb                 # glTF 2.0 (Y-up metres), skeleton as nodes\n"
      "  koma convert Fox.glb run.bvh --animation Run   # one animation of a glTF to BVH\n"
      "The range is cut first (in input frames), then the rate converted.");
  cmd->add_option("input", opts->in.path, "Input motion file")->required();
  cmd->add_option("output", opts->out, "Output motion file (format from its extension)")->required();
  cmd->add_option("--fps", opts->fps, "Output frame rate, or 'source' (default: source)");
  cmd->add_option("--out-unit", opts->unit_out, "Length unit to write (default: the input's)");
  cmd->add_option("--range", opts->range, "Input frames A:B to keep (B excluded; negative counts from the end)");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    io::ReadResult r = read_input(opts->in);
    Motion m = std::move(r.motion);
    if (!opts->range.empty()) {
      const auto [a, b] = parse_range(opts->range, m.frame_count);
      m = cut(m, a, b);
    }
    if (!opts->fps.empty()) m = resample(m, parse_fps_option(opts->fps, m.frame_rate, "--fps"));
    io::WriteOptions wo;
    wo.gltf_scene = r.gltf_scene;  // glTF -> glTF keeps the character's mesh and skin
    if (!opts->unit_out.empty()) wo.unit = parse_unit_option(opts->unit_out, "--out-unit");
    io::write_motion(opts->out, m, wo);
    fmt::print("wrote {} ({} frames at {:g} fps)\n", opts->out, m.frame_count, m.frame_rate);
  });
}

}  // namespace koma::cli
