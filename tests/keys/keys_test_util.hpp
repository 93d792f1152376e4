// Helpers for the keys tests: random features and an independent error evaluation.
#pragma once

#include <random>
#include <vector>

#include "koma/keys/metric.hpp"
#include "koma/keys/select.hpp"

namespace koma::keys::test {

inline FeatureMatrix random_features(int frames, int points, int coords, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, 1);
  FeatureMatrix x;
  x.frames = frames;
  x.coords_per_point = coords;
  x.dims = points * coords;
  for (int p = 0; p < points; ++p) {
    x.point_ids.push_back(p);
    x.weights.push_back(1.0);
  }
  x.values.resize(static_cast<size_t>(frames) * x.dims);
  // A random walk: smooth-ish like motion, with an offset far from 0 to exercise the prefix sums.
  for (int d = 0; d < x.dims; ++d) {
    double v = 5.0 + nd(rng), vel = 0;
    for (int f = 0; f < frames; ++f) {
      vel += 0.3 * nd(rng);
      v += vel;
      x.row(f)[d] = v;
    }
  }
  return x;
}

// Reconstructs every frame from the keys (per-feature interpolation or the held key) and measures
// the metric over the whole sequence, without segment costs.
inline double independent_error(const FeatureMatrix& x, Interpolation interp, Metric metric, const std::vector<int>& keys,
                                const std::vector<std::vector<double>>* recon_override = nullptr) {
  const int N = x.frames, D = x.dims;
  std::vector<std::vector<double>> r(static_cast<size_t>(N), std::vector<double>(static_cast<size_t>(D), 0.0));
  std::vector<char> is_key(static_cast<size_t>(N), 0);
  for (int k : keys) is_key[k] = 1;
  for (size_t a = 0; a + 1 < keys.size(); ++a) {
    const int i = keys[a], j = keys[a + 1];
    for (int k = i + 1; k < j; ++k) {
      std::vector<double> hat(static_cast<size_t>(D));
      if (metric == Metric::hold) {
        for (int d = 0; d < D; ++d) hat[d] = x.row(i)[d];
      } else if (recon_override) {
        hat = (*recon_override)[k];
      } else {
        interpolate_frame(x, interp, i, j, k, hat);
      }
      for (int d = 0; d < D; ++d) r[k][d] = x.row(k)[d] - hat[d];
    }
  }
  double e = 0;
  for (int k = 0; k < N; ++k) {
    for (int d = 0; d < D; ++d) {
      double v = 0;
      if (metric == Metric::position || metric == Metric::hold) v = r[k][d];
      else if (metric == Metric::velocity) v = k + 1 < N ? r[k + 1][d] - r[k][d] : 0.0;
      else v = (k > 0 && k + 1 < N && !is_key[k]) ? r[k + 1][d] - 2 * r[k][d] + r[k - 1][d] : 0.0;
      e += v * v;
    }
  }
  return e;
}

// Every valid key set with n keys (brute force over subsets of the inner frames).
template <class Fn>
void for_each_selection(int frames, const HoldConstraints& c, int n, Fn&& fn) {
  const int inner = frames - 2;
  for (std::uint32_t mask = 0; mask < (1u << inner); ++mask) {
    if (__builtin_popcount(mask) != n - 2) continue;
    std::vector<int> keys{0};
    for (int b = 0; b < inner; ++b)
      if (mask & (1u << b)) keys.push_back(b + 1);
    keys.push_back(frames - 1);
    if (satisfies(keys, frames, c)) fn(keys);
  }
}

}  // namespace koma::keys::test
