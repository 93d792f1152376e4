// The figure renderer: a skeleton drawn as tapered, anti-aliased capsules with joint dots, left and
// right limbs in distinct colours, over a ground grid with a contact shadow, seen through an
// orthographic (front / side / top) or perspective camera framed automatically on the whole motion.
//
// Images are plain RGBA8 buffers (koma::render::Image); Cairo, which does the drawing, stays private
// to src/render. Everything here is a pure function of its inputs: no files, no globals.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/skeleton.hpp"

namespace koma::render {

/// A colour with straight (not premultiplied) alpha; each component in [0, 1].
struct Rgba {
  double r = 0, g = 0, b = 0, a = 1;
};

/// A picture: `width` x `height` pixels, row-major from the top-left, 4 bytes per pixel in R, G, B,
/// A order, straight alpha. Frames rendered here are opaque (A = 255).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgba;  ///< width * height * 4 bytes.

  /// The pixel at column x, row y (asserted in range).
  Rgba pixel(int x, int y) const;
};

/// Which side of the body a joint belongs to, from its name.
enum class Side : std::uint8_t { centre, left, right };

/// Classifies a joint name. A namespace prefix ("mixamorig:") is ignored; then left is any of
/// "Left..."/"left..."/"L_..."/"l_..."/"L...."; "..._L"/"....L"/"..._l"; "L" or "l" followed by an
/// upper-case letter ("LHipJoint", "lThigh"); or "l" followed by a body word ("lhumerus", "lfoot").
/// Right likewise with R/r. Everything else (Hips, Spine, "lowerback") is centre.
Side limb_side(std::string_view joint_name) noexcept;

/// True when joint 0 is a ground reference rather than the pelvis: its name has no "hip"/"pelvis"
/// and a child of it has position channels of its own (Bandai-Namco "joint_Root"). Such a root is
/// not drawn, casts no shadow and is left out of automatic framing (it stays put while the
/// character walks away from it).
bool is_reference_root(const Skeleton& skeleton) noexcept;

/// The points of `poses` that show the body: all of them, or all but point 0 of every frame when
/// the skeleton has a reference root. For fit_camera().
std::vector<Vec3> body_points(const Skeleton& skeleton, const WorldPoses& poses);

/// The four views. Front looks at the character's face, side at its right-hand side (so a walk
/// forward moves left to right on screen), top from above (facing up the screen), perspective
/// from the front-right and a little above.
enum class CameraView : std::uint8_t { front, side, top, perspective };

/// The views' names ("persp"), with "perspective" accepted too, in any case.
inline constexpr EnumNames<CameraView, 5> kCameraViewNames{{{{CameraView::front, "front"},
                                                            {CameraView::side, "side"},
                                                            {CameraView::top, "top"},
                                                            {CameraView::perspective, "persp"},
                                                            {CameraView::perspective, "perspective"}}},
                                                          NameCase::ignore,
                                                          "front"};

/// "front", "side", "top", "persp".
std::string_view to_string(CameraView view) noexcept;
/// Parses "front", "side", "top", "persp" / "perspective" in any case; nullopt otherwise (the
/// accepted words for a message: kCameraViewNames.names()).
std::optional<CameraView> parse_camera_view(std::string_view text) noexcept;

/// How to frame the picture.
struct CameraSettings {
  CameraView view = CameraView::front;  ///< The view; default front.
  int width = 1280;                     ///< Frame width in pixels; 1 .. 8192; default 1280.
  int height = 720;                     ///< Frame height in pixels; 1 .. 8192; default 720.
  double margin = 0.08;                 ///< Empty border, fraction of the smaller side; [0, 0.45); 0.08.
  double persp_yaw_deg = 35.0;   ///< Perspective: turn from the front toward the character's right; 35.
  double persp_pitch_deg = 15.0; ///< Perspective: look down by this angle; 15.
  double persp_fov_deg = 35.0;   ///< Perspective: vertical field of view (degrees), (1, 120); 35.
  /// Orthographic videos of a travelling character: when the whole path is much wider than the
  /// figure (> 1.5x), keep one scale for the clip and pan with the figure instead of shrinking it
  /// to fit the path (the ground ticks move, so sliding stays visible). The camera moves only when a
  /// new drawing appears (a stepped follow: a held drawing stays still for its hold); without
  /// kept frames every frame is a drawing and it pans smoothly. Default off: one fixed camera
  /// frames the whole take, so holds are pixel-identical.
  bool follow = false;

  /// Throws Error(invalid_settings) naming the field: zero or huge frame sizes, margins, angles.
  void validate() const;
};

/// A camera as a user writes it: a view (front, side, top, persp) and/or a framing (fixed,
/// follow), comma-separated ("side,follow"); what the text leaves out stays as in `camera`.
/// Throws Error(invalid_settings, "camera") naming the unknown word and the accepted ones.
CameraSettings parse_camera_spec(std::string_view text, CameraSettings camera = {});

/// A frame size as a user writes it: "1280x720" (or "1280X720") -> {width, height}, each 1 .. 8192.
/// Throws Error(invalid_settings, "size") for anything else.
std::pair<int, int> parse_frame_size(std::string_view text);

/// A colour as a user writes it: "#1a171f" or "1a171f" -> opaque Rgba. Throws
/// Error(invalid_settings, `field`) for anything else.
Rgba parse_colour(std::string_view text, std::string_view field);

