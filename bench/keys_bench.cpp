// Key selection speed and error: every selector on CMU 01_01 (2752 frames at 120 fps) and on a
// 10,000-frame concatenation of it, n = N/3, max hold 48 frames, position MSE with linear
// interpolation over every joint and end site. Counters: error (m^2) and the ratio to exact.
//
//   build/rel/bench/koma_keys_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "koma/core/resample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/keys.hpp"

namespace {

using namespace koma;
using namespace koma::keys;

const Motion* clip(int which) {
  static std::map<int, std::unique_ptr<Motion>> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return it->second.get();
  const std::filesystem::path p = std::filesystem::path(KOMA_SHARED_DATA) / "bvh/cmu/assimp/01_01.bvh";
  if (!std::filesystem::exists(p)) return nullptr;
  Motion m = io::read_motion(p).motion;
  if (which == 1) {
    // 10,000 frames: the clip repeated (the seams are jumps, which only make selection harder).
    Motion big = m;
    const size_t per = static_cast<size_t>(m.frame_count) * m.joint_count();
    while (big.frame_count < 10000) {
      big.rotations.insert(big.rotations.end(), m.rotations.begin(), m.rotations.begin() + static_cast<std::ptrdiff_t>(per));
      big.translations.insert(big.translations.end(), m.translations.begin(), m.translations.begin() + static_cast<std::ptrdiff_t>(per));
      big.frame_count += m.frame_count;
    }
    m = cut(big, 0, 10000);
  }
  return (cache[which] = std::make_unique<Motion>(std::move(m))).get();
}

struct Fixture {
  SegmentCosts costs;
  HoldConstraints c;
  SelectionTarget t;
  double exact_total = 0;
};

Fixture& fixture(int which) {
  static std::map<int, std::unique_ptr<Fixture>> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return *it->second;
  auto f = std::make_unique<Fixture>();
  const Motion* m = clip(which);
  f->c.max_hold = 48;
  f->t.keys = m->frame_count / 3;
  f->costs = make_segment_costs(extract_features(*m), Interpolation::linear, Metric::position, 1, 48);
  f->exact_total = select_exact(f->costs, f->c, f->t).total;
  return *(cache[which] = std::move(f));
}

void report(benchmark::State& state, const Fixture& f, const Selection& s) {
  state.counters["frames"] = f.costs.frames();
  state.counters["dims"] = f.costs.features.dims;
  state.counters["keys"] = static_cast<double>(s.keys.size());
  state.counters["error_m2"] = s.error;
  state.counters["vs_exact"] = s.total / f.exact_total;
}

// Everything exact does from the motion: FK features, prefix sums + cost table, DP.
void BM_ExactFromMotion(benchmark::State& state) {
  const Motion* m = clip(static_cast<int>(state.range(0)));
  if (!m) { state.SkipWithError("shared data not found"); return; }
  HoldConstraints c;
  c.max_hold = 48;
  SelectionTarget t;
  t.keys = m->frame_count / 3;
  Selection s;
  for (auto _ : state) {
    SegmentCosts costs = make_segment_costs(extract_features(*m), Interpolation::linear, Metric::position, 1, 48);
    s = select_exact(costs, c, t);
    benchmark::DoNotOptimize(s.keys.data());
  }
  report(state, fixture(static_cast<int>(state.range(0))), s);
}

void BM_CostTable(benchmark::State& state) {
  const Motion* m = clip(static_cast<int>(state.range(0)));
  if (!m) { state.SkipWithError("shared data not found"); return; }
  const FeatureMatrix x = extract_features(*m);
  for (auto _ : state) {
    SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 48);
    benchmark::DoNotOptimize(costs.table.data());
  }
  state.counters["frames"] = m->frame_count;
}

void BM_ExactDP(benchmark::State& state) {
  if (!clip(static_cast<int>(state.range(0)))) { state.SkipWithError("shared data not found"); return; }
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  Selection s;
  for (auto _ : state) s = select_exact(f.costs, f.c, f.t);
  report(state, f, s);
}

void BM_Uniform(benchmark::State& state) {
  if (!clip(static_cast<int>(state.range(0)))) { state.SkipWithError("shared data not found"); return; }
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  Selection s;
  for (auto _ : state) s = select_uniform(f.costs, f.c, f.t);
  report(state, f, s);
}

void BM_Cumsum(benchmark::State& state) {
  if (!clip(static_cast<int>(state.range(0)))) { state.SkipWithError("shared data not found"); return; }
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  Selection s;
  for (auto _ : state) s = select_cumsum(f.costs, f.c, f.t);
  report(state, f, s);
}

// range(1): evaluation 0 = delta, 1 = segments, 2 = patent (re-interpolate everything per move);
// range(2): 1 = start from cumsum; range(3): iterations.
void BM_Anneal(benchmark::State& state) {
  if (!clip(static_cast<int>(state.range(0)))) { state.SkipWithError("shared data not found"); return; }
  Fixture& f = fixture(static_cast<int>(state.range(0)));
  AnnealSettings a;
  a.iterations = static_cast<int>(state.range(3));
  a.evaluation = static_cast<AnnealEvaluation>(state.range(1));
  a.start_from_cumsum = state.range(2) == 1;
  Selection s;
  for (auto _ : state) s = select_anneal(f.costs, f.c, f.t, a);
  report(state, f, s);
  state.counters["iterations"] = static_cast<double>(a.iterations);
}

void BM_Features(benchmark::State& state) {
  const Motion* m = clip(static_cast<int>(state.range(0)));
  if (!m) { state.SkipWithError("shared data not found"); return; }
  for (auto _ : state) {
    FeatureMatrix x = extract_features(*m);
    benchmark::DoNotOptimize(x.values.data());
  }
}

// 0 = CMU 01_01 (2752 frames), 1 = 10,000-frame concatenation.
BENCHMARK(BM_ExactFromMotion)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CostTable)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExactDP)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Uniform)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cumsum)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Features)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Anneal)
    ->Args({0, 0, 0, 200000})->Args({0, 0, 1, 200000})->Args({0, 1, 0, 200000})->Args({0, 2, 0, 20000})
    ->Args({1, 0, 0, 200000})->Args({1, 0, 1, 200000})->Args({1, 1, 0, 200000})->Args({1, 2, 0, 2000})
    ->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
