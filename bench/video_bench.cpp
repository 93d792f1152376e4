// Video analysis throughput at 640x360: regions + flow per frame (frames/s), DIS vs Farneback,
// with the bare colour segmentation as the baseline measured in the same run. BM_SegmentOnly/0 is
// segmentation without the join of near-equal neighbours (merge_distance = 0), /1 the default.
#include <benchmark/benchmark.h>

#include <cmath>

#include "koma/video/flow.hpp"
#include "koma/video/regions.hpp"

using namespace koma::video;

namespace {
// 48 frames of three flat-coloured discs moving at different speeds on grey.
std::vector<Image> clip() {
  std::vector<Image> v;
  for (int f = 0; f < 48; ++f) {
    Image im = Image::black(640, 360);
    const double c[3][3] = {{100 + 6.0 * f, 120, 40}, {500 - 3.0 * f, 200, 60}, {320, 80 + 2.0 * f, 30}};
    const std::uint8_t col[3][3] = {{220, 40, 40}, {40, 200, 60}, {40, 60, 220}};
    for (int y = 0; y < 360; ++y) {
      for (int x = 0; x < 640; ++x) {
        std::uint8_t* p = im.at(x, y);
        p[0] = p[1] = p[2] = 230;
        for (int k = 0; k < 3; ++k) {
          if (std::hypot(x - c[k][0], y - c[k][1]) <= c[k][2]) p[0] = col[k][0], p[1] = col[k][1], p[2] = col[k][2];
        }
      }
    }
    v.push_back(std::move(im));
  }
  return v;
}
const std::vector<Image>& frames() {
  static const std::vector<Image> v = clip();
  return v;
}

void BM_SegmentOnly(benchmark::State& state) {
  frames();  // build the clip outside the timed loop
  Segmentation seg;
  std::vector<std::int32_t> scratch;
  RegionSettings rs;
  if (state.range(0) == 0) rs.merge_distance = 0;
  for (auto _ : state) {
    for (const Image& im : frames()) {
      segment_regions(im, rs, seg, scratch);
      benchmark::DoNotOptimize(seg.regions.data());
    }
  }
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames().size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SegmentOnly)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Analyse(benchmark::State& state) {
  AnalysisSettings s;
  s.flow.method = state.range(0) == 0 ? FlowMethod::dis : FlowMethod::farneback;
  s.flow.dis_preset = state.range(0) == 0 ? static_cast<int>(state.range(1)) : 1;
  frames();
  for (auto _ : state) benchmark::DoNotOptimize(analyse_video(frames(), 24, s));
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames().size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Analyse)->Args({0, 0})->Args({0, 1})->Args({0, 2})->Args({1, 0})->Unit(benchmark::kMillisecond);
}  // namespace
BENCHMARK_MAIN();
