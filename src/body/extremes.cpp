#include "koma/body/extremes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/body/lowpass.hpp"
#include "koma/core/error.hpp"

namespace koma::body {

void ReversalSettings::validate() const {
  if (!(window > 0 && std::isfinite(window)))
    throw Error(ErrorCode::invalid_settings, "extremes.window", fmt::format("{} must be > 0 seconds", window));
  if (!(min_travel >= 0 && std::isfinite(min_travel)))
    throw Error(ErrorCode::invalid_settings, "extremes.min_travel",
                fmt::format("{} must be finite and >= 0 body sizes", min_travel));
  if (!std::isfinite(cutoff_hz))
    throw Error(ErrorCode::invalid_settings, "extremes.cutoff_hz", "must be finite (<= 0 disables smoothing)");
}

std::vector<Reversal> direction_reversals(std::span<const Vec3> track, double frame_rate, double body_size,
                                          const ReversalSettings& st) {
  st.validate();
  std::vector<Reversal> out;
  const int n = static_cast<int>(track.size());
  if (n < 3 || !(frame_rate > 0) || !(body_size > 0)) return out;
  const std::vector<Vec3> x = lowpass_zero_phase(track, frame_rate, st.cutoff_hz);
  const int w = std::max(1, static_cast<int>(std::lround(st.window * frame_rate)));
  const double min_travel = st.min_travel * body_size;
  Reversal best;
  double best_speed = 0;
  bool in_run = false;
  for (int f = w; f + w < n; ++f) {
    const Vec3 u = x[f] - x[f - w], v = x[f + w] - x[f];
    const double lu = u.norm(), lv = v.norm();
    const bool turn = lu >= min_travel && lv >= min_travel && lu > 0 && lv > 0 && u.dot(v) < 0;
    if (turn) {
      // The turn itself: the slowest frame of the run (where the motion stops to go back).
      const double speed = (x[f + 1] - x[f - 1]).norm();
      if (!in_run || speed < best_speed) {
        best = {f, -u.dot(v) / (lu * lv), std::min(lu, lv) / body_size};
        best_speed = speed;
      }
      in_run = true;
    } else if (in_run) {
      out.push_back(best);
      in_run = false;
    }
  }
  if (in_run) out.push_back(best);
  return out;
}

}  // namespace koma::body
