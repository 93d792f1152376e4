// Extremes: the frames where an effector reverses direction, the poses animators key first (the
// far point of a swing, the top of a wave, the end of a punch's wind-up). One definition serves the
// keys selector (--keep-extremes) and key times (timing detect): both call direction_reversals().
//
//   position ▲        u = x(f) - x(f - W)       v = x(f + W) - x(f)
//            │      ╭─●─╮                        reversal where u . v < 0 and |u|, |v| >= min_travel
//            │    ╭─╯   ╰─╮
//            │ ───╯       ╰───              key = the slowest frame of each run of such frames
//            └──────────────────▶ frame      W = window seconds; min_travel in body sizes
#pragma once

#include <span>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::body {

/// Settings of direction_reversals(). Every value is in seconds or body sizes
/// (Skeleton::rest_extent(), ~1.7 m for a human), so the same settings find the same extremes at
/// any frame rate and in any length unit.
struct ReversalSettings {
  /// Seconds on each side of a frame over which its incoming and outgoing directions are measured.
  /// Default 0.15 (4 frames at 24 fps, 18 at 120 fps); the window is at least one frame. > 0.
  double window = 0.15;
  /// Each of the two displacements must be at least this long, body sizes. Default 0.012 (2 cm on
  /// a 1.7 m figure): mocap jitter and a hand at rest never qualify. >= 0.
  double min_travel = 0.012;
  /// Cut-off of the zero-phase low-pass applied before measuring, Hz. Default 8; <= 0 = none.
  double cutoff_hz = 8.0;
  /// Throws Error(invalid_settings, "extremes.<field>") for a non-finite or out-of-range value.
  void validate() const;
};

/// One direction reversal of a track.
struct Reversal {
  int frame = 0;           ///< The slowest frame of its run of reversing frames (the turn).
  double sharpness = 0.0;  ///< -cos of the angle between the two displacements at `frame`, in (0, 1].
  double travel = 0.0;     ///< min(|u|, |v|) at `frame`, body sizes.
};

/// Direction reversals of `track` (one position per frame, e.g. a hand relative to the hips)
/// sampled at `frame_rate`, for a figure `body_size` long (metres, > 0). Runs of consecutive
/// reversing frames yield one reversal each, at their slowest frame. In time order. Throws
/// Error(invalid_settings) for bad settings; nothing else (a track shorter than 3 frames has none).
std::vector<Reversal> direction_reversals(std::span<const Vec3> track, double frame_rate, double body_size,
                                          const ReversalSettings& settings = {});

}  // namespace koma::body
