#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "convert_options.hpp"
#include "koma/core/error.hpp"

namespace koma::cli {

void add_convert_options(CLI::App& cmd, ConvertOptions& o) {
  cmd.add_option("--fps", o.fps, "Output frame rate, or 'source' (default: source)");
  cmd.add_option("--out-unit", o.unit_out, "Length unit to write (default: the input's)");
  cmd.add_option("--range", o.range, "Input frames A:B to keep (B excluded; negative counts from the end)");
  add_input_options(cmd, o.in);
  add_output_options(cmd, o.out);
}

batch::ConvertJob convert_job(const ConvertOptions& o) {
  batch::ConvertJob job;
  job.read = read_options(o.in);
  job.write = write_options(o.out);
  if (!o.range.empty()) job.range = batch::parse_frame_range(o.range);
  // 'source' (the input's rate) is the pipeline's 0: no resampling.
  if (!o.fps.empty()) job.output_rate = parse_fps_option(o.fps, 0.0, "--fps");
  if (!o.unit_out.empty()) job.write.unit = parse_unit_option(o.unit_out, "--out-unit");
  return job;
}

nlohmann::json convert_options_json(const ConvertOptions& o) {
  return {{"fps", o.fps}, {"out_unit", o.unit_out}, {"range", o.range}, {"unit", o.in.unit}, {"animation", o.in.animation}};
}

void add_convert_command(CLI::App& app) {
  struct Opts {
    ConvertOptions c;  // shared with `koma batch convert` (convert_options.hpp)
    std::string out;
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
  cmd->add_option("input", opts->c.in.path, "Input motion file")->required();
  cmd->add_option("output", opts->out, "Output motion file (format from its extension)")->required();
  add_convert_options(*cmd, opts->c);
  cmd->callback([opts] {
    batch::ConvertJob job = convert_job(opts->c);
    job.on_warning = print_warning;
    // The pipeline of `koma batch convert` too.
    const batch::ConvertFileResult r = batch::run_convert_file(opts->c.in.path, opts->out, job);
    fmt::print("wrote {} ({} frames at {:g} fps)\n", opts->out, r.frames, r.frame_rate);
  });
}

}  // namespace koma::cli
