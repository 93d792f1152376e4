#include "canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "koma/core/error.hpp"

namespace koma::render::detail {

namespace {
constexpr int kMaxSide = 16384;

std::uint8_t unpremultiply(std::uint8_t c, std::uint8_t a) {
  if (a == 0) return 0;
  if (a == 255) return c;
  return static_cast<std::uint8_t>(std::min(255, (c * 255 + a / 2) / a));
}
}  // namespace

void check(cairo_t* cr, std::string_view what) {
  if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
    throw Error(ErrorCode::io, std::string(what), cairo_status_to_string(cairo_status(cr)));
  }
}

void check(cairo_surface_t* s, std::string_view what) {
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    throw Error(ErrorCode::io, std::string(what), cairo_status_to_string(cairo_surface_status(s)));
  }
}

Canvas make_canvas(int width, int height) {
  if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide) {
    throw Error(ErrorCode::invalid_settings, "frame size",
                fmt::format("{}x{} pixels is not a picture size; expected 1 .. {} on each side", width, height,
                            kMaxSide));
  }
  Canvas c;
  c.surface.reset(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check(c.surface.get(), "frame");
  c.cr = make_context(c.surface.get());
  c.width = width;
  c.height = height;
  return c;
}

Canvas make_canvas_on(Image& image, int width, int height) {
  if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide) {
    throw Error(ErrorCode::invalid_settings, "frame size",
                fmt::format("{}x{} pixels is not a picture size; expected 1 .. {} on each side", width, height,
                            kMaxSide));
  }
  KOMA_ASSERT(cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, width) == width * 4);
  image.width = width;
  image.height = height;
  image.rgba.resize(static_cast<size_t>(width) * height * 4);
  Canvas c;
  c.surface.reset(cairo_image_surface_create_for_data(image.rgba.data(), CAIRO_FORMAT_ARGB32, width, height,
                                                      width * 4));
  check(c.surface.get(), "frame");
  c.cr = make_context(c.surface.get());
  c.width = width;
  c.height = height;
  return c;
}

void finish_image(Canvas& canvas, Image& image) {
  cairo_surface_flush(canvas.surface.get());
  canvas.cr.reset();
  canvas.surface.reset();
  std::uint8_t* px = image.rgba.data();
  const size_t n = static_cast<size_t>(image.width) * image.height;
  for (size_t i = 0; i < n; ++i, px += 4) {
    std::uint32_t p;
    std::memcpy(&p, px, 4);
    const auto a = static_cast<std::uint8_t>(p >> 24);
    px[0] = unpremultiply(static_cast<std::uint8_t>(p >> 16), a);
    px[1] = unpremultiply(static_cast<std::uint8_t>(p >> 8), a);
    px[2] = unpremultiply(static_cast<std::uint8_t>(p), a);
    px[3] = a;
  }
}

ContextPtr make_context(cairo_surface_t* surface) {
  ContextPtr cr(cairo_create(surface));
  check(cr.get(), "drawing context");
  cairo_set_antialias(cr.get(), CAIRO_ANTIALIAS_BEST);
  return cr;
}

Image to_image(const Canvas& canvas) {
  cairo_surface_t* s = canvas.surface.get();
  cairo_surface_flush(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  Image img;
  img.width = canvas.width;
  img.height = canvas.height;
  img.rgba.resize(static_cast<size_t>(img.width) * img.height * 4);
  std::uint8_t* out = img.rgba.data();
  for (int y = 0; y < img.height; ++y) {
    // ARGB32 is a native-endian 32-bit word: 0xAARRGGBB.
    const auto* row = reinterpret_cast<const std::uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < img.width; ++x) {
      const std::uint32_t p = row[x];
      const auto a = static_cast<std::uint8_t>(p >> 24);
      *out++ = unpremultiply(static_cast<std::uint8_t>(p >> 16), a);
      *out++ = unpremultiply(static_cast<std::uint8_t>(p >> 8), a);
      *out++ = unpremultiply(static_cast<std::uint8_t>(p), a);
      *out++ = a;
    }
  }
  return img;
}

SurfacePtr surface_from_image(const Image& image) {
  SurfacePtr s(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, image.width, image.height));
  check(s.get(), "image");
  cairo_surface_flush(s.get());
  const int stride = cairo_image_surface_get_stride(s.get());
  unsigned char* data = cairo_image_surface_get_data(s.get());
  const std::uint8_t* in = image.rgba.data();
  for (int row = 0; row < image.height; ++row) {
    auto* out = reinterpret_cast<std::uint32_t*>(data + static_cast<size_t>(row) * stride);
    for (int col = 0; col < image.width; ++col, in += 4) {
      const std::uint32_t a = in[3];
      auto pm = [a](std::uint32_t c) { return (c * a + 127) / 255; };
      out[col] = (a << 24) | (pm(in[0]) << 16) | (pm(in[1]) << 8) | pm(in[2]);
    }
  }
  cairo_surface_mark_dirty(s.get());
  return s;
}

void paint_image(cairo_t* cr, const Image& image, double x, double y, double opacity) {
  SurfacePtr s = surface_from_image(image);
  cairo_save(cr);
  cairo_set_source_surface(cr, s.get(), x, y);
  cairo_paint_with_alpha(cr, opacity);
  cairo_restore(cr);
}

void set_colour(cairo_t* cr, const Rgba& c, double alpha_scale) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a * alpha_scale);
}

Rgba mix(const Rgba& a, const Rgba& b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t, a.a + (b.a - a.a) * t};
}

namespace {
void select_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}
}  // namespace

double text_width(cairo_t* cr, std::string_view text, double size, bool bold) {
  select_font(cr, size, bold);
  cairo_text_extents_t ext;
  const std::string s(text);
  cairo_text_extents(cr, s.c_str(), &ext);
  return ext.x_advance;
}

void draw_text(cairo_t* cr, std::string_view text, double x, double y, double size, const Rgba& colour, Align align,
               bool bold) {
  const std::string s(text);
  const double w = text_width(cr, text, size, bold);
  double x0 = x;
  if (align == Align::centre) x0 -= w / 2;
  if (align == Align::right) x0 -= w;
  set_colour(cr, colour);
  cairo_move_to(cr, x0, y);
  cairo_show_text(cr, s.c_str());
  cairo_new_path(cr);
}

void rounded_rect(cairo_t* cr, double x, double y, double w, double h, double r) {
  r = std::min({r, w / 2, h / 2});
  cairo_new_sub_path(cr);
  cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
  cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
  cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
  cairo_arc(cr, x + r, y + r, r, M_PI, 1.5 * M_PI);
  cairo_close_path(cr);
}

namespace {
cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}
}  // namespace

std::string png_bytes(cairo_surface_t* surface, std::string_view what) {
  std::string out;
  const cairo_status_t st = cairo_surface_write_to_png_stream(surface, append_bytes, &out);
  if (st != CAIRO_STATUS_SUCCESS) throw Error(ErrorCode::io, std::string(what), cairo_status_to_string(st));
  return out;
}

}  // namespace koma::render::detail
