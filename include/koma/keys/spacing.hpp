// Spacing: where the drawings go between two key poses. On a timesheet the key animator draws a
// timing chart beside each key: a ruler from this key to the next with a tick per inbetween, at
// the share of the way the inbetween has travelled. Inbetweens crowd toward a key (tsume) and the
// move between them snaps; or they are even and it floats. space_drawings() places inbetweens by
// such a chart: every `on` output frames after a key, an inbetween shows the source pose at the
// point where the chart's fraction of the *pose path* between the two keys is covered.
//
//   keys at output frames 0 and 8, on 2s        0   1   2   3   4   5   6   7   8
//   drawings                                    K       i       i       i       K
//   time fraction u                             0      .25     .50     .75      1
//   chart slow-in-out: share of the pose path   0      .16     .50     .84      1
//
//        K |--+------+------+--| K      the chart's ruler: ticks crowd toward both keys
//
// The pose path is the sum of every joint's world path (forward kinematics of the source), so a
// fraction is a share of the distance travelled, as on paper. Key poses never move: a key drawing
// shows exactly the pose resample() gives on its frame.
//
// Charts (u = time fraction of the inbetween in its gap, i = 1..m its index, m inbetweens):
//   source        the source's own pose on the inbetween's frame (the capture's spacing); its
//                 fraction is measured, not chosen
//   even          u                      (the same distance every frame)
//   slow-in       1 - (1 - u)^2          (arrives slowly: crowds toward the next key)
//   slow-out      u^2                    (leaves slowly: crowds toward its own key)
//   slow-in-out   u^2 (3 - 2u)           (both)
//   halves        1 - 2^-i               (1/2, 3/4, 7/8: each inbetween half the distance of the
//                                         previous one toward the next key)
//   custom        a list of fractions, increasing, in [0, 1]: the i-th inbetween's when the gap
//                 has exactly that many; otherwise read as a curve through (k/(n+1), f_k) and
//                 (0, 0), (1, 1), taken at u
//
// Lossy (inbetween poses are interpolated from the source). Pure: no I/O, no globals.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::keys {

/// The named charts (plus custom: a list of fractions).
enum class ChartKind : std::uint8_t { source, even, slow_in, slow_out, slow_in_out, halves, custom };

/// "source", "even", "slow-in", "slow-out", "slow-in-out", "halves", "custom".
std::string_view to_string(ChartKind kind) noexcept;
/// A chart name (also with underscores: "slow_in"), or nullopt. "custom" is not a name one parses.
std::optional<ChartKind> parse_chart_kind(std::string_view text) noexcept;

/// A timing chart: a named one, or a custom list of fractions.
struct Chart {
  ChartKind kind = ChartKind::source;  ///< default source: the capture's own spacing
  std::vector<double> fractions;       ///< custom only: shares of the pose path, increasing, in [0, 1]

  /// Throws Error(invalid_settings, "chart") for a custom chart with no fraction, a fraction
  /// outside [0, 1] or not finite, or fractions that do not increase (naming the one that breaks
  /// it), and for fractions given with a named chart.
  void validate() const;
  /// The chart as parse_chart() reads it back: "slow-in", or the fractions "0.1 0.35 0.8".
  std::string name() const;
};

/// A chart from text: a name ("even", "slow-in-out", ...) or a list of fractions separated by
/// commas or spaces ("0.1,0.35,0.8"). Validated. Throws Error(invalid_settings, "chart") naming
/// the accepted names, or the fraction that is not a number, outside [0, 1] or not increasing.
Chart parse_chart(std::string_view text);

/// The chart's fractions for the inbetweens of one gap, the i-th at time fraction times[i] (in
/// (0, 1), increasing). Empty for source (its fractions are measured on the motion).
std::vector<double> chart_fractions(const Chart& chart, std::span<const double> times);

/// The chart of one gap, named by the key frame that opens it.
struct GapChart {
  int start = 0;  ///< output frame of the key that opens the gap
  Chart chart;
};

/// Settings of space_drawings().
struct SpacingSettings {
  int on = 2;        ///< an inbetween every `on` output frames after each key (>= 1; default 2 = on 2s)
  Chart chart;       ///< every gap's chart (default source)
  std::vector<GapChart> gaps;  ///< charts of single gaps, overriding `chart` (each `start` once)

  /// Throws Error(invalid_settings) naming the field ("spacing.on", "chart", "spacing.gaps").
  void validate() const;
};

/// Whether a drawing is a key pose or an inbetween.
enum class DrawingKind : std::uint8_t { key, inbetween };
/// "key" or "inbetween".
std::string_view to_string(DrawingKind kind) noexcept;

/// One drawing of the spaced result.
struct Drawing {
  int frame = 0;              ///< output frame where it is first shown (held until the next drawing)
  double source_frame = 0;    ///< position in the source motion's frames of the pose it shows
  double source_time = 0;     ///< the same in seconds (source_frame / the source's rate)
  DrawingKind kind = DrawingKind::key;
  double chart = 0;           ///< share of its gap's pose path covered: 0 for a key; source chart: measured
  int gap = 0;                ///< index into Spacing::gaps of the gap it lies in (a key: the gap it opens;
                              ///< the last key: gaps.size())
};

/// One gap between consecutive keys.
struct GapSpacing {
  int start = 0, end = 0;     ///< output frames of its keys
  Chart chart;                ///< the chart it was spaced by
  int inbetweens = 0;         ///< inbetweens drawn
  bool held = false;          ///< too short for an inbetween (end - start <= on): its first key is held
  double path = 0;            ///< length of the pose path, metres summed over joints
};

/// The result of space_drawings().
struct Spacing {
  int frames = 0;             ///< output frames
  double frame_rate = 0;      ///< output rate (fps)
  int on = 2;                 ///< the inbetweens' step
  std::vector<Drawing> drawings;  ///< every drawing, by frame
  std::vector<GapSpacing> gaps;   ///< keys.size() - 1 gaps

  /// Output frames of the drawings, increasing (the frames a STEP glTF needs a key on).
  std::vector<int> drawing_frames() const;
};

/// Places inbetweens between `keys` (output frames at `rate`, increasing, within the output's
/// resampled_frame_count frames) by the settings' charts, measuring the pose path on `source` (at
/// its own rate; resampling happens here). Throws Error(invalid_settings, "chart") with fewer than
/// 2 keys, Error(invalid_settings, "keys") for keys not increasing or out of range,
/// Error(mismatch, "spacing.gaps") for a gap chart whose `start` is not a key, Error(bad_data) for
/// an invalid motion, and what SpacingSettings::validate() throws.
Spacing space_drawings(const Motion& source, std::span<const int> keys, double rate, const SpacingSettings& settings);

/// The spaced motion at the output rate: every frame shows its latest drawing's pose, sampled from
/// `source` at the drawing's source_frame (a key's pose is bit for bit resample()'s on that frame).
/// Frames before the first drawing show it. Throws Error(mismatch) when `spacing` was made for a
/// source of another length.
Motion spaced_motion(const Motion& source, const Spacing& spacing);

}  // namespace koma::keys
