// The toon renderer: skinned characters drawn as cel animation on OpenGL 3.3 core, headless
// through EGL (Mesa's surfaceless platform: llvmpipe on the CPU, or the GPU's driver where there is
// one), GL loaded by libepoxy. EGL and GL stay private to src/toon.
//
// One frame, in order (all in a 4x multisampled framebuffer unless ToonStyle::msaa says otherwise):
//   paper (or transparent) -> contact shadow -> each character: cel-shaded colour pass (skinned in
//   the vertex shader from a uniform block of bone matrices) and its inverted hull (back faces pushed out
//   along smoothed normals by a constant number of pixels, drawn in ink) -> resolve -> inner lines
//   where depth or normals jump (a full-screen pass over the resolved normal/depth buffer).
//
//   uniform block Bones (mat4 per bone):  [0, N)  = the drawing's pose,
//                                         [N, 2N) = the previous drawing's pose (smears)
//
// Smears (ToonStyle::smear, issue 42): the vertex shader skins every vertex in both poses and
// projects both; a vertex that moved more than ToonStyle::smear_threshold pixels on screen is fast
// (fully from 1.5 x). A smear pulls the trailing side of the fast vertices (the smoothed normal
// facing away from the motion) kSmearLength of the way back toward where they were, the stretch
// painted in the lit tone; multiples draw kMultiples copies of the fast vertices back along the
// motion, fading, under the character:
//
//   previous drawing    this drawing      smear (trailing side back)    multiples (fading copies)
//        [ ]  ---->          [ ]               [=========]                  [ ] [ ] [ ][ ]
//
// A frame is a pure function of its inputs: the same draws and camera give the same pixels, so a
// held drawing is pixel-identical for its hold.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/io/character.hpp"
#include "koma/render/figure.hpp"

namespace koma::toon {

/// How surfaces are shaded.
enum class Shading : std::uint8_t {
  cel,     ///< Hard-edged tones (ToonStyle::tones), the anime look. Default.
  smooth,  ///< Continuous Lambert shading (the plain look, for comparison).
  flat,    ///< Unlit: the material's colour (base colour x texture) only.
};
inline constexpr EnumNames<Shading, 3> kShadingNames{
    {{{Shading::cel, "cel"}, {Shading::smooth, "smooth"}, {Shading::flat, "flat"}}}, NameCase::ignore, "cel"};

/// What a fast drawing looks like (issue 42; the same as `koma view --smear` / `--multiples`).
enum class Smear : std::uint8_t {
  off,        ///< Every drawing as posed. Default.
  smear,      ///< The trailing side of fast parts stretched back toward the previous drawing.
  multiples,  ///< Fading copies of fast parts back along the motion, under the character.
};
inline constexpr EnumNames<Smear, 3> kSmearNames{
    {{{Smear::off, "off"}, {Smear::smear, "smear"}, {Smear::multiples, "multiples"}}}, NameCase::ignore, "off"};

/// How far back a smear pulls the trailing side of a fast vertex: this share of its motion since
/// the previous drawing (the viewer's SMEAR_LENGTH).
inline constexpr double kSmearLength = 0.8;
/// Multiples: each copy's place (the share of the motion back toward the previous drawing) and its
/// opacity (0.95 - 0.85 x back: the copy nearest the drawing is the most opaque), drawn from the
/// farthest (the viewer's SMEAR_COPIES).
inline constexpr double kMultiples[3] = {0.75, 0.5, 0.25};

/// The look. Pixel sizes are for a 720-pixel-high frame and scale with the frame's height.
struct ToonStyle {
  Shading shading = Shading::cel;  ///< Default cel.
  int tones = 2;                   ///< Cel tones per material: 2 (lit, shadow) or 3 (lit, shadow, core); 2.
  /// Lit where the surface faces the key light more than this (cosine, -1 .. 1); 0.15.
  double threshold = 0.15;
  /// Third tone (tones = 3): the core shadow where the cosine is below this (< threshold); -0.45.
  double core_threshold = -0.45;
  render::Rgba shadow{0.72, 0.68, 0.82, 1};  ///< Shadow tone = colour x this (a cool multiply).
  render::Rgba core{0.52, 0.48, 0.66, 1};    ///< Core tone (tones = 3) = colour x this.
  render::Rgba ink{0.10, 0.09, 0.12, 1};     ///< Line colour.
  double line_width = 3.0;   ///< Silhouette (inverted hull) width, px at 720 p; 0 = none; 0 .. 40; 3.
  double inner_width = 1.6;  ///< Inner lines (depth and normal breaks), px at 720 p; 0 = none; 0 .. 20; 1.6.
  double crease_deg = 70;    ///< Normals turning more than this across a pixel draw a line; (0, 180); 70.
  /// Depth breaks larger than this fraction of the figure's size draw a line; (0, 1]; 0.04.
  double depth_break = 0.04;
  render::Rgba paper{0.96, 0.95, 0.92, 1};  ///< Background (as the stick figures').
  double shadow_opacity = 0.22;  ///< Contact shadow under the figure; 0 = none; 0 .. 1; 0.22.
  /// RGBA cels: transparent background, no contact shadow (the caller adds no caption or timeline).
  bool transparent = false;
  int msaa = 4;  ///< Samples per pixel: 1, 2 or 4 (4x MSAA by default).
  /// Smears on fast drawings: a Draw's previous_bones are the previous drawing's pose; off.
  Smear smear = Smear::off;
  /// A vertex is fast when it moved more than this on screen since the previous drawing, px at
  /// 720 p (scales with the frame's height); fully smeared from 1.5 x; (0, 1000]; 12 (as koma view).
  double smear_threshold = 12;

