// The exact selector at scale, per SIMD path: CMU 01_01 (2752 frames at 120 fps, 31 joints)
// repeated to 10,000, 100,000 and 1,000,000 frames (the built-in sample walk when the corpus is
// absent), n = N/3 (and N/10), max hold 48, position MSE with linear interpolation.
//
//   build/release/bench/koma_keys_scale_bench --benchmark_counters_tabular=true
//
// Arguments: {frames index (0 = 10k, 1 = 100k, 2 = 1M), ISA (0 scalar, 1 avx2, 2 avx512), keys
// divisor}. Paths this CPU cannot run are skipped with a message. Counters: solves, corridor
// states, optimal (1/0), gap (certified, relative), table_MB and rss_MB (peak resident set of the
// whole process so far: run one size per process for a clean peak; bench/keys_scale.sh times the
// whole CLI call with its peak memory).
//
// BM_Sweep: 20 key counts from N/50 to N/2 on one size; hit_exactly = share solved without the
// corridor DP, worst_gap = largest certified relative gap (0 when every answer is optimal).
// BM_Levels: the level DP on the same input (10k only: it is O(n N H)).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>
#include <map>
#include <memory>

#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/simd.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/keys.hpp"

namespace {

using namespace koma;
using namespace koma::keys;

constexpr int kFrames[] = {10'000, 100'000, 1'000'000};

Motion repeated(const Motion& m, int frames) {
  Motion big = m;
  const size_t per = static_cast<size_t>(m.frame_count) * m.joint_count();
  big.rotations.reserve(static_cast<size_t>(frames + m.frame_count) * m.joint_count());
  big.translations.reserve(big.rotations.capacity());
  while (big.frame_count < frames) {
    big.rotations.insert(big.rotations.end(), m.rotations.begin(), m.rotations.begin() + static_cast<std::ptrdiff_t>(per));
    big.translations.insert(big.translations.end(), m.translations.begin(), m.translations.begin() + static_cast<std::ptrdiff_t>(per));
    big.frame_count += m.frame_count;
  }
  return cut(big, 0, frames);
}

const FeatureMatrix& features(int which) {
  static std::map<int, std::unique_ptr<FeatureMatrix>> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return *it->second;
  const std::filesystem::path p = std::filesystem::path(KOMA_SHARED_DATA) / "bvh/cmu/assimp/01_01.bvh";
  Motion base = std::filesystem::exists(p) ? io::read_motion(p).motion : make_sample_motion();
  const Motion m = repeated(base, kFrames[which]);
  return *(cache[which] = std::make_unique<FeatureMatrix>(extract_features(m)));
}

bool pin_isa(benchmark::State& state, int isa) {
  const auto i = static_cast<simd::Isa>(isa);
  if (!simd::supported(i)) {
    state.SkipWithError(("this CPU cannot run " + std::string(simd::to_string(i))).c_str());
    return false;
  }
  simd::set_active(i);
  state.SetLabel(std::string(simd::to_string(i)));
  return true;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void certificate(benchmark::State& state, const Selection& s) {
  state.counters["solves"] = s.solves;
  state.counters["corridor_states"] = static_cast<double>(s.corridor_states);
  state.counters["optimal"] = s.optimal ? 1 : 0;
  state.counters["gap"] = s.total > 0 ? (s.total - s.lower_bound) / s.total : 0.0;
}

// Cost table + exact selection by `method` from the features (what `koma keys` spends after FK).
void exact_from_features(benchmark::State& state, ExactMethod method) {
  if (!pin_isa(state, static_cast<int>(state.range(1)))) return;
  const FeatureMatrix& x = features(static_cast<int>(state.range(0)));
  HoldConstraints c;
  c.max_hold = 48;
  SelectionTarget t;
  t.keys = x.frames / static_cast<int>(state.range(2));
  ExactSettings st;
  st.method = method;
  Selection s;
  double table_mb = 0;
  for (auto _ : state) {
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 48);
    s = select_exact(costs, c, t, st);
    table_mb = static_cast<double>(costs.table.size()) * 8 / 1e6;
  }
  certificate(state, s);
  state.counters["frames"] = x.frames;
  state.counters["table_MB"] = table_mb;
  state.counters["rss_MB"] = peak_rss_mb();
}

void BM_Lagrange(benchmark::State& state) { exact_from_features(state, ExactMethod::lagrange); }
// The level DP on the same input (the reference; 10k frames: it is O(n N H)).
void BM_Levels(benchmark::State& state) { exact_from_features(state, ExactMethod::levels); }

// The cost table alone (tiles on every core).
void BM_Table(benchmark::State& state) {
  if (!pin_isa(state, static_cast<int>(state.range(1)))) return;
  const FeatureMatrix& x = features(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 48);
    benchmark::DoNotOptimize(costs.table.data());
  }
  state.counters["frames"] = x.frames;
}

// 20 key counts on one table: share hit exactly, worst certified gap, solves per n.
void BM_Sweep(benchmark::State& state) {
  if (!pin_isa(state, static_cast<int>(state.range(1)))) return;
  const FeatureMatrix& x = features(static_cast<int>(state.range(0)));
  const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 48);
  HoldConstraints c;
  c.max_hold = 48;
  ExactSettings st;
  st.method = ExactMethod::lagrange;
  const auto [nmin, nmax] = c.key_range(x.frames);
  int hit = 0, runs = 0, optimal = 0;
  double worst_gap = 0, solves = 0;
  for (auto _ : state) {
    hit = runs = optimal = 0;
    worst_gap = solves = 0;
    for (int q = 0; q < 20; ++q) {
      SelectionTarget t;
      t.keys = std::clamp(x.frames / 50 + q * (x.frames / 2 - x.frames / 50) / 19, nmin, nmax);
      const Selection s = select_exact(costs, c, t, st);
      hit += s.corridor_states == 0;
      optimal += s.optimal;
      worst_gap = std::max(worst_gap, s.total > 0 ? (s.total - s.lower_bound) / s.total : 0.0);
      solves += s.solves;
      ++runs;
    }
  }
  state.counters["frames"] = x.frames;
  state.counters["hit_exactly"] = static_cast<double>(hit) / runs;
  state.counters["optimal"] = static_cast<double>(optimal) / runs;
  state.counters["worst_gap"] = worst_gap;
  state.counters["solves_per_n"] = solves / runs;
}

void isas(benchmark::internal::Benchmark* b, std::initializer_list<int> sizes, int divisor) {
  for (int size : sizes)
    for (int isa = 0; isa <= 2; ++isa) b->Args({size, isa, divisor});
}

BENCHMARK(BM_Table)->Apply([](auto* b) { isas(b, {0, 1, 2}, 3); })->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Lagrange)->Apply([](auto* b) { isas(b, {0, 1, 2}, 3); isas(b, {0, 1, 2}, 10); })
    ->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Levels)->Apply([](auto* b) { isas(b, {0}, 3); })->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Sweep)->Apply([](auto* b) { isas(b, {0, 1}, 3); })->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
