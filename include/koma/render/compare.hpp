// Comparison frames and videos: the original (smooth) motion beside or under the stylised result,
// a frame counter, a marker on frames that show a new drawing versus a held one, a timeline strip
// of the kept frames, and an optional onion skin of the previous drawings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "koma/core/fk.hpp"
#include "koma/render/encode.hpp"
#include "koma/render/figure.hpp"

namespace koma::render {

/// One motion to show, already at the output rate, as world poses.
struct Clip {
  Skeleton skeleton;
  WorldPoses poses;   ///< frame_count x skeleton.point_count().
  std::string label;  ///< Caption ("original", "on 2s", a file name).
};

/// What a comparison video shows. All clips are at `frame_rate` and have the same frame count.
struct Comparison {
  double frame_rate = 24.0;          ///< Output frames per second; > 0.
  Clip result;                       ///< The stylised motion (right panel / front figure).
  std::optional<Clip> original;      ///< The smooth original (left panel / ghost), if any.
  std::vector<int> kept_frames;      ///< Output frames that start a new drawing; empty = no markers.
  /// Extra world points the framing must also show, `reach_per_frame` for each frame (frame-major):
  /// where drawn characters reach past their joints (their meshes' skinned boxes). Empty = none.
  std::vector<Vec3> reach;
  int reach_per_frame = 0;

  /// Frames of the result.
  int frame_count() const noexcept { return result.poses.frame_count; }
  /// Throws Error(mismatch) when the clips' frame counts differ or a clip's poses do not fit its
  /// skeleton, the kept frames do not fit (check_kept_frames) or the reach is not reach_per_frame
  /// points a frame; Error(bad_data) for no frames or a rate <= 0.
  void validate() const;
};

/// How two clips are composed.
enum class CompareLayout : std::uint8_t {
  side_by_side,  ///< Original on the left, result on the right, each in half the frame.
  overlay,       ///< Original as a translucent ghost behind the result, same camera.
};

/// Overlays and layout.
struct CompareSettings {
  CompareLayout layout = CompareLayout::side_by_side;  ///< Default side by side.
  bool frame_counter = true;   ///< Frame number and time in the corner.
  bool key_marker = true;      ///< "NEW"/"HOLD" badge with drawing number (needs kept_frames).
  bool timeline = true;        ///< Strip along the bottom: ticks per frame, kept frames filled.
  int onion_skin = 0;          ///< Previous drawings shown as ghosts, 0 .. 8; default 0 (off).
  Rgba ghost{0.45, 0.50, 0.58, 1};   ///< Colour of the original in overlay layout.
  Rgba onion{0.30, 0.65, 0.45, 1};   ///< Colour of onion-skin ghosts.
  Rgba accent{0.93, 0.26, 0.30, 1};  ///< New-drawing marker and kept-frame ticks.

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// The cameras for each panel (the same framing for both clips, so sizes compare).
struct ComparisonFraming {
  Camera result;
  Camera original;  ///< Equal to `result` for overlay or without an original.
  /// Follow framing (CameraSettings::follow): one camera per frame, used for both panels; empty
  /// when the whole motion is framed at once.
  std::vector<Camera> per_frame;
};

/// Fits cameras on every frame of every clip. `camera` gives the whole frame's size and view;
/// side-by-side panels get half the width each. Throws like fit_camera and Comparison::validate.
ComparisonFraming frame_comparison(const Comparison& comparison, const CameraSettings& camera,
                                   const CompareSettings& settings = {});

/// The clips a FigurePainter draws in one panel.
enum class Panel : std::uint8_t {
  result,    ///< The result alone (right panel, or the only one).
  original,  ///< The original alone (left panel).
  overlay,   ///< The original as a ghost behind the result (overlay layout).
};

/// Draws a panel's figures in another look (the toon renderer sits above render and plugs in
/// here): fills `out` with an opaque camera.width x camera.height picture of the panel's clips at
/// output frame `frame` seen through `camera`, background included. The comparison adds its
/// captions, badge and timeline on top. Onion skins are the painter's to draw (or not).
using FigurePainter = std::function<void(Panel panel, int frame, const Camera& camera, Image& out)>;

/// Renders output frame `frame` (0 .. frame_count - 1) of the comparison at the framing's size.
Image render_comparison_frame(const Comparison& comparison, const ComparisonFraming& framing, int frame,
                              const FigureStyle& style = {}, const CompareSettings& settings = {});

/// Allocation-free form for video loops: renders into `out`, reusing its buffer when the size
/// is unchanged. Same result and errors as render_comparison_frame. With a `painter`, the panels'
/// figures are its pictures instead of stick figures.
void render_comparison_frame(const Comparison& comparison, const ComparisonFraming& framing, int frame,
                             const FigureStyle& style, const CompareSettings& settings, Image& out,
                             const FigurePainter& painter = {});

/// Called with the fraction done (0 .. 1) while a video is written.
using ProgressFn = std::function<void(double)>;

/// Renders every frame and writes the video (mp4, gif or PNG folder by `path`; see VideoWriter)
/// at comparison.frame_rate (the encoder's rate is taken from the comparison). Atomic: on any error
/// nothing is left at `path`. Throws Error(bad_data) for a clip of fewer than 2 frames, else as the
/// functions above and VideoWriter.
void write_comparison_video(const std::filesystem::path& path, const Comparison& comparison,
                            const CameraSettings& camera, const FigureStyle& style = {},
                            const CompareSettings& settings = {}, const EncodeSettings& encode = {},
                            const ProgressFn& progress = {}, const FigurePainter& painter = {});

}  // namespace koma::render
