#include "koma/render/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "canvas.hpp"
#include "koma/core/error.hpp"
#include "koma/render/sheet.hpp"

namespace koma::render {

using detail::Align;
using detail::set_colour;
using detail::draw_text;

namespace {

void check_clip(const Clip& c, const char* which) {
  if (c.poses.frame_count < 1) throw Error(ErrorCode::bad_data, which, "the clip has no frames");
  if (c.poses.point_count != c.skeleton.point_count() ||
      c.poses.positions.size() != static_cast<size_t>(c.poses.frame_count) * c.poses.point_count) {
    throw Error(ErrorCode::mismatch, which,
                fmt::format("poses have {} points per frame, the skeleton {}", c.poses.point_count,
                            c.skeleton.point_count()));
  }
}

}  // namespace

void Comparison::validate() const {
  if (!(frame_rate > 0 && std::isfinite(frame_rate))) {
    throw Error(ErrorCode::bad_data, "comparison", fmt::format("frame rate {} is not > 0", frame_rate));
  }
  check_clip(result, "result");
  if (original) {
    check_clip(*original, "original");
    if (original->poses.frame_count != result.poses.frame_count) {
      throw Error(ErrorCode::mismatch, "comparison",
                  fmt::format("the original has {} frames at {:g} fps, the result {}; resample both to the "
                              "output rate first",
                              original->poses.frame_count, frame_rate, result.poses.frame_count));
    }
  }
  if (!kept_frames.empty()) check_kept_frames(kept_frames, result.poses.frame_count, "kept frames");
  if (reach_per_frame < 0 || reach.size() != static_cast<size_t>(reach_per_frame) * result.poses.frame_count)
    throw Error(ErrorCode::mismatch, "comparison",
                fmt::format("{} reach points for {} frames of {}", reach.size(), result.poses.frame_count,
                            reach_per_frame));
}

void CompareSettings::validate() const {
  if (onion_skin < 0 || onion_skin > 8) {
    throw Error(ErrorCode::invalid_settings, "compare.onion_skin", fmt::format("{} is not in 0 .. 8", onion_skin));
  }
}

ComparisonFraming frame_comparison(const Comparison& cmp, const CameraSettings& camera,
                                   const CompareSettings& settings) {
  cmp.validate();
  settings.validate();
  camera.validate();
  CameraSettings panel = camera;
  const bool split = cmp.original && settings.layout == CompareLayout::side_by_side;
  if (split) panel.width = std::max(1, camera.width / 2);
  // Leave room for the timeline strip and captions.
  std::vector<Vec3> all = body_points(cmp.result.skeleton, cmp.result.poses);
  all.insert(all.end(), cmp.reach.begin(), cmp.reach.end());
  if (cmp.original) {
    const std::vector<Vec3> o = body_points(cmp.original->skeleton, cmp.original->poses);
    all.insert(all.end(), o.begin(), o.end());
  }
  ComparisonFraming f;
  f.result = fit_camera(all, cmp.result.skeleton, cmp.result.poses.frame_positions(0), panel);
  const double k = camera.height / 720.0;
  const double strip = settings.timeline ? 44 * k : 0;
  const double caption = 56 * k;
  // Shrink about the centre so the figure clears the captions above and the strip below.
  const double avail = camera.height - strip - caption;
  if (avail > camera.height * 0.3) {
    const double s = avail / camera.height;
    Camera& c = f.result;
    const double cx = c.width / 2.0, cy = c.height / 2.0;
    c.offset_x = cx + (c.offset_x - cx) * s;
    c.offset_y = caption + avail / 2 + (c.offset_y - cy) * s;
    c.scale *= s;
  }
  f.original = f.result;
  if (!camera.follow || f.result.perspective) return f;

  // Follow framing: per-frame screen boxes of the union of the clips under the whole-motion camera.
  const Camera& w = f.result;
  const int n = cmp.frame_count();
  std::vector<double> x0(n, INFINITY), x1(n, -INFINITY), y0(n, INFINITY), y1(n, -INFINITY);
  auto grow = [&](int fr, const Vec3& q) {
    const Vec3 s = w.project(q);
    x0[fr] = std::min(x0[fr], s.x()), x1[fr] = std::max(x1[fr], s.x());
    y0[fr] = std::min(y0[fr], s.y()), y1[fr] = std::max(y1[fr], s.y());
  };
  auto add = [&](const Clip& clip) {
    const size_t skip = is_reference_root(clip.skeleton) ? 1 : 0;
    for (int fr = 0; fr < n; ++fr)
      for (const Vec3& q : clip.poses.frame_positions(fr).subspan(skip)) grow(fr, q);
  };
  add(cmp.result);
  if (cmp.original) add(*cmp.original);
  for (int fr = 0; fr < n && cmp.reach_per_frame > 0; ++fr)
    for (int i = 0; i < cmp.reach_per_frame; ++i) grow(fr, cmp.reach[static_cast<size_t>(fr) * cmp.reach_per_frame + i]);
  const bool pan_y = w.view == CameraView::top;
  double ext_w = 0, ext_h = 0;
  for (int fr = 0; fr < n; ++fr) ext_w = std::max(ext_w, x1[fr] - x0[fr]), ext_h = std::max(ext_h, y1[fr] - y0[fr]);
  const double X0 = *std::min_element(x0.begin(), x0.end()), X1 = *std::max_element(x1.begin(), x1.end());
  const double Y0 = *std::min_element(y0.begin(), y0.end()), Y1 = *std::max_element(y1.begin(), y1.end());
  const bool travels = (X1 - X0) > 1.5 * std::max(ext_w, 1.0) || (pan_y && (Y1 - Y0) > 1.5 * std::max(ext_h, 1.0));
  if (!travels) return f;
  const double m = camera.margin * std::min(panel.width, panel.height);
  const double avail_w = panel.width - 2 * m, avail_h = camera.height - strip - caption - 2 * m;
  if (avail_w <= 0 || avail_h <= 0) return f;
  double z = avail_w / (1.3 * std::max(ext_w, 1.0));
  z = std::min(z, pan_y ? avail_h / (1.3 * std::max(ext_h, 1.0)) : avail_h / std::max(Y1 - Y0, 1.0));
  z = std::max(z, 1.0);
  // Smoothed centres: a moving average over about 1.2 s, then clamped so the figure stays in view.
  const int half = std::max(1, static_cast<int>(std::lround(0.6 * cmp.frame_rate)));
  auto smooth = [&](const std::vector<double>& lo, const std::vector<double>& hi, double half_view) {
    std::vector<double> c(n);
    for (int fr = 0; fr < n; ++fr) {
      double sum = 0;
      int cnt = 0;
      for (int j = std::max(0, fr - half); j <= std::min(n - 1, fr + half); ++j) sum += (lo[j] + hi[j]) / 2, ++cnt;
      c[fr] = std::clamp(sum / cnt, hi[fr] - half_view, lo[fr] + half_view);
    }
    return c;
  };
  const std::vector<double> cx = smooth(x0, x1, (panel.width / 2.0 - m) / z);
  const std::vector<double> cy = pan_y ? smooth(y0, y1, (avail_h / 2.0) / z) : std::vector<double>{};
  const double slack = avail_h - z * (Y1 - Y0);
  const double bottom = camera.height - strip - m - std::max(0.0, slack) * 0.25;
  f.per_frame.resize(n, w);
  for (int fr = 0; fr < n; ++fr) {
    Camera& c = f.per_frame[fr];
    c.scale = w.scale * z;
    c.offset_x = panel.width / 2.0 + z * (w.offset_x - cx[fr]);
    c.offset_y = pan_y ? caption + m + avail_h / 2.0 + z * (w.offset_y - cy[fr]) : bottom - z * (Y1 - w.offset_y);
  }
  // A stepped follow: the camera moves only where a new drawing starts, so holds stay still.
  if (!cmp.kept_frames.empty()) {
    const std::vector<int> drawing = drawing_numbers(cmp.kept_frames, n);
    for (int fr = 0; fr < n; ++fr) f.per_frame[fr] = f.per_frame[cmp.kept_frames[drawing[fr] - 1]];
  }
  return f;
}

namespace {

// The timeline strip: one tick per output frame, kept frames as accent bars, the current frame
// boxed; drawn across the whole width at the bottom.
void draw_timeline(cairo_t* cr, const Comparison& cmp, int frame, double W, double H, double k,
                   const FigureStyle& st, const CompareSettings& cs) {
  const int n = cmp.frame_count();
  const double h = 44 * k, y0 = H - h, pad = 16 * k;
  set_colour(cr, detail::mix(st.background, st.outline, 0.06));
  cairo_rectangle(cr, 0, y0, W, h);
  cairo_fill(cr);
  const double x0 = pad, x1 = W - pad;
  const double step = n > 1 ? (x1 - x0) / (n - 1) : 0;
  auto fx = [&](int f) { return n > 1 ? x0 + step * f : (x0 + x1) / 2; };
  const double mid = y0 + h * 0.55;
  // Baseline and per-frame ticks (every frame while they are at least 3 px apart).
  set_colour(cr, detail::mix(st.background, st.outline, 0.35));
  cairo_set_line_width(cr, 1.0 * k);
  cairo_move_to(cr, x0, mid);
  cairo_line_to(cr, x1, mid);
  cairo_stroke(cr);
  const int every = step >= 3 ? 1 : static_cast<int>(std::ceil(3 / std::max(step, 1e-9)));
  for (int f = 0; f < n; f += every) {
    cairo_move_to(cr, fx(f), mid - 3 * k);
    cairo_line_to(cr, fx(f), mid + 3 * k);
  }
  cairo_stroke(cr);
  // Seconds labels.
  const int per_sec = std::max(1, static_cast<int>(std::lround(cmp.frame_rate)));
  for (int f = 0; f < n; f += per_sec) {
    draw_text(cr, fmt::format("{}s", f / per_sec), fx(f), y0 + 12 * k, 10 * k, detail::mix(st.background, st.outline, 0.6),
              Align::centre);
  }
  // Kept frames.
  set_colour(cr, cs.accent);
  for (int kf : cmp.kept_frames) {
    const double bw = std::max(2.0 * k, std::min(step * 0.6, 6 * k));
    cairo_rectangle(cr, fx(kf) - bw / 2, mid - 8 * k, bw, 16 * k);
  }
  cairo_fill(cr);
  // Playhead.
  set_colour(cr, st.outline);
  cairo_set_line_width(cr, 2 * k);
  cairo_move_to(cr, fx(frame), y0 + 4 * k);
  cairo_line_to(cr, fx(frame), y0 + h - 4 * k);
  cairo_stroke(cr);
}

void draw_badge(cairo_t* cr, const Comparison& cmp, const std::vector<int>& drawing, int frame, double x, double y,
                double k, const FigureStyle& st, const CompareSettings& cs) {
  const bool is_new = std::binary_search(cmp.kept_frames.begin(), cmp.kept_frames.end(), frame);
  const int d = drawing[frame];
  const int start = cmp.kept_frames[d - 1];
  const int end = d < static_cast<int>(cmp.kept_frames.size()) ? cmp.kept_frames[d] : cmp.frame_count();
  const std::string text = is_new ? fmt::format("NEW  #{}", d)
                                  : fmt::format("HOLD  #{}  {}/{}", d, frame - start + 1, end - start);
  const double size = 18 * k;
  const double w = detail::text_width(cr, text, size, true) + 24 * k, h = 30 * k;
  detail::rounded_rect(cr, x, y, w, h, h / 2);
  if (is_new) {
    set_colour(cr, cs.accent);
    cairo_fill(cr);
    draw_text(cr, text, x + w / 2, y + h / 2 + size * 0.36, size, {1, 1, 1, 1}, Align::centre, true);
  } else {
    set_colour(cr, st.background);
    cairo_fill_preserve(cr);
    set_colour(cr, detail::mix(st.background, st.outline, 0.45));
    cairo_set_line_width(cr, 1.5 * k);
    cairo_stroke(cr);
    draw_text(cr, text, x + w / 2, y + h / 2 + size * 0.36, size, detail::mix(st.background, st.outline, 0.65), Align::centre,
              true);
  }
}

}  // namespace

namespace {

// The stick figures of both panels: onion skins of the previous drawings first, then the figure.
void draw_stick_panels(cairo_t* cr, const Comparison& cmp, const std::vector<int>& drawing, int frame,
                       const Camera& cam_result, const Camera& cam_original, bool split, double result_x, int H,
                       const FigureStyle& style, const CompareSettings& cs) {
  std::vector<FigureLayer> layers;
  if (cs.onion_skin > 0 && !drawing.empty()) {
    const int d = drawing[frame];
    for (int back = std::min(cs.onion_skin, d - 1); back >= 1; --back) {
      const int kf = cmp.kept_frames[d - 1 - back];
      FigureLayer l{cmp.result.poses.frame_positions(kf), 0.45 * (1.0 - (back - 1.0) / (cs.onion_skin + 1.0)), true,
                    cs.onion};
      layers.push_back(l);
    }
  }
  if (cmp.original && !split) {
    layers.push_back({cmp.original->poses.frame_positions(frame), 0.5, true, cs.ghost});
  }
  layers.push_back({cmp.result.poses.frame_positions(frame)});
  if (split) {
    const FigureLayer orig{cmp.original->poses.frame_positions(frame)};
    cairo_save(cr);
    cairo_rectangle(cr, 0, 0, cam_original.width, H);
    cairo_clip(cr);
    detail::draw_figure(cr, cmp.original->skeleton, std::span<const FigureLayer>(&orig, 1), cam_original, style,
                        false);
    cairo_restore(cr);
  }
  cairo_save(cr);
  cairo_translate(cr, result_x, 0);
  cairo_rectangle(cr, 0, 0, cam_result.width, H);
  cairo_clip(cr);
  detail::draw_figure(cr, cmp.result.skeleton, layers, cam_result, style, false);
  cairo_restore(cr);
}

}  // namespace

Image render_comparison_frame(const Comparison& cmp, const ComparisonFraming& framing, int frame,
                              const FigureStyle& style, const CompareSettings& cs) {
  Image out;
  render_comparison_frame(cmp, framing, frame, style, cs, out);
  return out;
}

void render_comparison_frame(const Comparison& cmp, const ComparisonFraming& framing, int frame,
                             const FigureStyle& style, const CompareSettings& cs, Image& out,
                             const FigurePainter& painter) {
  style.validate();
  cs.validate();
  if (frame < 0 || frame >= cmp.frame_count()) {
    throw Error(ErrorCode::invalid_settings, "frame",
                fmt::format("frame {} is outside 0 .. {}", frame, cmp.frame_count() - 1));
  }
  const bool split = cmp.original && cs.layout == CompareLayout::side_by_side;
  const int W = split ? framing.result.width * 2 : framing.result.width;
  const int H = framing.result.height;
  const double k = H / 720.0;
  detail::Canvas canvas = detail::make_canvas_on(out, W, H);
  cairo_t* cr = canvas.cr.get();
  set_colour(cr, style.background);
  cairo_paint(cr);

  const std::vector<int> drawing =
      cmp.kept_frames.empty() ? std::vector<int>{} : drawing_numbers(cmp.kept_frames, cmp.frame_count());

  const double result_x = split ? framing.result.width : 0;
  const bool follow = static_cast<int>(framing.per_frame.size()) == cmp.frame_count();
  const Camera& cam_result = follow ? framing.per_frame[frame] : framing.result;
  const Camera& cam_original = follow ? framing.per_frame[frame] : framing.original;
  if (painter) {
    Image panel;
    if (split) {
      painter(Panel::original, frame, cam_original, panel);
      detail::paint_image(cr, panel, 0, 0);
    }
    painter(cmp.original && !split ? Panel::overlay : Panel::result, frame, cam_result, panel);
    detail::paint_image(cr, panel, result_x, 0);
  } else {
    draw_stick_panels(cr, cmp, drawing, frame, cam_result, cam_original, split, result_x, H, style, cs);
  }

  // Captions.
  const Rgba ink = style.outline;
  const Rgba soft = detail::mix(style.background, style.outline, 0.6);
  const double cap = 24 * k;
  if (split) {
    set_colour(cr, detail::mix(style.background, style.outline, 0.25));
    cairo_set_line_width(cr, 2 * k);
    cairo_move_to(cr, result_x, 0);
    cairo_line_to(cr, result_x, H - (cs.timeline ? 44 * k : 0));
    cairo_stroke(cr);
    draw_text(cr, cmp.original->label, 20 * k, 20 * k + cap * 0.8, cap, ink, Align::left, true);
  } else if (cmp.original) {
    draw_text(cr, cmp.original->label + " (ghost)", 20 * k, 20 * k + cap * 0.8 + 30 * k, 16 * k, soft, Align::left);
  }
  draw_text(cr, cmp.result.label, result_x + 20 * k, 20 * k + cap * 0.8, cap, ink, Align::left, true);
  if (cs.frame_counter) {
    const int digits = static_cast<int>(std::to_string(std::max(cmp.frame_count() - 1, 1)).size());
    draw_text(cr, fmt::format("{:>{}} / {}", frame, digits, cmp.frame_count() - 1), W - 20 * k, 20 * k + cap * 0.8,
              cap, ink, Align::right, true);
    draw_text(cr, fmt::format("{:.2f} s  @ {:g} fps", frame / cmp.frame_rate, cmp.frame_rate), W - 20 * k,
              20 * k + cap * 0.8 + 22 * k, 15 * k, soft, Align::right);
  }
  if (cs.key_marker && !drawing.empty()) {
    draw_badge(cr, cmp, drawing, frame, result_x + 18 * k, 20 * k + cap * 0.8 + 12 * k, k, style, cs);
  }
  if (cs.timeline) draw_timeline(cr, cmp, frame, W, H, k, style, cs);
  detail::check(cr, "comparison frame");
  detail::finish_image(canvas, out);
}

void write_comparison_video(const std::filesystem::path& path, const Comparison& comparison,
                            const CameraSettings& camera, const FigureStyle& style, const CompareSettings& settings,
                            const EncodeSettings& encode, const ProgressFn& progress, const FigurePainter& painter) {
  style.validate();
  encode.validate();
  comparison.validate();
  if (comparison.frame_count() < 2) {
    throw Error(ErrorCode::bad_data, comparison.result.label.empty() ? "video" : comparison.result.label,
                fmt::format("{} frame at {:g} fps: a video needs at least 2 frames", comparison.frame_count(),
                            comparison.frame_rate));
  }
  const ComparisonFraming framing = frame_comparison(comparison, camera, settings);
  const bool split = comparison.original && settings.layout == CompareLayout::side_by_side;
  const int W = split ? framing.result.width * 2 : framing.result.width;
  EncodeSettings enc = encode;
  enc.frame_rate = comparison.frame_rate;
  VideoWriter writer(path, W, framing.result.height, enc);
  const int n = comparison.frame_count();
  Image frame;
  for (int f = 0; f < n; ++f) {
    render_comparison_frame(comparison, framing, f, style, settings, frame, painter);
    writer.add_frame(frame);
    if (progress) progress((f + 1.0) / n);
  }
  writer.finish();
}

}  // namespace koma::render
