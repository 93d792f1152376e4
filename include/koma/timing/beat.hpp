// Beat and tempo of rhythmic motion (dance, walk): a regular grid t_k = phase + k * period fitted to
// key times, for reports and for re-timing onto an example's beat (retime's on_beat).
//
//   keys   |    |    |         |    |    |         |     (a salsa basic: steps on 1 2 3, 5 6 7)
//   grid   +----+----+----+----+----+----+----+----+     period = argmax R(P), the longest of the
//          0    1    2    3    4    5    6    7          near-best (a grid at P/2 fits as well)
//
//   R(P) = | sum_i w_i exp(2 pi i t_i / P) | / sum_i w_i     (resultant length of the key phases)
//
// The period is searched on a log grid, refined by a parabola, then period and phase are the
// least-squares line through (beat index, key time). Pure; deterministic.
#pragma once

#include <span>

namespace koma::timing {

/// Settings of fit_beat().
struct BeatSettings {
  double min_bpm = 40.0;   ///< Slowest tempo searched, beats per minute. > 0.
  double max_bpm = 300.0;  ///< Fastest, > min_bpm (salsa steps run near 250).
  /// A period whose R is at least this fraction of the best R counts as near-best; the longest
  /// near-best period is the beat (its halves fit as well and are not the beat). In (0, 1]. Default 0.9.
  double near_best = 0.9;
  /// A key is on the beat when it lies within this fraction of the period of its grid line.
  /// Default 0.15. In (0, 0.5].
  double on_beat_tolerance = 0.15;
  /// Throws Error(invalid_settings, "beat.<field>").
  void validate() const;
};

/// A fitted beat grid.
struct Beat {
  double period = 0.0;      ///< Seconds per beat; 0 when no beat was fitted (fewer than 3 keys).
  double phase = 0.0;       ///< Time of a grid line in [0, period), seconds: beats at phase + k * period.
  double tempo_bpm = 0.0;   ///< 60 / period (0 when none).
  /// In [0, 1]: how far the keys' resultant length R at the period is above chance
  /// ((R - R0) / (1 - R0), R0 = 2 / sqrt(n) for n keys: random times give R near 1 / sqrt(n)),
  /// times the fraction of keys on the beat.
  double confidence = 0.0;
  double resultant = 0.0;   ///< R at the period, in [0, 1].
  int keys = 0;             ///< Key times fitted.
  int on_beat = 0;          ///< Of those, within on_beat_tolerance * period of a grid line.
  double rms_seconds = 0.0; ///< RMS distance of the on-beat keys from their grid lines.

  bool found() const noexcept { return period > 0; }
  /// The grid time nearest `t`, seconds (t itself when no beat was found).
  double nearest(double t) const noexcept;
};

/// The beat grid of key times `times` (seconds, any order), each weighted by `weights` (same size,
/// >= 0; empty = all 1). Fewer than 3 times, or all weights 0: Beat{} (not found). Throws
/// Error(invalid_settings) for bad settings or mismatched sizes, Error(bad_data) for a
/// non-finite time or weight.
Beat fit_beat(std::span<const double> times, std::span<const double> weights = {}, const BeatSettings& settings = {});

}  // namespace koma::timing
