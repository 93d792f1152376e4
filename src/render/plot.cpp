#include "koma/render/plot.hpp"

#include <cairo-svg.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <array>

#include "canvas.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::render {

using detail::Align;
using detail::set_colour;
using detail::draw_text;
namespace fs = std::filesystem;

void PlotSettings::validate() const {
  if (width < 200 || width > 8192 || height < 150 || height > 8192) {
    throw Error(ErrorCode::invalid_settings, "plot.size",
                fmt::format("{}x{} is not a plot size; expected 200 .. 8192 x 150 .. 8192", width, height));
  }
}

namespace {

const Rgba kInk{0.15, 0.16, 0.19, 1}, kSoft{0.45, 0.47, 0.52, 1}, kGrid{0.86, 0.86, 0.84, 1};
const Rgba kPaper{1, 1, 1, 1}, kBlue{0.16, 0.47, 0.78, 1}, kRed{0.90, 0.26, 0.22, 1};
const Rgba kPalette[] = {{0.16, 0.47, 0.78, 1}, {0.90, 0.40, 0.22, 1}, {0.20, 0.62, 0.42, 1},
                         {0.58, 0.38, 0.74, 1}, {0.85, 0.65, 0.13, 1}, {0.35, 0.35, 0.40, 1},
                         {0.85, 0.35, 0.60, 1}, {0.25, 0.65, 0.75, 1}};

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// Draws with `draw` onto an SVG or PNG surface of the settings' size and writes it atomically.
void emit(const fs::path& path, const PlotSettings& s, const std::function<void(cairo_t*)>& draw) {
  s.validate();
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string bytes;
  if (ext == ".svg") {
    detail::SurfacePtr surf(cairo_svg_surface_create_for_stream(append, &bytes, s.width, s.height));
    detail::check(surf.get(), path.string());
    {
      detail::ContextPtr cr = detail::make_context(surf.get());
      draw(cr.get());
      detail::check(cr.get(), path.string());
    }
    cairo_surface_finish(surf.get());
    detail::check(surf.get(), path.string());
  } else if (ext == ".png") {
    detail::Canvas c = detail::make_canvas(s.width, s.height);
    draw(c.cr.get());
    detail::check(c.cr.get(), path.string());
    bytes = detail::png_bytes(c.surface.get(), path.string());
  } else {
    throw Error(ErrorCode::invalid_settings, path.string(),
                fmt::format("cannot write a plot as '{}'; use .svg or .png", ext));
  }
  write_file_atomic(path, bytes);
}

// "Nice" tick values covering [lo, hi] with about `target` steps (1, 2, 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e4 || a < 1e-3) return fmt::format("{:.1e}", v);
  return fmt::format("{:g}", v);
}

// The plot area and axis mappings shared by the plot kinds.
struct Frame {
  double x0, y0, x1, y1;  // pixel rectangle of the data area
  double lo_x, hi_x, lo_y, hi_y;
  bool log_y = false;
  double px(double x) const { return x0 + (x - lo_x) / (hi_x - lo_x) * (x1 - x0); }
  double py(double y) const {
    if (log_y) {
      y = std::log10(std::max(y, std::pow(10.0, lo_y)));
    }
    return y1 - (y - lo_y) / (hi_y - lo_y) * (y1 - y0);
  }
};

void background(cairo_t* cr, const std::string& title) {
  set_colour(cr, kPaper);
  cairo_paint(cr);
  draw_text(cr, title, 24, 34, 18, kInk, Align::left, true);
}

