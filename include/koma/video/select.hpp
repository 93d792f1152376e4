// Key frames of a video: region tracks become a keys::FeatureMatrix and the ONE selection engine
// of koma::keys (exact, anneal, cumsum, uniform) chooses the frames; the held "second moving
// image" shows the latest key on every output frame.
//
// Features per region r (2 + 1 coordinates, scaled by sqrt(weight_r), weight_r = mean area):
//   p_r(t) = c_r(0) + sum_{s<t} v_r(s)   flow-integrated position (frame heights)
//   a_r(t) * area_weight                 area (fraction of the frame)
// Under the velocity metric with linear interpolation a segment i..j costs
//   sum_k |p(k+1) - p(k)|^2 - |p(j) - p(i)|^2 / (j - i)  =  sum_k |v(k) - mean v|^2
// i.e. the MSE of region velocity (and of area change) against the flow interpolation of the
// dropped frames, weighted by area — the patent's measure, selected optimally by `exact`.
//
// Rates: the tracks are resampled to the output rate first (default 24 fps; linear in time), the
// keys are chosen among output frames, and output frame o shows the source frame nearest to the
// time of its key:
//
//   source 12 fps   0     1     2     3          output frames = round(frames * 24 / 12)
//   output 24 fps   0  1  2  3  4  5  6  7       key k shows source round(k * 12 / 24)
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/keys/metric.hpp"
#include "koma/keys/select.hpp"
#include "koma/render/encode.hpp"
#include "koma/video/flow.hpp"

namespace koma::video {

/// Everything select_video_keys() needs. Give at most one of keys, on, max_error; none = on 2s.
struct VideoKeySettings {
  double output_rate = 24;  ///< frames per second of the held video, > 0; 0 = the source rate
  keys::Selector selector = keys::Selector::exact;           ///< default exact (optimal)
  keys::Metric metric = keys::Metric::velocity;              ///< default velocity (MSE of region velocity)
  keys::Interpolation interpolation = keys::Interpolation::linear;  ///< linear (= flow interpolation) or cubic
  int keys = 0;             ///< keep n keys (>= 2)
  int on = 0;               ///< keep as many keys as "on Ns" would (uniform: exactly that grid)
  double max_error = -1;    ///< fewest keys whose mean squared error (frame heights^2) <= max_error
  keys::HoldConstraints constraints;  ///< min/max hold, locked output frames
  keys::AnnealSettings anneal;
  keys::CumsumSettings cumsum;
  double area_weight = 1;   ///< scale of the area coordinate relative to positions, >= 0 (default 1)

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// Number of output frames for `frames` source frames: round(frames * out / src), at least 1.
int output_frame_count(int frames, double source_rate, double output_rate);
/// Source frame shown at output frame o: round(o * src / out), clamped to the last frame.
int source_frame_at(int output_frame, int source_frames, double source_rate, double output_rate);

/// The features of the tracks (see the file comment), one row per source frame. Pure.
/// Throws Error(bad_data) when there are no tracks.
keys::FeatureMatrix region_features(const VideoAnalysis& analysis, double area_weight = 1);
/// Resamples feature rows linearly in time to `output_frames` rows at `output_rate`.
keys::FeatureMatrix resample_features(const keys::FeatureMatrix& features, double source_rate, double output_rate,
                                      int output_frames);

/// The chosen keys and the hold of a video.
struct VideoKeySelection {
  int source_frames = 0;
  double source_rate = 0;
  int output_frames = 0;
  double output_rate = 0;
  std::vector<int> keys;              ///< output frames kept, sorted, first 0, last output_frames-1
  std::vector<int> key_sources;       ///< source frame each key shows
  std::vector<int> shown;             ///< per output frame: the source frame it shows (held)
  std::vector<int> drawings;          ///< per output frame: 1-based drawing number
  std::vector<double> segment_errors; ///< per segment: its share of `error`
  double error = 0;                   ///< mean squared error per region and frame (frame heights^2)
  double total = 0;                   ///< sum of segment costs
  std::vector<keys::CurvePoint> curve;  ///< exact: optimal error for every n up to the answer
  int iterations = 0;
};

/// Chooses the key frames with the keys selectors. Lossy. Throws Error(bad_data) when the video
/// has fewer than 2 output frames or no tracks, Error(invalid_settings) for settings or
/// constraints that cannot be met.
VideoKeySelection select_video_keys(const VideoAnalysis& analysis, const VideoKeySettings& settings,
                                    const std::function<void(double)>& progress = {});

/// The JSON report: input, settings, analysis summary (tracks, per-frame motion energy), keys,
/// per-segment errors, error curve, timings.
std::string video_report_json(const VideoAnalysis& analysis, const VideoKeySelection& selection,
                              const VideoKeySettings& settings, const AnalysisSettings& analysis_settings,
                              std::string_view input);
/// The exposure sheet CSV: "frame,sheet_frame,time_s,drawing,source_frame" per output frame.
std::string video_exposure_sheet_csv(const VideoKeySelection& selection);

/// A contact sheet: the key images (one per key, in order) in a grid of `columns`, each cell
/// scaled to `cell_width` pixels wide and labelled with the key's output frame and hold length.
/// Throws Error(mismatch) when the image count differs from the key count.
Image contact_sheet(const std::vector<Image>& key_images, const VideoKeySelection& selection, int columns = 6,
                    int cell_width = 240);

/// The same picture as the render module's RGBA image (alpha 255), for its PNG and video writers.
render::Image to_render_image(const Image& image);

/// Writes the held video through the render module's encoder (render::VideoWriter): decodes
/// `input` again (at `decode` settings) and writes every output frame as the source frame it
/// shows, at selection.output_rate (encode.frame_rate is ignored), streaming (two frames in
/// memory). The format follows `output` (render::video_format_for: .mp4 H.264, .gif, or a folder of
/// PNG frames). Also returns the key images (for the contact sheet) when `key_images` is not null.
/// Atomic: nothing is left at `output` on failure. Throws like VideoReader and render::VideoWriter
/// (Error(invalid_settings) for another extension), and Error(mismatch) when the video has fewer
/// frames than the selection was made for.
void write_held_video(const std::filesystem::path& input, const std::filesystem::path& output,
                      const VideoKeySelection& selection, const DecodeSettings& decode,
                      const render::EncodeSettings& encode = {}, std::vector<Image>* key_images = nullptr,
                      const std::function<void(double)>& progress = {});

}  // namespace koma::video
