// Plots as SVG or PNG (chosen by the path's extension), drawn with Cairo. Every function takes plain
// vectors, so results of other modules (key selection, gait spectra, timing) can be plotted without
// render depending on them. Files are written atomically.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "koma/render/figure.hpp"

namespace koma::render {

/// Size and text of a plot.
struct PlotSettings {
  int width = 800;       ///< Pixels (SVG: points); 200 .. 8192; default 800.
  int height = 450;      ///< Pixels; 150 .. 8192; default 450.
  std::string title;     ///< Heading ("" = a default per plot kind).
  std::string x_label;   ///< Axis label ("" = a default per plot kind).
  std::string y_label;   ///< Axis label ("" = a default per plot kind).
  bool log_y = false;    ///< Logarithmic y axis (values <= 0 are clipped to the smallest positive).

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// Error against number of kept keys (the selector's curve), the chosen count marked with a dot
/// and a label. `key_counts` and `errors` are parallel (same length >= 1, finite errors >= 0,
/// increasing counts); `chosen_keys` must be one of the counts (or 0 for none). Throws
/// Error(bad_data) for mismatched or invalid series, Error(invalid_settings) for an unknown
/// extension (use .svg or .png), Error(io) when the file cannot be written.
void plot_error_curve(const std::filesystem::path& path, std::span<const int> key_counts,
                      std::span<const double> errors, int chosen_keys, const PlotSettings& settings = {});

/// Error per output frame (e.g. the hold error a viewer sees), kept frames drawn as ticks along
/// the bottom. `frame_rate` > 0 labels the top axis in seconds. Throws as plot_error_curve.
void plot_frame_error(const std::filesystem::path& path, std::span<const double> errors,
                      std::span<const int> kept_frames, double frame_rate, const PlotSettings& settings = {});

/// Gait spectra: for each joint a group of bars, one per harmonic (1..K), bar height = amplitude
/// (e.g. radians). `amplitudes[j][h]` is joint j's harmonic h+1; every row has the same length >= 1
/// and `joints` names the rows. Throws as plot_error_curve.
void plot_spectra(const std::filesystem::path& path, std::span<const std::string> joints,
                  std::span<const std::vector<double>> amplitudes, const PlotSettings& settings = {});

/// Key times per effector on a timeline: one lane per effector (e.g. LeftFoot, RightHand), a mark
/// at every key time (seconds, within [0, duration]). Throws as plot_error_curve, and
/// Error(bad_data) for a key time outside [0, duration] or a duration <= 0.
void plot_key_timeline(const std::filesystem::path& path, std::span<const std::string> effectors,
                       std::span<const std::vector<double>> key_times, double duration,
                       const PlotSettings& settings = {});

}  // namespace koma::render
