// The render pipeline of one file (`koma render`, Python koma.render_file): read the motion (and a
// second one to compare, and a `koma keys` report to hold it on), draw it in the toon look (or as
// sticks, also when OpenGL is missing) and encode MP4, GIF, PNG frames or transparent PNG cels.
// Stateless; the output is atomic (a failure leaves nothing at the output path).
//
//   input ──read, resample to the output rate──▶ result ──held on the report's drawings (layers)──┐
//   compare (or the input, smooth) ──read, resample──▶ original ── one clock: the shorter holds ───┤
//                                                   toon clips (character or mannequin) or sticks ◀┘
//                                                        └──▶ comparison video / cels ──▶ output
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/batch/pipelines.hpp"
#include "koma/core/enum_names.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/encode.hpp"
#include "koma/render/figure.hpp"
#include "koma/toon/renderer.hpp"

namespace koma::batch {

/// How the figures are drawn.
enum class Look : std::uint8_t {
  toon,    ///< The character as cel animation (OpenGL through EGL; koma/toon). Default.
  sticks,  ///< The skeleton as tapered bones on a ground grid (Cairo; koma/render).
};
/// "toon", "sticks" (exact).
inline constexpr EnumNames<Look, 2> kLookNames{{{{Look::toon, "toon"}, {Look::sticks, "sticks"}}}, NameCase::exact,
                                               "toon"};

/// Settings of the render pipeline.
struct RenderJob {
  io::ReadOptions read;  ///< The input's unit, animation and asset root (also the compare file's).
  /// The JSON report of `koma keys` (its kept_frames, and its layers): the input is shown held on
  /// those drawings beside the smooth input (or beside `compare`). Empty (default) = not held.
  std::filesystem::path keys;
  /// A second motion (the original), shown beside or under the input. Empty (default) = none.
  std::filesystem::path compare;
  /// The compare file's animation (glTF / FBX). Empty (default) = read.animation.
  std::string compare_animation;
  /// Output frames per second; both motions are resampled to it. 0 (default) = the keys report's
  /// rate, else 24.
  double output_rate = 0.0;
  Look look = Look::toon;  ///< Default toon; sticks when OpenGL cannot run (with a warning).
  /// The view, framing and frame size. Default: side view, fixed framing, 1280x720.
  render::CameraSettings camera = [] {
    render::CameraSettings c;
    c.view = render::CameraView::side;
    return c;
  }();
  /// The toon look (tones, shading, lines, smears, transparent cels). Default: ToonStyle's, with
  /// the ink #1a171f (`koma render`'s default: the 8-bit colour of ToonStyle's 0.10, 0.09, 0.12).
  /// Smears and transparent cels need Look::toon; transparent cels are the result alone as PNG
  /// frames (an output folder, no `compare`).
  toon::ToonStyle style = [] {
    toon::ToonStyle s;
    s.ink = {26 / 255.0, 23 / 255.0, 31 / 255.0, 1.0};
    return s;
  }();
  /// Layout of two motions (side by side or overlay), onion skins. Default CompareSettings'.
  render::CompareSettings compare_settings;
  /// Called with each warning as it arises (before any later step can fail), e.g. to print it:
  /// the readers' (the input's, then the compare file's), the toon look's fall-back to sticks, the
  /// characters' (a mesh that cannot be drawn). The result's `warnings` hold them too. Empty
  /// (default) = collected only.
  std::function<void(const std::string&)> on_warning;
  /// Called with each note (the two motions' lengths differ: which one holds its last pose); the
  /// result's `notes` hold them too. Empty (default) = collected only.
  std::function<void(const std::string&)> on_note;

  /// Throws Error(invalid_settings, "<field>"): output_rate outside [0, 1000] or not finite
  /// ("output_rate"), camera.validate()'s and style.validate()'s errors ("camera.*", "toon.*"),
  /// compare_settings.validate()'s ("compare.*"), smears or transparent cels without the toon look
  /// ("toon.smear", "toon.transparent"), transparent cels with a compare file ("toon.transparent").
  void validate() const;
};

/// What run_render_file() wrote.
struct RenderFileResult {
  render::VideoFormat format = render::VideoFormat::mp4;  ///< mp4, gif or png (frames or cels)
  int frames = 0;             ///< output frames
  double frame_rate = 24.0;   ///< output fps
  int width = 0, height = 0;  ///< frame size in pixels (side by side: the width rounded down to even)
  render::CameraView view = render::CameraView::side;  ///< the camera's view
  bool follow = false;        ///< the camera's framing: true = follow, false = fixed
  Look look = Look::toon;     ///< the look drawn (sticks when the toon look fell back)
  toon::Smear smear = toon::Smear::off;  ///< the smear drawn (off for sticks)
  int drawings = 0;           ///< the report's kept frames; 0 = not held (no keys report)
  /// The fall-back warning when Look::toon could not run (no OpenGL; sticks drawn instead), as it
  /// is in `warnings`. Empty = drawn as asked.
  std::string fallback;
  std::vector<std::string> warnings;  ///< see RenderJob::on_warning, in order
  std::vector<std::string> notes;     ///< see RenderJob::on_note, in order
};

/// Reads `input` (and job.keys, job.compare), draws and writes `output`: .mp4 (H.264), .gif, or a
/// folder (a path ending in '/' or without an extension) of PNG frames (RGBA cels with
/// style.transparent). Atomic. Throws Error(invalid_settings) for bad settings or an output
/// format koma does not write (before reading anything); what reading throws; Error(bad_data)
/// for fewer than 2 output frames; Error(mismatch) for a report that does not fit the input (its
/// frame count, kept frames or layers' joints); Error(io, "toon.transparent") for transparent
/// cels without OpenGL; what the encoder throws; and whatever `progress` throws (nothing written).
RenderFileResult run_render_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                 const RenderJob& job, const FileProgress& progress = {});

/// The figures of a render run: {"format", "frames", "fps", "duration_s", "width", "height",
/// "camera", "framing", "look", "smear"}, plus "drawings" when held. No timings.
nlohmann::json render_figures(const RenderFileResult& result);

}  // namespace koma::batch
