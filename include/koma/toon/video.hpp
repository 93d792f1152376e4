// Whole pictures in the toon look: comparison videos (render's captions, badge and timeline over
// toon panels), transparent cels for compositing, and the key-pose contact sheet.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "koma/render/compare.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/character.hpp"
#include "koma/toon/renderer.hpp"

namespace koma::toon {

/// One motion to draw: at the output rate (already held when it is a stepped result, see
/// held_motion) and the character that shows it.
struct ToonClip {
  Motion motion;
  ToonCharacter character;
};

/// The corners of the clip's skinned bounding box on every frame (8 per frame, frame-major), for
/// render::Clip::reach: the framing then shows the whole character, not only its joints.
std::vector<Vec3> mesh_reach(const ToonClip& clip);

/// Paints frames of clips in the toon look: one Renderer per picture size, the clips' characters
/// uploaded once, bone matrices per frame, and a cache per clip so that a frame whose pose and
/// camera equal the previous one's is copied, not drawn again (a held drawing costs nothing).
class ClipPainter {
 public:
  /// Throws as Renderer for an unusable GL or a bad style.
  explicit ClipPainter(const ToonStyle& style);
  ~ClipPainter();
  ClipPainter(const ClipPainter&) = delete;
  ClipPainter& operator=(const ClipPainter&) = delete;

  /// Registers a clip (kept by reference: it must outlive the painter); returns its index. With the
  /// style's smear on and `smears` true, a frame's drawing is smeared against the previous drawing:
  /// the pose just before the first frame of the hold the frame is in (the clip is the held result,
  /// so only drawings that are fast as drawn smear; a clip on 1s compares frame with frame). False
  /// for a reference shown beside the result (the smooth original).
  int add(const ToonClip& clip, bool smears = true);
  /// Draws clip `clip` at frame `frame` through `camera` into `out` (camera.width x camera.height).
  /// `shift` moves the whole figure (metres; the contact sheet centres each key pose), the previous
  /// drawing's pose with it. Throws Error(invalid_settings) for a frame outside the clip.
  void paint(int clip, int frame, const render::Camera& camera, render::Image& out, const Vec3& shift = Vec3::Zero());
  /// GL_RENDERER and GL_VERSION of the context.
  std::string gl_renderer();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The render::FigurePainter that draws `comparison`'s panels with `painter` (the clips are added
/// to it; they and the painter must outlive the returned function): the result, the original (or
/// null), onion skins of the previous drawings and the overlay's ghost, composited over the paper
/// as tinted translucent cels under the result's own cel.
render::FigurePainter figure_painter(ClipPainter& painter, const render::Comparison& comparison, const ToonClip& result,
                                     const ToonClip* original, const render::CompareSettings& settings,
                                     const ToonStyle& style);

/// Writes the comparison video (mp4, gif or PNG folder by `path`) in the toon look: render's
/// framing, captions, NEW/HOLD badge and timeline over toon panels. `result` (and `original`
/// when the comparison has one) must have the comparison's frame count. Atomic. Throws as
/// render::write_comparison_video, Error(mismatch) for clips of other lengths, Error(io) when GL
/// cannot run.
void write_comparison_video(const std::filesystem::path& path, const render::Comparison& comparison,
                            const ToonClip& result, const ToonClip* original, const render::CameraSettings& camera,
                            const ToonStyle& style = {}, const render::CompareSettings& settings = {},
                            const render::EncodeSettings& encode = {}, const render::ProgressFn& progress = {});

/// Writes `clip` as RGBA PNG cels into the folder `path` (frame_00000.png, ...): a transparent
/// background, no shadow, caption or timeline, with the camera framing the whole take (or stepped
/// follow). `comparison` gives the framing (its result is the clip's poses). Atomic.
void write_cels(const std::filesystem::path& path, const render::Comparison& comparison, const ToonClip& clip,
                const render::CameraSettings& camera, const ToonStyle& style = {},
                const render::ProgressFn& progress = {});

/// The key-pose contact sheet with toon cells (see render::render_contact_sheet): one cell per
/// kept frame of `clip`, each pose centred on its pelvis, one scale for all. `poses` are the
/// clip's world poses. Throws as render::render_contact_sheet and Renderer.
render::Image render_contact_sheet(const ToonClip& clip, const WorldPoses& poses, std::span<const int> kept_frames,
                                   const render::ContactSheetSettings& settings = {}, const ToonStyle& style = {});

}  // namespace koma::toon
