// Sheets an animator reads: a contact sheet of the kept key poses, and an exposure sheet (the
// anime timesheet: one row per frame, the drawing number written where a new drawing starts and a
// hold line while it is held). Also the small helpers that turn a list of kept output frames into
// hold lengths and held poses, shared by the comparison video (drawing numbers: core/drawings.hpp).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "koma/core/drawings.hpp"
#include "koma/core/fk.hpp"
#include "koma/render/figure.hpp"

namespace koma::render {

/// Hold length (frames on screen) of each kept drawing, in order. Validates as check_kept_frames.
std::vector<int> hold_lengths(std::span<const int> kept_frames, int frame_count);

/// World poses where each frame shows the latest kept frame's pose (limited animation). Lossy.
/// Validates as check_kept_frames against poses.frame_count.
WorldPoses hold_poses(const WorldPoses& poses, std::span<const int> kept_frames);

/// World poses of a layered hold: joint j shows, on every frame, its local pose (rotation and
/// translation) of the latest key of its layer `joint_layer[j]` in `layer_keys`, then FK: each
/// body part on its own timing, as `koma keys --layers` wrote it. Lossy. Throws Error(mismatch)
/// when joint_layer does not have one entry per joint or names a layer that is not there, and as
/// check_kept_frames for each layer's keys.
WorldPoses hold_layers(const Motion& motion, std::span<const int> joint_layer,
                       const std::vector<std::vector<int>>& layer_keys);

/// The poses with their last frame held until `frame_count` frames: a clip compared with a longer
/// one (a re-timed or gait-styled result beside its source) stays on screen on its last pose, so
/// both play on one clock, each at its own length. Throws Error(invalid_settings) when
/// frame_count < poses.frame_count or poses has no frame.
WorldPoses hold_last_pose(const WorldPoses& poses, int frame_count);

/// Contact sheet look.
struct ContactSheetSettings {
  int columns = 0;         ///< Cells per row; 0 chooses about 16:9 (at most 8); 0 .. 64.
  int cell_width = 200;    ///< Cell size in pixels; 32 .. 4096; 200 x 260 (portrait, like a figure).
  int cell_height = 260;
  CameraView view = CameraView::side;  ///< Side view reads poses best; default side.
  FigureStyle style{};     ///< Figure look (default style).
  std::string title;       ///< Optional heading above the grid ("" = none).
  double frame_rate = 24;  ///< Output rate, to print hold lengths in seconds too; > 0.

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// Where each cell of a contact sheet is (pixels), so callers and tests can find a key's cell.
struct SheetLayout {
  int columns = 0, rows = 0;
  int cell_width = 0, cell_height = 0;
  int origin_x = 0, origin_y = 0;  ///< Top-left of cell 0.
  int gap = 0;                     ///< Pixels between cells.
  int width = 0, height = 0;       ///< Whole image.
  /// Top-left pixel of cell i (row-major).
  int cell_x(int i) const noexcept { return origin_x + (i % columns) * (cell_width + gap); }
  int cell_y(int i) const noexcept { return origin_y + (i / columns) * (cell_height + gap); }
};

/// The layout render_contact_sheet uses for `keys` cells. Throws as ContactSheetSettings::validate.
SheetLayout contact_sheet_layout(int keys, const ContactSheetSettings& settings);

/// A PNG-ready grid with one cell per kept frame: the pose (same scale in every cell, each cell
/// centred on the pose's root), the drawing number, the output frame number and the hold length
/// ("#3  f 12  hold 2"). `poses` are at the output rate. Throws Error(mismatch) for kept frames
/// that do not fit the poses (check_kept_frames), Error(invalid_settings) for bad settings.
/// Draws a cell's figure in another look (the toon renderer plugs in here): fills `out` with an
/// opaque camera.width x camera.height picture, background included, of the pose of kept frame
/// number `key` (index into kept_frames) moved by `shift` (metres), seen through `camera`.
using CellPainter = std::function<void(int key, const Vec3& shift, const Camera& camera, Image& out)>;

/// `reach`: extra world points the cells must also show (where a drawn character reaches past its
/// joints), the same number for each kept frame, in kept-frame order; empty = none. Throws
/// Error(mismatch) when its size is not a multiple of the kept frames'.
Image render_contact_sheet(const Skeleton& skeleton, const WorldPoses& poses, std::span<const int> kept_frames,
                           const ContactSheetSettings& settings = {}, const CellPainter& painter = {},
                           std::span<const Vec3> reach = {});

/// Exposure sheet look.
struct ExposureSheetSettings {
  double frame_rate = 24;       ///< Output rate: a thick rule every second, a label per second; > 0.
  int rows_per_column = 72;     ///< Frames per column before the next column (3 s at 24); 6 .. 1000.
  int row_height = 16;          ///< Pixels per frame row; 6 .. 200.
  std::string title;            ///< Heading ("" = none).
  std::string layer_name = "A"; ///< Name of the drawing column (the cel layer).
  int number_from = 1;          ///< Number printed on the first row: 1 = timesheet convention (the
                                ///< "sheet_frame" column of `koma keys --xsheet`), 0 = koma's frame index.

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// An anime-style timesheet: per output frame a row with the frame number and, in the layer
/// column, the drawing number where a drawing starts and a vertical hold line while it is held.
/// `drawing_per_frame[f]` is the drawing shown on output frame f (as drawing_numbers() gives);
/// numbers must be >= 1. Long clips continue in further columns. Throws Error(bad_data) for an
/// empty list or a drawing number < 1, Error(invalid_settings) for bad settings.
Image render_exposure_sheet(std::span<const int> drawing_per_frame, const ExposureSheetSettings& settings = {});

/// One gap's timing chart on an exposure sheet: the ruler from a key to the next, with a tick per
/// inbetween at its share of the way.
struct SheetChart {
  int start = 0, end = 0;      ///< output frames of the gap's keys (start < end)
  std::vector<double> ticks;   ///< the inbetweens' shares of the way, each in [0, 1]
  std::vector<int> drawings;   ///< their drawing numbers, printed beside the ticks (may be shorter)
};

/// Spacing marks of an exposure sheet, as a key animator writes them: key drawings circled,
/// inbetweens plain, and each gap's chart in a column beside the drawings.
struct SheetSpacing {
  std::vector<int> key_drawings;  ///< drawing numbers that are key poses (circled)
  std::vector<SheetChart> charts; ///< the gaps' charts (none: no chart column)
};

/// The exposure sheet with spacing marks; with an empty `spacing` exactly the sheet above. The
/// chart column's ruler spans the gap's rows, so a tick level with its inbetween's row is even
/// spacing and ticks crowding a key are slow-in or slow-out. Throws as above, and Error(bad_data)
/// for a chart outside the frames or a tick outside [0, 1].
Image render_exposure_sheet(std::span<const int> drawing_per_frame, const ExposureSheetSettings& settings,
                            const SheetSpacing& spacing);

}  // namespace koma::render
