// Point tracks as CSV: world positions of every joint and end site per frame.
//
// Columns: frame,time,<point>.x,<point>.y,<point>.z,... with time in seconds and positions in the
// chosen length unit. This is what `koma positions` writes and what point-track inputs read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "koma/core/fk.hpp"
#include "koma/core/units.hpp"

namespace koma::io {

/// Point tracks: names and positions [frames x points] in metres at a fixed rate.
struct PointTracks {
  std::vector<std::string> names;
  double frame_rate = 30.0;
  int frame_count = 0;
  std::vector<Vec3> positions;  ///< frame_count * names.size(), metres
  LengthUnit source_unit = LengthUnit::metre;
};

/// The world positions of a motion as point tracks (joints, then end sites).
PointTracks point_tracks(const Motion& motion, const WorldPoses& poses);

/// CSV text of point tracks in `unit` (9 significant digits).
std::string format_points_csv(const PointTracks& tracks, LengthUnit unit);
/// Writes format_points_csv() atomically.
void write_points_csv(const std::filesystem::path& path, const PointTracks& tracks, LengthUnit unit);

/// Parses a points CSV (the columns above; `unit` is the unit of its values). Throws
/// Error(bad_file) with name:line on a malformed header, row or value, and when the times are not
/// evenly spaced.
PointTracks parse_points_csv(std::string_view text, std::string_view name, LengthUnit unit);
/// Reads a points CSV file.
PointTracks read_points_csv(const std::filesystem::path& path, LengthUnit unit);

}  // namespace koma::io