// Axes, grid, ticks and labels. `x_ticks` false leaves the x axis to the caller (categories).
void axes(cairo_t* cr, const Frame& f, const std::string& xl, const std::string& yl, bool x_ticks,
          bool integer_x = false) {
  cairo_set_line_width(cr, 1);
  std::vector<double> yt;
  if (f.log_y) {
    for (double e = std::ceil(f.lo_y); e <= f.hi_y + 1e-9; e += 1) yt.push_back(e);
  } else {
    yt = nice_ticks(f.lo_y, f.hi_y, 5);
  }
  for (double v : yt) {
    const double y = f.log_y ? f.y1 - (v - f.lo_y) / (f.hi_y - f.lo_y) * (f.y1 - f.y0) : f.py(v);
    set_colour(cr, kGrid);
    cairo_move_to(cr, f.x0, y);
    cairo_line_to(cr, f.x1, y);
    cairo_stroke(cr);
    draw_text(cr, f.log_y ? tick_label(std::pow(10.0, v)) : tick_label(v), f.x0 - 8, y + 4, 11, kSoft, Align::right);
  }
  if (x_ticks) {
    std::vector<double> xt = nice_ticks(f.lo_x, f.hi_x, 8);
    for (double v : xt) {
      if (integer_x && std::abs(v - std::round(v)) > 1e-9) continue;
      const double x = f.px(v);
      set_colour(cr, kGrid);
      cairo_move_to(cr, x, f.y0);
      cairo_line_to(cr, x, f.y1);
      cairo_stroke(cr);
      draw_text(cr, tick_label(v), x, f.y1 + 16, 11, kSoft, Align::centre);
    }
  }
  set_colour(cr, kInk);
  cairo_set_line_width(cr, 1.2);
  cairo_move_to(cr, f.x0, f.y0);
  cairo_line_to(cr, f.x0, f.y1);
  cairo_line_to(cr, f.x1, f.y1);
  cairo_stroke(cr);
  draw_text(cr, xl, (f.x0 + f.x1) / 2, f.y1 + 38, 12, kInk, Align::centre);
  cairo_save(cr);
  cairo_translate(cr, 18, (f.y0 + f.y1) / 2);
  cairo_rotate(cr, -M_PI / 2);
  draw_text(cr, yl, 0, 0, 12, kInk, Align::centre);
  cairo_restore(cr);
}

Frame make_frame(const PlotSettings& s, double lo_x, double hi_x, double lo_y, double hi_y, bool log_y) {
  Frame f{};
  f.x0 = 78;
  f.y0 = 56;
  f.x1 = s.width - 28.0;
  f.y1 = s.height - 58.0;
  f.lo_x = lo_x;
  f.hi_x = hi_x > lo_x ? hi_x : lo_x + 1;
  f.log_y = log_y;
  if (log_y) {
    f.lo_y = std::floor(std::log10(lo_y));
    f.hi_y = std::ceil(std::log10(hi_y));
    if (f.hi_y <= f.lo_y) f.hi_y = f.lo_y + 1;
  } else {
    const auto t = nice_ticks(lo_y, hi_y > lo_y ? hi_y : lo_y + 1, 5);
    f.lo_y = std::min(lo_y, t.front());
    f.hi_y = std::max(hi_y > lo_y ? hi_y : lo_y + 1, t.back());
  }
  return f;
}

void check_values(std::span<const double> v, const char* what) {
  if (v.empty()) throw Error(ErrorCode::bad_data, what, "no values to plot");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) throw Error(ErrorCode::bad_data, what, fmt::format("value {} is not finite", i));
  }
}

std::string or_default(const std::string& s, const char* d) { return s.empty() ? d : s; }

// Smallest positive value (for log axes), or 1.
double min_positive(std::span<const double> v) {
  double m = INFINITY;
  for (double x : v) {
    if (x > 0) m = std::min(m, x);
  }
  return std::isfinite(m) ? m : 1.0;
}

}  // namespace

