// Dense optical flow between frames, the patent's flow interpolation of a dropped frame, and the
// per-region tracks (area, centroid, mean flow per frame) that key selection measures.
//
//   frame t ──┐                          region r at frame t: area a_r(t), centroid c_r(t),
//             ├─ flow F_t (pixels/frame)  mean flow v_r(t) = mean of F_t over r's pixels
//   frame t+1 ┘                          (the region's velocity from t to t+1)
//
// Flow interpolation (JP7321464B2): a dropped frame between neighbours A and B is A moved by half
// the flow from A to B (and B moved back by the other half, blended):
//
//   M(x) = 0.5 * A(x - 0.5 F(x)) + 0.5 * B(x + 0.5 F(x))
//
// For a region track this is exactly linear interpolation of its flow-integrated position, which
// is how the key selectors (koma::keys, linear interpolation) measure video.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <optional>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/video/decode.hpp"
#include "koma/video/regions.hpp"

namespace koma::video {

/// Dense optical flow algorithm (OpenCV).
enum class FlowMethod : std::uint8_t {
  dis,        ///< Dense Inverse Search (Kroeger et al. 2016), fast; default
  farneback,  ///< Farneback polynomial expansion (2003), slower, smoother
};
/// The flow methods' names.
inline constexpr EnumNames<FlowMethod, 2> kFlowMethodNames{
    {{{FlowMethod::dis, "dis"}, {FlowMethod::farneback, "farneback"}}}, NameCase::exact, "farneback"};

std::string_view to_string(FlowMethod m) noexcept;
/// "dis" / "farneback"; nullopt otherwise.
std::optional<FlowMethod> parse_flow_method(std::string_view text) noexcept;

/// Settings of compute_flow().
struct FlowSettings {
  FlowMethod method = FlowMethod::dis;  ///< default DIS
  /// DIS preset: 0 ultrafast, 1 fast (default), 2 medium (about 3.5x slower; no better on the
  /// motion-energy regression).
  int dis_preset = 1;
  /// Throws Error(invalid_settings) naming the bad field.
  void validate() const;
};

/// A dense flow field: per pixel the displacement (dx, dy) in pixels from one frame to the next.
struct FlowField {
  int width = 0;
  int height = 0;
  std::vector<float> uv;  ///< width * height * 2, interleaved dx, dy

  const float* at(int x, int y) const noexcept { return uv.data() + (static_cast<size_t>(y) * width + x) * 2; }
};

/// Flow from `a` to `b` (same size). Throws Error(mismatch) for different sizes,
/// Error(invalid_settings) for invalid settings.
FlowField compute_flow(const Image& a, const Image& b, const FlowSettings& settings = {});

/// The patent's interpolation of the frame at fraction t in (0, 1) between `a` and `b` (t = 0.5:
/// half the flow), from the flow a -> b (see the file comment). Throws Error(mismatch) when sizes
/// differ, Error(invalid_settings) for t outside [0, 1].
Image interpolate_frame(const Image& a, const Image& b, const FlowField& flow_ab, double t = 0.5);

/// Settings of analyse_video().
struct AnalysisSettings {
  RegionSettings regions;
  FlowSettings flow;
  /// Tracks seen on fewer frames than this are dropped (flicker), >= 1. Default 2.
  int min_track_frames = 2;
  void validate() const;
};

/// One region followed through the video. Lengths are in frame heights (resolution independent),
/// areas in fractions of the frame.
///
/// A track is seen on every frame of its span `first` .. last() (a region that cannot be matched
/// to the previous frame starts a new track), and its arrays cover that span only: memory grows
/// with the regions seen, not with tracks times the video's length. The *_at() accessors answer
/// for any frame of the video.
struct RegionTrack {
  int id = 0;
  Rgb colour{};                 ///< mean colour over the frames where it is present
  int first = 0;                ///< first frame the region is seen on
  std::vector<double> area;     ///< per frame of the span: fraction of the frame's pixels
  std::vector<double> cx, cy;   ///< per frame of the span: centroid, frame heights
  std::vector<double> vx, vy;   ///< per frame t of the span: mean flow from t to t+1 over the region,
                                ///< frame heights per frame (0 on the video's last frame)
  double mean_area = 0;         ///< sum of `area` over the span / the video's frames
  int frames_present = 0;       ///< frames in the span

  /// Last frame the region is seen on.
  int last() const noexcept { return first + frames_present - 1; }
  /// True when the region is seen on frame f.
  bool present(int f) const noexcept { return f >= first && f <= last(); }
  /// Area on frame f (0 when absent).
  double area_at(int f) const noexcept { return present(f) ? area[static_cast<size_t>(f - first)] : 0.0; }
  /// Centroid on frame f: the first seen value before the span, the last seen one after it.
  double cx_at(int f) const noexcept { return cx[static_cast<size_t>(clamp_to_span(f))]; }
  double cy_at(int f) const noexcept { return cy[static_cast<size_t>(clamp_to_span(f))]; }
  /// Mean flow from f to f+1 (0 when absent).
  double vx_at(int f) const noexcept { return present(f) ? vx[static_cast<size_t>(f - first)] : 0.0; }
  double vy_at(int f) const noexcept { return present(f) ? vy[static_cast<size_t>(f - first)] : 0.0; }

 private:
  int clamp_to_span(int f) const noexcept { return f < first ? 0 : f > last() ? frames_present - 1 : f - first; }
};

/// The analysis of a whole video.
struct VideoAnalysis {
  int frames = 0;
  int width = 0, height = 0;    ///< analysed frame size, pixels
  double frame_rate = 0;        ///< frames per second
  std::vector<RegionTrack> tracks;
  /// Per frame t: motion energy sum_r area_r(t) |v_r(t)|^2 (frame heights^2 per frame^2): the
  /// area-weighted mean squared region velocity. Last frame 0.
  std::vector<double> motion_energy;
  /// Per frame t: regions seen.
  std::vector<int> region_counts;
};

/// Supplies frames one at a time: fills `frame` and returns true, or returns false at the end.
using FrameSource = std::function<bool(Image& frame)>;

/// Segments, tracks and measures every frame from `source` (all of one size), streaming: a few
/// frames are in flight (two per core), and what is kept per frame is the regions' statistics.
/// Pipelined on every core (oneTBB parallel_pipeline): `source` is called in order on one thread
/// at a time (not necessarily the caller's), each frame is segmented and the flow from its
/// predecessor computed in parallel with other frames, and regions are matched to tracks in frame
/// order. `progress` is called in frame order from that last stage. The result does not depend on
/// the number of cores. `expected_frames` (0 = unknown) scales the progress fractions.
/// Throws Error(bad_file) when there are no frames, Error(mismatch) when sizes change,
/// Error(bad_data) when no frame has a region (e.g. a single flat colour), Error(invalid_settings).
VideoAnalysis analyse_video(const FrameSource& source, double frame_rate, const AnalysisSettings& settings,
                            int expected_frames = 0, const std::function<void(double)>& progress = {});
/// The same over frames in memory.
VideoAnalysis analyse_video(const std::vector<Image>& frames, double frame_rate, const AnalysisSettings& settings,
                            const std::function<void(double)>& progress = {});

}  // namespace koma::video
