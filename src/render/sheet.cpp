#include "koma/render/sheet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "canvas.hpp"
#include "koma/core/error.hpp"

namespace koma::render {

using detail::Align;
using detail::set_colour;
using detail::draw_text;

std::vector<int> hold_lengths(std::span<const int> kept, int frame_count) {
  check_kept_frames(kept, frame_count, "kept frames");
  std::vector<int> h(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    h[i] = (i + 1 < kept.size() ? kept[i + 1] : frame_count) - kept[i];
  }
  return h;
}

WorldPoses hold_poses(const WorldPoses& poses, std::span<const int> kept) {
  const std::vector<int> d = drawing_numbers(kept, poses.frame_count);
  WorldPoses out = poses;
  for (int f = 0; f < poses.frame_count; ++f) {
    const int src = kept[d[f] - 1];
    std::copy_n(poses.positions.begin() + static_cast<std::ptrdiff_t>(src) * poses.point_count, poses.point_count,
                out.positions.begin() + static_cast<std::ptrdiff_t>(f) * poses.point_count);
    std::copy_n(poses.rotations.begin() + static_cast<std::ptrdiff_t>(src) * poses.joint_count, poses.joint_count,
                out.rotations.begin() + static_cast<std::ptrdiff_t>(f) * poses.joint_count);
  }
  return out;
}

WorldPoses hold_layers(const Motion& motion, std::span<const int> joint_layer,
                       const std::vector<std::vector<int>>& layer_keys) {
  const int J = motion.joint_count();
  if (static_cast<int>(joint_layer.size()) != J) {
    throw Error(ErrorCode::mismatch, "joint_layer", fmt::format("{} entries for {} joints", joint_layer.size(), J));
  }
  std::vector<std::vector<int>> shown;  // per layer: the key frame shown on each frame
  for (size_t l = 0; l < layer_keys.size(); ++l) {
    const std::vector<int> d = drawing_numbers(layer_keys[l], motion.frame_count);
    std::vector<int> src(d.size());
    for (size_t f = 0; f < d.size(); ++f) src[f] = layer_keys[l][static_cast<size_t>(d[f] - 1)];
    shown.push_back(std::move(src));
  }
  for (int l : joint_layer) {
    if (l < 0 || l >= static_cast<int>(layer_keys.size())) {
      throw Error(ErrorCode::mismatch, "joint_layer", fmt::format("layer {} of {} layers", l, layer_keys.size()));
    }
  }
  Motion held = motion;
  for (int f = 0; f < motion.frame_count; ++f) {
    for (int j = 0; j < J; ++j) {
      const int src = shown[static_cast<size_t>(joint_layer[static_cast<size_t>(j)])][static_cast<size_t>(f)];
      const size_t to = static_cast<size_t>(f) * J + j, from = static_cast<size_t>(src) * J + j;
      held.rotations[to] = motion.rotations[from];
      held.translations[to] = motion.translations[from];
      if (!motion.scales.empty()) held.scales[to] = motion.scales[from];
    }
  }
  return forward_kinematics(held);
}

WorldPoses hold_last_pose(const WorldPoses& poses, int frame_count) {
  if (poses.frame_count < 1 || frame_count < poses.frame_count) {
    throw Error(ErrorCode::invalid_settings, "frame_count",
                fmt::format("{} frames cannot hold the last of {} frames", frame_count, poses.frame_count));
  }
  WorldPoses out = poses;
  out.frame_count = frame_count;
  const auto last_p = poses.positions.end() - poses.point_count;
  const auto last_r = poses.rotations.end() - poses.joint_count;
  for (int f = poses.frame_count; f < frame_count; ++f) {
    out.positions.insert(out.positions.end(), last_p, poses.positions.end());
    out.rotations.insert(out.rotations.end(), last_r, poses.rotations.end());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Contact sheet

void ContactSheetSettings::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("contact_sheet.") + field, why);
  };
  if (columns < 0 || columns > 64) bad("columns", fmt::format("{} is not in 0 .. 64", columns));
  if (cell_width < 32 || cell_width > 4096 || cell_height < 32 || cell_height > 4096) {
    bad("cell size", fmt::format("{}x{} is not in 32 .. 4096 pixels", cell_width, cell_height));
  }
  if (!(frame_rate > 0 && std::isfinite(frame_rate))) bad("frame_rate", "must be > 0");
  style.validate();
}