void plot_error_curve(const fs::path& path, std::span<const int> counts, std::span<const double> errors,
                      int chosen, const PlotSettings& s) {
  check_values(errors, "error curve");
  if (counts.size() != errors.size()) {
    throw Error(ErrorCode::bad_data, "error curve",
                fmt::format("{} key counts but {} errors", counts.size(), errors.size()));
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    if (errors[i] < 0) throw Error(ErrorCode::bad_data, "error curve", fmt::format("error {} is negative", i));
    if (i > 0 && counts[i] <= counts[i - 1]) {
      throw Error(ErrorCode::bad_data, "error curve", "key counts must increase");
    }
  }
  const auto it = std::find(counts.begin(), counts.end(), chosen);
  if (chosen != 0 && it == counts.end()) {
    throw Error(ErrorCode::bad_data, "error curve", fmt::format("the chosen count {} is not on the curve", chosen));
  }
  emit(path, s, [&](cairo_t* cr) {
    background(cr, or_default(s.title, "Error vs number of keys"));
    const double hi = *std::max_element(errors.begin(), errors.end());
    const double lo = s.log_y ? min_positive(errors) : 0.0;
    Frame f = make_frame(s, counts.front(), counts.back(), lo, s.log_y ? std::max(hi, lo * 10) : hi * 1.05, s.log_y);
    if (counts.size() == 1) f.lo_x -= 1, f.hi_x += 1;
    axes(cr, f, or_default(s.x_label, "keys kept"), or_default(s.y_label, "error"), true, true);
    set_colour(cr, kBlue);
    cairo_set_line_width(cr, 2.2);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t i = 0; i < counts.size(); ++i) {
      const double x = f.px(counts[i]), y = f.py(errors[i]);
      if (i == 0) cairo_move_to(cr, x, y);
      else cairo_line_to(cr, x, y);
    }
    cairo_stroke(cr);
    if (counts.size() <= 80) {
      for (size_t i = 0; i < counts.size(); ++i) {
        cairo_arc(cr, f.px(counts[i]), f.py(errors[i]), 2.5, 0, 2 * M_PI);
        cairo_fill(cr);
      }
    }
    if (it != counts.end()) {
      const size_t i = static_cast<size_t>(it - counts.begin());
      const double x = f.px(counts[i]), y = f.py(errors[i]);
      set_colour(cr, kRed, 0.35);
      cairo_set_dash(cr, std::array<double, 2>{4, 4}.data(), 2, 0);
      cairo_move_to(cr, x, f.y1);
      cairo_line_to(cr, x, y);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      set_colour(cr, kRed);
      cairo_arc(cr, x, y, 6, 0, 2 * M_PI);
      cairo_fill(cr);
      const std::string label = fmt::format("chosen: {} keys, error {:.4g}", counts[i], errors[i]);
      const double w = detail::text_width(cr, label, 13, true);
      const double lx = std::clamp(x + 10, f.x0 + 4, f.x1 - w - 4);
      draw_text(cr, label, lx, std::max(f.y0 + 14, y - 12), 13, kRed, Align::left, true);
    }
  });
}

