#include "koma/body/lowpass.hpp"

#include <cmath>

namespace koma::body {

std::vector<Vec3> lowpass_zero_phase(std::span<const Vec3> track, double frame_rate, double cutoff_hz) {
  std::vector<Vec3> out(track.begin(), track.end());
  const int n = static_cast<int>(track.size());
  if (!(cutoff_hz > 0) || !(frame_rate > 0) || n < 2) return out;
  const double sigma = std::sqrt(std::log(2.0)) / (2.0 * kPi * cutoff_hz) * frame_rate;
  const int radius = static_cast<int>(std::ceil(3.0 * sigma));
  if (sigma < 0.25 || radius < 1) return out;
  std::vector<double> w(static_cast<size_t>(2 * radius + 1));
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) sum += w[k + radius] = std::exp(-0.5 * k * k / (sigma * sigma));
  for (double& v : w) v /= sum;
  // Linear extension past both ends with the end differences, so a ramp is a fixed point.
  const Vec3 d0 = track[1] - track[0], d1 = track[n - 1] - track[n - 2];
  auto at = [&](int i) -> Vec3 {
    if (i < 0) return track[0] + i * d0;
    if (i >= n) return track[n - 1] + (i - n + 1) * d1;
    return track[i];
  };
  for (int i = 0; i < n; ++i) {
    Vec3 acc = Vec3::Zero();
    for (int k = -radius; k <= radius; ++k) acc += w[k + radius] * at(i + k);
    out[i] = acc;
  }
  return out;
}

}  // namespace koma::body
