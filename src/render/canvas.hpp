// Private Cairo plumbing shared by the render .cpp files: owning handles, colours, text, and the
// conversion between Cairo's premultiplied ARGB32 surfaces and koma::render::Image. Never installed.
#pragma once

#include <cairo.h>

#include <memory>
#include <string>
#include <string_view>

#include "koma/render/figure.hpp"

namespace koma::render::detail {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const noexcept { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const noexcept { cairo_destroy(c); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

/// An ARGB32 image surface and a context on it. Throws Error(invalid_settings) for a zero or
/// over-large size and Error(io) when Cairo cannot allocate it.
struct Canvas {
  SurfacePtr surface;
  ContextPtr cr;
  int width = 0;
  int height = 0;
};
Canvas make_canvas(int width, int height);

/// A canvas drawing straight into `image`'s pixels (resized to width x height, reusing its buffer):
/// no pixel allocation per frame. Call finish_image() after drawing to turn Cairo's premultiplied
/// native-endian ARGB32 into the Image's straight RGBA, in place.
Canvas make_canvas_on(Image& image, int width, int height);
void finish_image(Canvas& canvas, Image& image);

/// A context on any surface (SVG, PNG image); throws Error(io) when Cairo reports an error.
ContextPtr make_context(cairo_surface_t* surface);

/// The canvas's pixels as an Image (un-premultiplied RGBA).
Image to_image(const Canvas& canvas);
/// An ARGB32 surface holding a copy of the image (premultiplied).
SurfacePtr surface_from_image(const Image& image);
/// Paints an Image at (x, y) on a context, at the given opacity.
void paint_image(cairo_t* cr, const Image& image, double x, double y, double opacity = 1.0);

void set_colour(cairo_t* cr, const Rgba& c, double alpha_scale = 1.0);
/// Mixes a toward b by t in [0, 1].
Rgba mix(const Rgba& a, const Rgba& b, double t);

/// Horizontal text anchoring.
enum class Align : unsigned char { left, centre, right };
/// Draws `text` with its baseline at y, anchored at x; sans-serif (DejaVu Sans) of `size` px.
void draw_text(cairo_t* cr, std::string_view text, double x, double y, double size, const Rgba& colour,
               Align align = Align::left, bool bold = false);
/// Width in pixels of `text` at `size`.
double text_width(cairo_t* cr, std::string_view text, double size, bool bold = false);

/// A rounded rectangle path.
void rounded_rect(cairo_t* cr, double x, double y, double w, double h, double r);

/// Throws Error(io) naming `what` when the surface or context is in an error state.
void check(cairo_t* cr, std::string_view what);
void check(cairo_surface_t* s, std::string_view what);

/// Draws background (optional), ground, the last layer's shadow and all layers with `camera`'s
/// pixel coordinates on `cr` (defined in figure.cpp).
void draw_figure(cairo_t* cr, const Skeleton& skeleton, std::span<const FigureLayer> layers, const Camera& camera,
                 const FigureStyle& style, bool background);

/// PNG bytes of a canvas's surface (Cairo's PNG writer into memory).
std::string png_bytes(cairo_surface_t* surface, std::string_view what);

}  // namespace koma::render::detail