/// A fitted camera: maps world points (metres) to pixels. Made by fit_camera(); plain data.
struct Camera {
  CameraView view = CameraView::front;
  int width = 1280;
  int height = 720;
  bool perspective = false;
  Vec3 right = Vec3::UnitX();    ///< Screen right in world space (unit).
  Vec3 up = Vec3::UnitY();       ///< Screen up in world space (unit).
  Vec3 forward = -Vec3::UnitZ(); ///< Viewing direction in world space (unit).
  Vec3 eye = Vec3::Zero();       ///< Perspective: the eye position.
  double scale = 1.0;            ///< Pixels per unit of the view plane (metres for ortho).
  double offset_x = 0.0;         ///< Pixel x of the view plane's origin.
  double offset_y = 0.0;         ///< Pixel y of the view plane's origin (y grows downward).
  double ground_y = 0.0;         ///< World height of the ground (lowest point of the motion).
  double reference_depth = 1.0;  ///< Perspective: depth at which pixel sizes are nominal.
  double figure_height = 1.0;    ///< World size of the character (metres), for shadow and grid.
  Vec3 box_min = Vec3::Zero();   ///< Bounding box of the framed points (metres).
  Vec3 box_max = Vec3::Zero();

  /// Pixel position (x right, y down) and depth (metres along `forward`) of a world point.
  Vec3 project(const Vec3& world) const noexcept;
  /// Pixels per metre at a given depth (constant for orthographic views).
  double pixels_per_metre(double depth) const noexcept;
};

/// The camera that shows every point of `points` (typically all frames of one or more motions'
/// WorldPoses::positions) inside the frame, with the settings' margin. "Front" is the character's
/// own front: the horizontal direction perpendicular to the line from its right to its left hip
/// (found by limb_side() among the root's children, averaged over the first frame), or +Z when the
/// skeleton has no recognisable hips. `skeleton` and `first_frame` (its first frame's points) give
/// that facing. Throws Error(invalid_settings) for invalid settings, Error(bad_data) for no points
/// or non-finite points.
Camera fit_camera(std::span<const Vec3> points, const Skeleton& skeleton,
                  std::span<const Vec3> first_frame, const CameraSettings& settings);

/// Look of the figure. Widths are in pixels for a 720-pixel-high frame and scale with the frame's
/// height (and with depth in perspective).
struct FigureStyle {
  Rgba background{0.96, 0.95, 0.92, 1};  ///< Paper white.
  Rgba centre{0.20, 0.22, 0.27, 1};      ///< Spine, neck, head: ink grey-blue.
  Rgba left{0.90, 0.33, 0.22, 1};        ///< Left limbs: vermilion.
  Rgba right{0.16, 0.47, 0.78, 1};       ///< Right limbs: cobalt.
  Rgba joint{0.98, 0.98, 0.96, 1};       ///< Joint dot fill.
  Rgba outline{0.12, 0.12, 0.14, 1};     ///< Outline of bones and dots.
  Rgba grid{0.55, 0.55, 0.52, 0.35};     ///< Ground grid lines.
  Rgba shadow{0.10, 0.10, 0.12, 0.28};   ///< Contact shadow at full strength.
  double bone_width = 14.0;    ///< Capsule diameter at the parent joint (px at 720 p); > 0; 14.
  double taper = 0.6;          ///< Diameter at the child end / at the parent end; (0, 1]; 0.6.
  double outline_width = 1.5;  ///< Outline stroke (px at 720 p); >= 0; 1.5.
  double joint_radius = 3.2;   ///< Joint dot radius (px at 720 p); >= 0 (0 = no dots); 3.2.
  double head_scale = 1.8;     ///< The head joint's end site is drawn as a ball this many bone widths wide.
  double far_side_dim = 0.25;  ///< How much limbs farther than the root fade toward the background; [0, 1].
  double grid_spacing = 0.5;   ///< Ground grid spacing in metres; > 0; 0.5.
  bool show_grid = true;       ///< Draw the ground grid (a ground line in front and side views).
  bool show_shadow = true;     ///< Draw the contact shadow under the figure.

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// One figure to draw: the skeleton's points (joints then end sites, as forward_kinematics gives
/// them) for one frame, an opacity and an optional tint that replaces all limb colours.
struct FigureLayer {
  std::span<const Vec3> points;  ///< skeleton.point_count() world positions, metres.
  double opacity = 1.0;          ///< 0..1; onion skins use less.
  bool tinted = false;           ///< Draw every bone in `tint` (onion skins, ghosts).
  Rgba tint{0.5, 0.5, 0.5, 1};
};

/// Renders one frame: background, ground, the shadow of the last layer (the main figure; onion
/// skins come first), then the layers in order
/// (bones far to near). Throws Error(mismatch) when a layer's point count differs from the
/// skeleton's, Error(invalid_settings) for an invalid style.
Image render_figure(const Skeleton& skeleton, std::span<const FigureLayer> layers, const Camera& camera,
                    const FigureStyle& style = {});

/// Convenience: one opaque figure.
Image render_pose(const Skeleton& skeleton, std::span<const Vec3> points, const Camera& camera,
                  const FigureStyle& style = {});

}  // namespace koma::render
