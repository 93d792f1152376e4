#include "koma/io/csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::io {

PointTracks point_tracks(const Motion& motion, const WorldPoses& poses) {
  PointTracks t;
  for (int p = 0; p < motion.skeleton.point_count(); ++p) t.names.push_back(motion.skeleton.point_name(p));
  t.frame_rate = motion.frame_rate;
  t.frame_count = motion.frame_count;
  t.positions = poses.positions;
  t.source_unit = motion.source_unit;
  return t;
}

std::string format_points_csv(const PointTracks& tracks, LengthUnit unit) {
  const double inv = 1.0 / metres_per_unit(unit);
  std::string out = "frame,time";
  for (const auto& n : tracks.names) out += fmt::format(",{0}.x,{0}.y,{0}.z", n);
  out += '\n';
  const size_t points = tracks.names.size();
  for (int f = 0; f < tracks.frame_count; ++f) {
    out += fmt::format("{},{:.9g}", f, f / tracks.frame_rate);
    for (size_t p = 0; p < points; ++p) {
      const Vec3 v = tracks.positions[static_cast<size_t>(f) * points + p] * inv;
      out += fmt::format(",{:.9g},{:.9g},{:.9g}", v.x(), v.y(), v.z());
    }
    out += '\n';
  }
  return out;
}

void write_points_csv(const std::filesystem::path& path, const PointTracks& tracks, LengthUnit unit) {
  write_file_atomic(path, format_points_csv(tracks, unit));
}

namespace {
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t c = line.find(',', start);
    out.push_back(line.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  return out;
}
}  // namespace

PointTracks parse_points_csv(std::string_view text, std::string_view name, LengthUnit unit) {
  const double scale = metres_per_unit(unit);
  PointTracks t;
  t.source_unit = unit;
  int line_no = 0;
  size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!line.empty()) return true;
    }
    return false;
  };
  auto fail = [&](const std::string& msg) {
    throw Error(ErrorCode::bad_file, fmt::format("{}:{}", name, line_no), msg);
  };
  std::string_view line;
  if (!next_line(line)) fail("the file is empty; expected a header 'frame,time,<point>.x,<point>.y,<point>.z,...'");
  const auto header = split(line);
  if (header.size() < 5 || header[0] != "frame" || header[1] != "time" || (header.size() - 2) % 3 != 0) {
    fail("expected the header 'frame,time,<point>.x,<point>.y,<point>.z,...'");
  }
  for (size_t i = 2; i < header.size(); i += 3) {
    const std::string_view h = header[i];
    if (h.size() < 3 || !h.ends_with(".x")) fail(fmt::format("column {} '{}' should end in .x", i + 1, h));
    const std::string_view base = h.substr(0, h.size() - 2);
    if (header[i + 1] != fmt::format("{}.y", base) || header[i + 2] != fmt::format("{}.z", base)) {
      fail(fmt::format("columns {}-{} should be {}.x,{}.y,{}.z", i + 1, i + 3, base, base, base));
    }
    t.names.emplace_back(base);
  }
  std::vector<double> times;
  while (next_line(line)) {
    const auto cells = split(line);
    if (cells.size() != header.size()) {
      fail(fmt::format("row has {} values; the header has {} columns", cells.size(), header.size()));
    }
    double v[3];
    double time = 0;
    for (size_t i = 1; i < cells.size(); ++i) {
      double x = 0;
      const auto [ptr, ec] = std::from_chars(cells[i].data(), cells[i].data() + cells[i].size(), x);
      if (ec != std::errc() || ptr != cells[i].data() + cells[i].size() || !std::isfinite(x)) {
        fail(fmt::format("column {} ('{}'): '{}' is not a finite number", i + 1, header[i], cells[i]));
      }
      if (i == 1) {
        time = x;
      } else {
        v[(i - 2) % 3] = x * scale;
        if ((i - 2) % 3 == 2) t.positions.emplace_back(v[0], v[1], v[2]);
      }
    }
    times.push_back(time);
  }
  t.frame_count = static_cast<int>(times.size());
  if (t.frame_count == 0) fail("the file has a header but no rows");
  if (t.frame_count == 1) {
    t.frame_rate = 24.0;
  } else {
    const double dt = (times.back() - times.front()) / (t.frame_count - 1);
    if (!(dt > 0)) fail("the time column must increase");
    for (int i = 1; i < t.frame_count; ++i) {
      if (std::abs(times[i] - times[i - 1] - dt) > 1e-3 * dt + 1e-6) {
        throw Error(ErrorCode::bad_file, fmt::format("{}: row {}", name, i + 2),
                    fmt::format("times are not evenly spaced (step {} vs {}); koma needs a fixed frame rate",
                                times[i] - times[i - 1], dt));
      }
    }
    t.frame_rate = 1.0 / dt;
    if (std::abs(t.frame_rate - std::round(t.frame_rate)) <= 1e-4 * t.frame_rate) t.frame_rate = std::round(t.frame_rate);
  }
  return t;
}

PointTracks read_points_csv(const std::filesystem::path& path, LengthUnit unit) {
  return parse_points_csv(read_file(path), path.string(), unit);
}

}  // namespace koma::io
