// Cartoon filter throughput in channel-samples per second (one output value of one channel), with
// a fixed sigma, against a plain Gaussian convolution of the same data (same truncation, same
// linear end extension, same blocked loop): the baseline any smoothing filter pays.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "koma/cartoon/filter.hpp"
#include "koma/core/sample.hpp"

namespace {

constexpr int kFrames = 1 << 16;  // a long clip: 65536 frames (18 min at 60 fps)

std::vector<double> long_channel() {
  std::vector<double> x(kFrames);
  for (int i = 0; i < kFrames; ++i) x[i] = std::sin(0.05 * i) + 0.3 * std::sin(0.31 * i) + 0.001 * i;
  return x;
}

void BM_CartoonFixedSigma(benchmark::State& state) {
  const double sigma = static_cast<double>(state.range(0));
  const std::vector<double> x = long_channel();
  std::vector<double> out(x.size()), scratch(x.size() + 2 * (static_cast<size_t>(std::ceil(5 * sigma)) + 2));
  for (auto _ : state) {
    koma::cartoon::filter_channel(x, sigma, 2.0, scratch, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["channel_samples_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kFrames, benchmark::Counter::kIsRate);
}

// Baseline: y = g_sigma * x with the same truncation (+-ceil(5 sigma), as filter_channel), extension
// and loop structure.
void BM_GaussianBaseline(benchmark::State& state) {
  const double sigma = static_cast<double>(state.range(0));
  const std::vector<double> x = long_channel();
  const int r = std::max(1, static_cast<int>(std::ceil(5 * sigma)));
  std::vector<double> g(2 * r + 1);
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += g[k + r] = std::exp(-0.5 * k * k / (sigma * sigma));
  for (double& v : g) v /= sum;
  std::vector<double> buf(x.size() + 2 * r), out(x.size());
  for (auto _ : state) {
    const int n = static_cast<int>(x.size());
    const double d0 = x[1] - x[0], d1 = x[n - 1] - x[n - 2];
    for (int j = 0; j < r; ++j) buf[j] = x[0] - (r - j) * d0;
    std::copy(x.begin(), x.end(), buf.begin() + r);
    for (int j = 0; j < r; ++j) buf[r + n + j] = x[n - 1] + (j + 1) * d1;
    constexpr int kBlock = 1024;
    for (int i0 = 0; i0 < n; i0 += kBlock) {
      const int i1 = std::min(n, i0 + kBlock);
      double* __restrict o = out.data();
      for (int i = i0; i < i1; ++i) o[i] = 0.0;
      for (int t = 0; t < 2 * r + 1; ++t) {
        const double w = g[t];
        const double* __restrict b = buf.data() + t;
        for (int i = i0; i < i1; ++i) o[i] += w * b[i];
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["channel_samples_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kFrames, benchmark::Counter::kIsRate);
}

// Adaptive sigma (FFT per frame) on the same channel, for reference.
void BM_CartoonAdaptiveSigma(benchmark::State& state) {
  std::vector<double> x = long_channel();
  x.resize(8192);
  koma::cartoon::FilterSettings s;
  for (auto _ : state) {
    const auto sigma = koma::cartoon::adaptive_sigma(x, static_cast<int>(x.size()), 1, s);
    benchmark::DoNotOptimize(koma::cartoon::filter_channel(x, sigma, 2.0));
  }
  state.counters["channel_samples_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 8192, benchmark::Counter::kIsRate);
}

// Whole motion: the sample walk, adaptive sigma, planted feet.
void BM_CartoonMotionKeepFeet(benchmark::State& state) {
  koma::SampleSettings ss;
  ss.walk_cycles = 10;
  const koma::Motion m = koma::make_sample_motion(ss);
  koma::cartoon::CartoonSettings cs;
  cs.strength = 8;
  cs.keep_feet = true;
  for (auto _ : state) benchmark::DoNotOptimize(koma::cartoon::cartoon_motion(m, cs));
  state.counters["frames_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * m.frame_count, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_CartoonFixedSigma)->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(BM_GaussianBaseline)->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(BM_CartoonAdaptiveSigma);
BENCHMARK(BM_CartoonMotionKeepFeet);
BENCHMARK_MAIN();