  /// Throws Error(invalid_settings) naming the field ("toon.tones").
  void validate() const;
};

/// A contact shadow: an ellipse on the ground under the figure, in pixels.
struct ContactShadow {
  double x = 0, y = 0;    ///< Centre, pixels.
  double rx = 0, ry = 0;  ///< Radii, pixels.
  double opacity = 0;     ///< 0 = none.
};

/// The shadow of a figure whose joints are at `joints` (world, metres) on `camera`'s ground:
/// centred under the joints, as wide as the figure's footprint, flattened to the view (a thin
/// ellipse in front and side views), fading as the lowest joint rises above the ground (gone at
/// half the figure's size).
ContactShadow contact_shadow(std::span<const Vec3> joints, const render::Camera& camera, double opacity);

/// One character to draw in a frame.
struct Draw {
  int character = 0;                     ///< Handle from Renderer::add_character().
  std::span<const float> bones;          ///< 16 floats per bone (column-major skinning matrices).
  /// The previous drawing's bones (same layout), for smears (ToonStyle::smear); empty = none (the
  /// drawing is not smeared). Uploaded to the second half of the Bones block (skin(1) in the vertex
  /// shader). With ToonStyle::smear off it is not read: the pixels are those without it.
  std::span<const float> previous_bones;
};

/// An OpenGL context and the GPU copies of characters. Not copyable; use from one thread.
class Renderer {
 public:
  /// Opens the EGL display and an OpenGL 3.3 core context and builds the frame buffers for
  /// `width` x `height` pictures. Throws Error(io) naming the missing Debian package when there is
  /// no EGL (libegl1), no Mesa EGL vendor (libegl-mesa0) or no GL driver (libgl1-mesa-dri);
  /// Error(invalid_settings) for a bad style or size (1 .. 8192).
  Renderer(int width, int height, const ToonStyle& style = {});
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  /// Uploads a character (validated against its own bones); returns its handle. Throws
  /// Error(bad_data) for more bones than the driver's uniform block holds (512 on llvmpipe).
  int add_character(const io::CharacterMesh& mesh);

  /// Draws one frame: the draws in order over the paper (or transparent) background and
  /// `shadow`, seen through `camera` (its width and height must be the renderer's). `figure_size`
  /// (metres) scales the depth-break threshold. Writes `out` (straight RGBA; opaque unless the
  /// style is transparent), reusing its buffer. Throws Error(mismatch) for a draw whose bone count
  /// differs from its character's or a camera of another size.
  void render(std::span<const Draw> draws, const render::Camera& camera, const ContactShadow& shadow,
              double figure_size, render::Image& out);

  int width() const noexcept;
  int height() const noexcept;
  /// The number of bones of a character.
  int bone_count(int character) const;
  /// GL_RENDERER and GL_VERSION ("llvmpipe (LLVM 15.0.6, 256 bits); 4.5 (Core Profile) Mesa 22.3.6").
  std::string gl_renderer() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Why toon rendering cannot run here (naming the package to install), or nullopt when a context
/// can be made. Opens and closes a context (a few milliseconds).
std::optional<std::string> unavailable_reason();

}  // namespace koma::toon
