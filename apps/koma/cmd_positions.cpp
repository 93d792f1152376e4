#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/csv.hpp"

namespace koma::cli {

void add_positions_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string out, fps, unit_out;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("positions", "Write the world position of every joint and end site per frame (CSV)");
  cmd->footer(
      "Columns: frame,time,<joint>.x,<joint>.y,<joint>.z,... (time in seconds; positions in the\n"
      "file's unit unless --out-unit says otherwise; end sites are named <joint>_end).\n"
      "Example:\n"
      "  koma positions walk.bvh -o walk_points.csv --fps 24");
  cmd->add_option("input", opts->in.path, "Input motion file")->required();
  cmd->add_option("-o,--output", opts->out, "Output CSV file")->required();
  cmd->add_option("--fps", opts->fps, "Frame rate of the rows, or 'source' (default: source)");
  cmd->add_option("--out-unit", opts->unit_out, "Length unit of the positions (default: the input's)");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    io::ReadResult r = read_input(opts->in);
    Motion m = std::move(r.motion);
    if (!opts->fps.empty()) m = resample(m, parse_fps_option(opts->fps, m.frame_rate, "--fps"));
    const LengthUnit unit = opts->unit_out.empty() ? m.source_unit : parse_unit_option(opts->unit_out, "--out-unit");
    io::write_points_csv(opts->out, io::point_tracks(m, forward_kinematics(m)), unit);
    fmt::print("wrote {} ({} frames x {} points, {})\n", opts->out, m.frame_count, m.skeleton.point_count(),
               to_string(unit));
  });
}

}  // namespace koma::cli