void plot_frame_error(const fs::path& path, std::span<const double> errors, std::span<const int> kept,
                      double frame_rate, const PlotSettings& s) {
  check_values(errors, "frame error");
  if (!(frame_rate > 0)) throw Error(ErrorCode::bad_data, "frame error", "frame rate must be > 0");
  for (int k : kept) {
    if (k < 0 || k >= static_cast<int>(errors.size())) {
      throw Error(ErrorCode::bad_data, "frame error",
                  fmt::format("kept frame {} is outside the {} frames plotted", k, errors.size()));
    }
  }
  emit(path, s, [&](cairo_t* cr) {
    background(cr, or_default(s.title, "Error per frame"));
    const int n = static_cast<int>(errors.size());
    const double hi = *std::max_element(errors.begin(), errors.end());
    const double lo = s.log_y ? min_positive(errors) : std::min(0.0, *std::min_element(errors.begin(), errors.end()));
    Frame f = make_frame(s, 0, std::max(1, n - 1), lo, s.log_y ? std::max(hi, lo * 10) : hi * 1.05, s.log_y);
    axes(cr, f, or_default(s.x_label, fmt::format("output frame ({:g} fps)", frame_rate).c_str()),
         or_default(s.y_label, "error"), true, true);
    // Kept frames: light bands up the plot and ticks on the axis.
    for (int k : kept) {
      set_colour(cr, kRed, 0.3);
      cairo_move_to(cr, f.px(k), f.y0);
      cairo_line_to(cr, f.px(k), f.y1);
      cairo_stroke(cr);
      set_colour(cr, kRed);
      cairo_rectangle(cr, f.px(k) - 1.5, f.y1 - 8, 3, 8);
      cairo_fill(cr);
    }
    // Filled area under the curve, then the line.
    cairo_move_to(cr, f.px(0), f.py(s.log_y ? std::pow(10.0, f.lo_y) : std::max(f.lo_y, 0.0)));
    for (int i = 0; i < n; ++i) cairo_line_to(cr, f.px(i), f.py(errors[i]));
    cairo_line_to(cr, f.px(n - 1), f.py(s.log_y ? std::pow(10.0, f.lo_y) : std::max(f.lo_y, 0.0)));
    cairo_close_path(cr);
    set_colour(cr, kBlue, 0.15);
    cairo_fill(cr);
    set_colour(cr, kBlue);
    cairo_set_line_width(cr, 1.6);
    for (int i = 0; i < n; ++i) {
      if (i == 0) cairo_move_to(cr, f.px(i), f.py(errors[i]));
      else cairo_line_to(cr, f.px(i), f.py(errors[i]));
    }
    cairo_stroke(cr);
    const double peak = hi;
    const int worst = static_cast<int>(std::max_element(errors.begin(), errors.end()) - errors.begin());
    draw_text(cr, fmt::format("worst: frame {} ({:.2f} s), {:.4g}", worst, worst / frame_rate, peak), f.x1, 34, 12,
              kSoft, Align::right);
  });
}

void plot_spectra(const fs::path& path, std::span<const std::string> joints,
                  std::span<const std::vector<double>> amp, const PlotSettings& s) {
  if (amp.empty()) throw Error(ErrorCode::bad_data, "spectra", "no joints to plot");
  if (joints.size() != amp.size()) {
    throw Error(ErrorCode::bad_data, "spectra", fmt::format("{} names for {} rows", joints.size(), amp.size()));
  }
  const size_t K = amp[0].size();
  double hi = 0;
  for (size_t j = 0; j < amp.size(); ++j) {
    if (amp[j].size() != K || K == 0) {
      throw Error(ErrorCode::bad_data, "spectra", fmt::format("joint {} has {} harmonics, expected {} (>= 1)", joints[j],
                                                                amp[j].size(), K));
    }
    check_values(amp[j], "spectra");
    for (double v : amp[j]) {
      if (v < 0) throw Error(ErrorCode::bad_data, "spectra", fmt::format("joint {}: negative amplitude", joints[j]));
      hi = std::max(hi, v);
    }
  }
  emit(path, s, [&](cairo_t* cr) {
    background(cr, or_default(s.title, "Gait spectra per joint"));
    const double rows = static_cast<double>(amp.size()), harmonics = static_cast<double>(K);
    Frame f = make_frame(s, 0, rows, 0, hi > 0 ? hi * 1.08 : 1, false);
    f.y1 -= 22;  // room for rotated joint names
    axes(cr, f, or_default(s.x_label, ""), or_default(s.y_label, "amplitude"), false);
    const double group = (f.x1 - f.x0) / rows;
    const double bw = group * 0.8 / harmonics;
    for (size_t j = 0; j < amp.size(); ++j) {
      const double gx = f.x0 + group * static_cast<double>(j) + group * 0.1;
      for (size_t h = 0; h < K; ++h) {
        set_colour(cr, kPalette[h % std::size(kPalette)]);
        const double y = f.py(amp[j][h]);
        cairo_rectangle(cr, gx + bw * static_cast<double>(h), y, std::max(bw - 1, 1.0), f.y1 - y);
        cairo_fill(cr);
      }
      cairo_save(cr);
      cairo_translate(cr, gx + group * 0.4, f.y1 + 12);
      cairo_rotate(cr, amp.size() > 8 ? -M_PI / 5 : 0);
      draw_text(cr, joints[j], 0, 0, 11, kInk, amp.size() > 8 ? Align::right : Align::centre);
      cairo_restore(cr);
    }
    // Legend: harmonics.
    double lx = f.x1;
    for (size_t h = K; h-- > 0;) {
      const std::string t = fmt::format("h{}", h + 1);
      const double w = detail::text_width(cr, t, 11) + 20;
      lx -= w;
      set_colour(cr, kPalette[h % std::size(kPalette)]);
      cairo_rectangle(cr, lx, 26, 10, 10);
      cairo_fill(cr);
      draw_text(cr, t, lx + 13, 35, 11, kSoft);
    }
  });
}