SheetLayout contact_sheet_layout(int keys, const ContactSheetSettings& s) {
  s.validate();
  if (keys < 1) throw Error(ErrorCode::bad_data, "contact sheet", "no key poses to show");
  SheetLayout l;
  l.cell_width = s.cell_width;
  l.cell_height = s.cell_height;
  l.gap = 8;
  if (s.columns > 0) {
    l.columns = std::min(s.columns, keys);
  } else {
    // About 16:9 overall, at most 8 across.
    double best = INFINITY;
    for (int c = 1; c <= std::min(keys, 8); ++c) {
      const int r = (keys + c - 1) / c;
      const double aspect = (c * (s.cell_width + 8.0)) / (r * (s.cell_height + 8.0));
      const double cost = std::abs(std::log(aspect / (16.0 / 9.0)));
      if (cost < best - 1e-9) best = cost, l.columns = c;
    }
  }
  l.rows = (keys + l.columns - 1) / l.columns;
  const int margin = 16;
  l.origin_x = margin;
  l.origin_y = margin + (s.title.empty() ? 0 : 40);
  l.width = 2 * margin + l.columns * l.cell_width + (l.columns - 1) * l.gap;
  l.height = l.origin_y + margin + l.rows * l.cell_height + (l.rows - 1) * l.gap;
  return l;
}

Image render_contact_sheet(const Skeleton& skeleton, const WorldPoses& poses, std::span<const int> kept,
                           const ContactSheetSettings& s, const CellPainter& painter, std::span<const Vec3> reach) {
  s.validate();
  if (poses.point_count != skeleton.point_count()) {
    throw Error(ErrorCode::mismatch, "contact sheet",
                fmt::format("poses have {} points, the skeleton {}", poses.point_count, skeleton.point_count()));
  }
  check_kept_frames(kept, poses.frame_count, "contact sheet");
  const SheetLayout l = contact_sheet_layout(static_cast<int>(kept.size()), s);
  const std::vector<int> holds = hold_lengths(kept, poses.frame_count);

  // Every key pose moved so its pelvis stands at the origin: one scale for all cells.
  const int n = poses.point_count;
  int pelvis = 0;  // the root, or the first child of a reference root
  if (is_reference_root(skeleton)) {
    for (int j = 1; j < skeleton.joint_count(); ++j) {
      if (skeleton.parents[j] == 0) {
        pelvis = j;
        break;
      }
    }
  }
  std::vector<Vec3> centred(kept.size() * static_cast<size_t>(n));
  for (size_t i = 0; i < kept.size(); ++i) {
    const Vec3 root = poses.position(kept[i], pelvis);
    for (int p = 0; p < n; ++p) {
      Vec3 q = poses.position(kept[i], p);
      q.x() -= root.x();
      q.z() -= root.z();
      centred[i * n + p] = q;
    }
  }
  const int label_h = 30;
  CameraSettings cs;
  cs.view = s.view;
  cs.width = l.cell_width;
  cs.height = l.cell_height - label_h;
  cs.margin = 0.08;
  // Frame the figure at its rest size as well, so a single crouched key is not blown up.
  std::vector<Vec3> framed;
  const size_t skip = is_reference_root(skeleton) ? 1 : 0;
  if (reach.size() % kept.size() != 0)
    throw Error(ErrorCode::mismatch, "contact sheet",
                fmt::format("{} reach points for {} kept frames", reach.size(), kept.size()));
  const size_t per = reach.size() / kept.size();
  for (size_t i = 0; i < kept.size(); ++i) {
    framed.insert(framed.end(), centred.begin() + static_cast<std::ptrdiff_t>(i * n + skip),
                  centred.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    const Vec3 root = poses.position(kept[i], pelvis);
    for (size_t k = 0; k < per; ++k) framed.push_back(reach[i * per + k] - Vec3(root.x(), 0, root.z()));
  }
  const Camera cam = fit_camera(framed, skeleton, std::span<const Vec3>(centred.data(), n), cs);

  detail::Canvas canvas = detail::make_canvas(l.width, l.height);
  cairo_t* cr = canvas.cr.get();
  const FigureStyle& st = s.style;
  set_colour(cr, detail::mix(st.background, st.outline, 0.08));
  cairo_paint(cr);
  if (!s.title.empty()) draw_text(cr, s.title, l.origin_x, 16 + 26, 22, st.outline, Align::left, true);
  const Rgba soft = detail::mix(st.background, st.outline, 0.6);
  Image cell;
  for (size_t i = 0; i < kept.size(); ++i) {
    const double x = l.cell_x(static_cast<int>(i)), y = l.cell_y(static_cast<int>(i));
    cairo_save(cr);
    cairo_translate(cr, x, y);
    detail::rounded_rect(cr, 0, 0, l.cell_width, l.cell_height, 6);
    set_colour(cr, st.background);
    cairo_fill_preserve(cr);
    cairo_clip(cr);
    if (painter) {
      const Vec3 root = poses.position(kept[i], pelvis);
      painter(static_cast<int>(i), Vec3(-root.x(), 0, -root.z()), cam, cell);
      detail::paint_image(cr, cell, 0, 0);
    } else {
      const FigureLayer layer{std::span<const Vec3>(centred.data() + i * n, static_cast<size_t>(n))};
      detail::draw_figure(cr, skeleton, std::span<const FigureLayer>(&layer, 1), cam, st, false);
    }
    // Label band.
    const double by = l.cell_height - label_h;
    set_colour(cr, detail::mix(st.background, st.outline, 0.05));
    cairo_rectangle(cr, 0, by, l.cell_width, label_h);
    cairo_fill(cr);
    const double ty = by + label_h / 2.0 + 5;
    draw_text(cr, fmt::format("#{}", i + 1), 8, ty, 14, st.outline, Align::left, true);
    draw_text(cr, fmt::format("f {}", kept[i]), l.cell_width / 2.0, ty, 13, st.outline, Align::centre);
    draw_text(cr, fmt::format("hold {}", holds[i]), l.cell_width - 8.0, ty, 13, soft, Align::right);
    cairo_restore(cr);
  }
  detail::check(cr, "contact sheet");
  return detail::to_image(canvas);
}

// ---------------------------------------------------------------------------------------------
// Exposure sheet

void ExposureSheetSettings::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("exposure_sheet.") + field, why);
  };
  if (!(frame_rate > 0 && frame_rate <= 1000)) bad("frame_rate", "must be in (0, 1000]");
  if (rows_per_column < 6 || rows_per_column > 1000) bad("rows_per_column", "must be in 6 .. 1000");
  if (row_height < 6 || row_height > 200) bad("row_height", "must be in 6 .. 200 pixels");
  if (number_from < 0 || number_from > 1) bad("number_from", "must be 0 or 1");
}

