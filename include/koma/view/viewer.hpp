// The web viewer: a folder with index.html, the page's script and style, the motion as a classic
// script (glTF binaries inlined as base64, so the page works from file:// with no server) and the
// vendored three.js files beside it. The page itself lives in the repository's view/ folder; the
// build copies it, with three.js, into one assets folder that write_viewer() reads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/io/bvh.hpp"

namespace koma::view {

/// One viewport's clip.
struct ViewClip {
  Motion motion;  ///< At the viewer's frame rate (the caller resamples).
  /// The glTF character to play the motion on (ReadResult::gltf_scene); null (default) = the
  /// page draws a procedural figure (capsules on the bones).
  std::shared_ptr<const io::GltfScene> scene;
  std::string label;  ///< Shown above the viewport, e.g. the file name.
  /// Frames that start a new drawing, strictly increasing, first 0. Non-empty: the clip is
  /// written with STEP samplers, one key per drawing, so the page pops from pose to pose and never
  /// interpolates. Empty (default): one LINEAR key per frame.
  std::vector<int> drawings;
};

/// What the page shows besides the two clips.
struct ViewerSettings {
  std::string title = "koma viewer";  ///< Page title.
  /// The key selection report's error-vs-keys curve: (key count, mean squared error in m^2).
  /// Empty (default) = no curve panel.
  std::vector<std::pair<int, double>> curve;
  int chosen_keys = 0;  ///< The key count chosen (marked on the curve); 0 = none.
  std::string source;   ///< Where the drawings came from, shown on the page (e.g. the report's name).
  /// The look the page opens with (the page's toggle and its URL's ?look= change it): "toon"
  /// (default; cel shading and ink lines on paper), "plain" (the materials' smooth shading) or
  /// "flat" (unlit colours, no lines).
  std::string look = "toon";
  /// Smears on the result's fast drawings, as `koma render --smear` draws them: "off" (default),
  /// "smear" (the trailing side of a part that moved more than 12 px at 720 p since the previous
  /// drawing stretched back toward where it was) or "multiples" (fading copies). The page's smear
  /// menu and its URL's ?smear= change it.
  std::string smear = "off";
  /// Throws Error(invalid_settings) for an empty title, an unknown look or smear, a negative chosen_keys, or
  /// curve entries with a non-positive key count or a negative or non-finite error.
  void validate() const;
};

/// Frames of `motion` whose pose differs from the previous frame's (frame 0 always): the drawings
/// of a held clip, so a STEP result read back from a file is written as STEP again. Two poses are
/// equal when every local rotation component and root / joint translation differs by at most
/// `tolerance` (radians-ish quaternion units and metres; default 1e-6, above float32 rounding).
std::vector<int> held_drawings(const Motion& motion, double tolerance = 1e-6);

/// Checks that `drawings` fit a clip of `frame_count` frames: non-empty, strictly increasing,
/// first 0, all below frame_count. Throws Error(mismatch) naming `context` otherwise.
void check_drawings(const std::vector<int>& drawings, int frame_count, const std::string& context);

/// The motion script: `window.KOMA_VIEW = {...};` with the frame rate, frame count, both clips as
/// base64 GLB (characters and skeletons), the curve and the settings. Pure. Throws
/// Error(mismatch) when the clips differ in frame rate or frame count, or a clip's scene does not
/// match its skeleton; Error(mismatch) for drawings that do not fit (check_drawings).
std::string viewer_data_script(const ViewClip& original, const ViewClip& result, const ViewerSettings& settings);

/// The files of the vendored three.js release and of the page that write_viewer() copies from an
/// assets folder, as paths relative to it.
std::vector<std::string> viewer_asset_files();

/// Writes the viewer folder `dir`: index.html, viewer.js, viewer.css, motion.js and three/ (the
/// vendored three.js files and its licence). Everything is built in memory and checked first;
/// each file is then written atomically, so a failure (bad clips, missing assets) writes nothing.
/// `assets` is the folder the build fills (page/ and three/). Throws Error(io) naming the missing
/// file when an asset is absent, with how to get it (make deps runs npm ci in view/, then rebuild).
/// Returns the written files.
std::vector<std::filesystem::path> write_viewer(const std::filesystem::path& dir, const std::filesystem::path& assets,
                                                const ViewClip& original, const ViewClip& result,
                                                const ViewerSettings& settings);

}  // namespace koma::view