void plot_key_timeline(const fs::path& path, std::span<const std::string> effectors,
                       std::span<const std::vector<double>> times, double duration, const PlotSettings& s) {
  if (effectors.empty()) throw Error(ErrorCode::bad_data, "key timeline", "no effectors to plot");
  if (effectors.size() != times.size()) {
    throw Error(ErrorCode::bad_data, "key timeline",
                fmt::format("{} effector names for {} lanes", effectors.size(), times.size()));
  }
  if (!(duration > 0 && std::isfinite(duration))) {
    throw Error(ErrorCode::bad_data, "key timeline", fmt::format("duration {} is not > 0 seconds", duration));
  }
  for (size_t e = 0; e < times.size(); ++e) {
    for (double t : times[e]) {
      if (!(t >= 0 && t <= duration * (1 + 1e-9))) {
        throw Error(ErrorCode::bad_data, fmt::format("key timeline {}", effectors[e]),
                    fmt::format("key time {} s is outside 0 .. {} s", t, duration));
      }
    }
  }
  emit(path, s, [&](cairo_t* cr) {
    background(cr, or_default(s.title, "Key times per effector"));
    double name_w = 0;
    for (const auto& e : effectors) name_w = std::max(name_w, detail::text_width(cr, e, 12, true));
    Frame f = make_frame(s, 0, duration, 0, 1, false);
    f.x0 = std::max(f.x0, name_w + 36);
    // Time grid.
    for (double v : nice_ticks(0, duration, 10)) {
      set_colour(cr, kGrid);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, f.px(v), f.y0);
      cairo_line_to(cr, f.px(v), f.y1);
      cairo_stroke(cr);
      draw_text(cr, tick_label(v), f.px(v), f.y1 + 16, 11, kSoft, Align::centre);
    }
    draw_text(cr, or_default(s.x_label, "time (s)"), (f.x0 + f.x1) / 2, f.y1 + 38, 12, kInk, Align::centre);
    const double lane = (f.y1 - f.y0) / static_cast<double>(effectors.size());
    for (size_t e = 0; e < effectors.size(); ++e) {
      const double cy = f.y0 + lane * (static_cast<double>(e) + 0.5);
      const Rgba c = kPalette[e % std::size(kPalette)];
      draw_text(cr, effectors[e], f.x0 - 12, cy + 4, 12, kInk, Align::right, true);
      set_colour(cr, kGrid);
      cairo_set_line_width(cr, 2);
      cairo_move_to(cr, f.x0, cy);
      cairo_line_to(cr, f.x1, cy);
      cairo_stroke(cr);
      const double r = std::clamp(lane * 0.22, 3.0, 9.0);
      for (double t : times[e]) {
        // A diamond, the usual keyframe glyph.
        const double x = f.px(t);
        cairo_move_to(cr, x, cy - r);
        cairo_line_to(cr, x + r, cy);
        cairo_line_to(cr, x, cy + r);
        cairo_line_to(cr, x - r, cy);
        cairo_close_path(cr);
        set_colour(cr, c);
        cairo_fill_preserve(cr);
        set_colour(cr, kInk);
        cairo_set_line_width(cr, 1);
        cairo_stroke(cr);
      }
    }
    set_colour(cr, kInk);
    cairo_set_line_width(cr, 1.2);
    cairo_move_to(cr, f.x0, f.y1);
    cairo_line_to(cr, f.x1, f.y1);
    cairo_stroke(cr);
  });
}

}  // namespace koma::render
