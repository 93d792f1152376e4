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
//
// Memory stays bounded on videos of any length. The longest hold defaults to 2 s of output (as for
// skeletons), so no segment is longer than H output frames; a region's features change only while
// it is seen (before, it sits at its first position with area 0; after, at its last position with
// area 0). Tracks whose changes are more than H + 4 frames apart therefore share a column of the
// feature matrix (each continuing from where the previous one stopped): every segment of at most
// H frames sees at most one of them changing, so its cost is exactly the cost with one column per
// track, and the matrix is frames x (3 x the most tracks alive within H frames) instead of
// frames x 3 x all tracks:
//
//   column 0   |== track 4 ==|.......H + 4.......|==== track 9 ====|.....
//   column 1   |======== track 2 ========|...........H + 4..........|== track 12 ==
//
// The analysis keeps each track's statistics for the frames it is seen on only (flow.hpp), and the
// held video and the contact sheet come from a second decoding pass, streamed: one source frame
// and one row of contact-sheet cells are in memory at a time.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
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
  /// When constraints.max_hold is 0: the longest hold in seconds of output (default 2 s = 48 frames
  /// at 24 fps), raised as keys::default_max_hold() does; 0 = unlimited (the feature matrix then
  /// has three columns per track and the cost table frames^2 / 2 entries: short clips only).
  double max_hold_seconds = 2;

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

/// The features key selection measures: region_features() resampled to `output_frames` rows at
/// `output_rate` (0 = the source rate), with tracks packed into shared columns for segments of at
/// most `reach` output frames (see the file comment; reach <= 0 or >= output_frames - 1: one
/// column per track). Every segment of at most `reach` frames costs what it costs with one column
/// per track, up to rounding. The values are scaled by sqrt(columns / tracks) so that costs
/// divided by the matrix's point count are per track, as without packing. Pure. Throws
/// Error(bad_data) when there are no tracks.
struct PackedFeatures {
  keys::FeatureMatrix features;
  int tracks = 0;   ///< tracks measured
  int columns = 0;  ///< feature points (column triples) they share
};
PackedFeatures packed_region_features(const VideoAnalysis& analysis, double area_weight, double output_rate,
                                      int output_frames, int reach);

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
  int max_hold = 0;                   ///< longest hold allowed, output frames (the default applied)
  int feature_columns = 0;            ///< region tracks share this many feature points (packed)
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
/// scaled to `cell_width` pixels wide and labelled `#drawing f<output frame> x<hold>`. For a few
/// keys in memory; ContactSheetWriter draws the same picture streaming. Throws Error(mismatch)
/// when the image count differs from the key count, Error(invalid_settings) for columns < 1 or
/// cell_width < 16.
Image contact_sheet(const std::vector<Image>& key_images, const VideoKeySelection& selection, int columns = 6,
                    int cell_width = 240);

/// Writes the contact sheet of contact_sheet() as the key frames arrive (a PNG through the render
/// module's streaming writer): only the current row of thumbnails is in memory, so a sheet of
/// thousands of keys costs a few hundred kilobytes. Atomic: the PNG appears at `path` in
/// finish(); destroying an unfinished writer leaves nothing.
class ContactSheetWriter {
 public:
  /// For `selection`'s keys of frames `frame_width` x `frame_height`. Throws Error(invalid_settings)
  /// as contact_sheet(), Error(bad_data) when there are no keys, Error(io) naming the path when it
  /// cannot be written.
  ContactSheetWriter(const std::filesystem::path& path, const VideoKeySelection& selection, int frame_width,
                     int frame_height, int columns = 6, int cell_width = 240);
  ~ContactSheetWriter();
  ContactSheetWriter(const ContactSheetWriter&) = delete;
  ContactSheetWriter& operator=(const ContactSheetWriter&) = delete;
  /// The next key's frame, in key order. Throws Error(mismatch) for a frame of another size or one
  /// key too many.
  void add(const Image& key_frame);
  /// Writes the last row and renames the PNG into place. Throws Error(mismatch) when keys are missing.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The same picture as the render module's RGBA image (alpha 255), for its PNG and video writers.
render::Image to_render_image(const Image& image);

/// Called with each key's source frame, in key order (e.g. ContactSheetWriter::add).
using KeyFrameSink = std::function<void(const Image& key_frame)>;

/// Writes the held video through the render module's encoder (render::VideoWriter): decodes
/// `input` again (at `decode` settings) and writes every output frame as the source frame it
/// shows, at selection.output_rate (encode.frame_rate is ignored), streaming (one decoded frame in
/// memory; a held frame is converted once and sent again). The format follows `output`
/// (render::video_format_for: .mp4 H.264, .gif, or a folder of PNG frames). Hands each key's
/// frame to `on_key` when given (the contact sheet). Atomic: nothing is left at `output` on
/// failure. Throws like VideoReader and render::VideoWriter (Error(invalid_settings) for another
/// extension), and Error(mismatch) when the video has fewer frames than the selection was made for.
void write_held_video(const std::filesystem::path& input, const std::filesystem::path& output,
                      const VideoKeySelection& selection, const DecodeSettings& decode,
                      const render::EncodeSettings& encode = {}, const KeyFrameSink& on_key = {},
                      const std::function<void(double)>& progress = {});

}  // namespace koma::video