namespace {

// The geometry of an exposure sheet: blocks of rows side by side, each block a frame column, the
// drawing (cel) column and, with spacing, a chart column.
struct SheetGeometry {
  int n = 0, rows = 0, blocks = 0, rh = 0;
  double fs = 0;
  int frame_w = 0, cel_w = 0, chart_w = 0, block_w = 0, gap = 28, margin = 24, header = 0, title_h = 0;
  int W = 0, H = 0;
  double block_x(int b) const { return margin + b * (block_w + gap); }
  double top() const { return margin + title_h + header; }
  // Block and y (pixels) of a continuous frame position p: row centres at integer p.
  std::pair<int, double> at(double p) const {
    const int b = std::clamp(static_cast<int>(std::floor((p + 0.5) / rows)), 0, blocks - 1);
    return {b, top() + (p - b * rows + 0.5) * rh};
  }
};

SheetGeometry sheet_geometry(int n, const ExposureSheetSettings& s, bool charts) {
  SheetGeometry g;
  g.n = n;
  g.rows = s.rows_per_column;
  g.blocks = (n + g.rows - 1) / g.rows;
  g.rh = s.row_height;
  g.fs = std::clamp(g.rh * 0.62, 7.0, 40.0);
  g.frame_w = static_cast<int>(g.fs * 4.2);
  g.cel_w = static_cast<int>(g.fs * 5.5);
  g.chart_w = charts ? static_cast<int>(g.fs * 6.0) : 0;
  g.block_w = g.frame_w + g.cel_w + g.chart_w;
  g.header = g.rh + 8;
  g.title_h = s.title.empty() ? 0 : 44;
  g.W = 2 * g.margin + g.blocks * g.block_w + (g.blocks - 1) * g.gap;
  if (!s.title.empty()) {
    detail::Canvas probe = detail::make_canvas(1, 1);
    g.W = std::max(g.W, 2 * g.margin + static_cast<int>(std::ceil(detail::text_width(probe.cr.get(), s.title, 20, true))));
  }
  g.H = 2 * g.margin + g.title_h + g.header + std::min(g.rows, n) * g.rh;
  return g;
}

const Rgba kPaper{0.99, 0.98, 0.94, 1}, kInk{0.13, 0.13, 0.16, 1}, kRule{0.55, 0.62, 0.70, 1};
const Rgba kTint{0.93, 0.95, 0.98, 1}, kRed{0.80, 0.16, 0.18, 1};

// One block's header, shading, row and column rules and frame numbers.
void draw_sheet_block(cairo_t* cr, const SheetGeometry& g, const ExposureSheetSettings& s, int b) {
  const Rgba faint = detail::mix(kPaper, kRule, 0.35);
  const int per_sec = std::max(1, static_cast<int>(std::lround(s.frame_rate)));
  const double x0 = g.block_x(b), y0 = g.margin + g.title_h, rh = g.rh, fs = g.fs;
  const int first = b * g.rows, count = std::min(g.rows, g.n - first);
  draw_text(cr, "frame", x0 + g.frame_w / 2.0, y0 + rh * 0.8, fs * 0.9, kInk, Align::centre, true);
  draw_text(cr, s.layer_name, x0 + g.frame_w + g.cel_w / 2.0, y0 + rh * 0.8, fs, kInk, Align::centre, true);
  if (g.chart_w > 0) draw_text(cr, "chart", x0 + g.frame_w + g.cel_w + g.chart_w / 2.0, y0 + rh * 0.8, fs * 0.9, kInk, Align::centre, true);
  const double top = g.top();
  // Shade the frame-number column, then row rules (fine per frame, medium per 6, thick per second).
  set_colour(cr, kTint);
  cairo_rectangle(cr, x0, top, g.frame_w, count * rh);
  cairo_fill(cr);
  for (int r = 0; r <= count; ++r) {
    const int f = first + r;
    const double y = top + r * rh;
    const bool sec = f % per_sec == 0, six = f % 6 == 0;
    set_colour(cr, sec ? kRule : six ? detail::mix(faint, kRule, 0.5) : faint);
    cairo_set_line_width(cr, sec ? 2.0 : six ? 1.2 : 0.6);
    cairo_move_to(cr, x0, y);
    cairo_line_to(cr, x0 + g.block_w, y);
    cairo_stroke(cr);
  }
  // Column rules.
  set_colour(cr, kRule);
  cairo_set_line_width(cr, 1.2);
  std::vector<double> xs{x0, x0 + g.frame_w, x0 + g.frame_w + g.cel_w};
  if (g.chart_w > 0) xs.push_back(x0 + g.block_w);
  for (double x : xs) {
    cairo_move_to(cr, x, top);
    cairo_line_to(cr, x, top + count * rh);
  }
  cairo_stroke(cr);
  // Frame numbers; the first frame of each second in red with its second count.
  for (int r = 0; r < count; ++r) {
    const int f = first + r;
    const double ty = top + r * rh + rh * 0.5 + fs * 0.36;
    const bool sec = f % per_sec == 0;
    draw_text(cr, std::to_string(f + s.number_from), x0 + g.frame_w - 6, ty, fs * 0.85, sec ? kRed : kInk, Align::right, sec);
  }
}

// Drawings: the number where one starts (a key circled), a hold line while it is held.
void draw_sheet_drawings(cairo_t* cr, const SheetGeometry& g, std::span<const int> drawing, std::span<const int> keys) {
  const double rh = g.rh, fs = g.fs;
  for (int f = 0; f < g.n; ++f) {
    const int b = f / g.rows, r = f % g.rows;
    const double cx = g.block_x(b) + g.frame_w + g.cel_w / 2.0, ry = g.top() + r * rh;
    const bool starts = f == 0 || drawing[f] != drawing[f - 1] || r == 0;
    if (!starts) {
      set_colour(cr, kInk);
      cairo_set_line_width(cr, std::max(1.2, rh * 0.1));
      cairo_move_to(cr, cx, ry + 1);
      cairo_line_to(cr, cx, ry + rh);
      cairo_stroke(cr);
      continue;
    }
    const bool continued = f > 0 && drawing[f] == drawing[f - 1];  // column break inside a hold
    draw_text(cr, continued ? fmt::format("({})", drawing[f]) : std::to_string(drawing[f]), cx,
              ry + rh * 0.5 + fs * 0.38, fs, kInk, Align::centre, !continued);
    if (!continued && std::binary_search(keys.begin(), keys.end(), drawing[f])) {
      set_colour(cr, kRed);
      cairo_set_line_width(cr, std::max(1.0, rh * 0.09));
      cairo_new_sub_path(cr);
      cairo_arc(cr, cx, ry + rh * 0.5, rh * 0.46, 0, 2 * M_PI);
      cairo_stroke(cr);
    }
  }
}

// Each gap's timing chart in the chart column: a ruler from its key's row to the next key's, a
// tick per inbetween at its share of the way (labelled with its drawing number), keys as dots.
void draw_sheet_charts(cairo_t* cr, const SheetGeometry& g, std::span<const SheetChart> charts) {
  const double fs = g.fs;
  set_colour(cr, kInk);
  for (const SheetChart& c : charts) {
    const double len = c.end - c.start;
    // The ruler, one piece per block it crosses (rows of block b span positions b * rows - 0.5 ..).
    for (int b = g.at(c.start).first; b <= g.at(c.end).first; ++b) {
      const double p0 = std::max<double>(c.start, b * g.rows - 0.5), p1 = std::min<double>(c.end, (b + 1) * g.rows - 0.5);
      const double x = g.block_x(b) + g.frame_w + g.cel_w + g.chart_w * 0.3;
      cairo_set_line_width(cr, 1.4);
      cairo_move_to(cr, x, g.top() + (p0 - b * g.rows + 0.5) * g.rh);
      cairo_line_to(cr, x, g.top() + (p1 - b * g.rows + 0.5) * g.rh);
      cairo_stroke(cr);
    }
    // The keys at both ends, circled as on the drawing column (red, over the ruler).
    for (double p : {static_cast<double>(c.start), static_cast<double>(c.end)}) {
      const auto [b, y] = g.at(p);
      cairo_new_sub_path(cr);
      cairo_arc(cr, g.block_x(b) + g.frame_w + g.cel_w + g.chart_w * 0.3, y, std::max(2.5, fs * 0.3), 0, 2 * M_PI);
      set_colour(cr, kPaper);
      cairo_fill_preserve(cr);
      set_colour(cr, kRed);
      cairo_set_line_width(cr, std::max(1.0, g.rh * 0.09));
      cairo_stroke(cr);
      set_colour(cr, kInk);
    }
    for (size_t i = 0; i < c.ticks.size(); ++i) {
      const auto [b, y] = g.at(c.start + c.ticks[i] * len);
      const double x = g.block_x(b) + g.frame_w + g.cel_w + g.chart_w * 0.3;
      cairo_set_line_width(cr, 1.2);
      cairo_move_to(cr, x - fs * 0.55, y);
      cairo_line_to(cr, x + fs * 0.55, y);
      cairo_stroke(cr);
      if (i < c.drawings.size()) {
        draw_text(cr, std::to_string(c.drawings[i]), x + fs * 0.8, y + fs * 0.3, fs * 0.72, kInk, Align::left);
      }
    }
  }
}

void check_sheet_spacing(const SheetSpacing& sp, int n) {
  for (const SheetChart& c : sp.charts) {
    if (c.start < 0 || c.end >= n || c.end <= c.start) {
      throw Error(ErrorCode::bad_data, fmt::format("exposure sheet chart {}-{}", c.start, c.end),
                  fmt::format("a chart runs from a key to a later one within frames 0 .. {}", n - 1));
    }
    for (double t : c.ticks) {
      if (!(t >= 0 && t <= 1)) {
        throw Error(ErrorCode::bad_data, fmt::format("exposure sheet chart {}-{}", c.start, c.end),
                    fmt::format("tick {} is outside [0, 1]", t));
      }
    }
  }
}

}  // namespace

Image render_exposure_sheet(std::span<const int> drawing, const ExposureSheetSettings& s) {
  return render_exposure_sheet(drawing, s, SheetSpacing{});
}

Image render_exposure_sheet(std::span<const int> drawing, const ExposureSheetSettings& s, const SheetSpacing& spacing) {
  s.validate();
  if (drawing.empty()) throw Error(ErrorCode::bad_data, "exposure sheet", "no frames");
  for (size_t f = 0; f < drawing.size(); ++f) {
    if (drawing[f] < 1) {
      throw Error(ErrorCode::bad_data, fmt::format("exposure sheet frame {}", f),
                  fmt::format("drawing number {} is not >= 1", drawing[f]));
    }
  }
  const int n = static_cast<int>(drawing.size());
  check_sheet_spacing(spacing, n);
  std::vector<int> keys = spacing.key_drawings;
  std::sort(keys.begin(), keys.end());
  const SheetGeometry g = sheet_geometry(n, s, !spacing.charts.empty());
  detail::Canvas canvas = detail::make_canvas(g.W, g.H);
  cairo_t* cr = canvas.cr.get();
  set_colour(cr, kPaper);
  cairo_paint(cr);
  if (!s.title.empty()) draw_text(cr, s.title, g.margin, g.margin + 24, 20, kInk, Align::left, true);
  for (int b = 0; b < g.blocks; ++b) draw_sheet_block(cr, g, s, b);
  draw_sheet_drawings(cr, g, drawing, keys);
  draw_sheet_charts(cr, g, spacing.charts);
  detail::check(cr, "exposure sheet");
  return detail::to_image(canvas);
}

}  // namespace koma::render
