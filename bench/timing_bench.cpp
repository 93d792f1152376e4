// Timing transfer throughput on the built-in sample walk (no data files needed). Baselines in the
// same run: forward kinematics of the clip (what key-time detection must at least do) and plain
// resample() to the output's frame count (what re-timing must at least do).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/timing/keytimes.hpp"
#include "koma/timing/retime.hpp"

namespace {

koma::Motion walk(double cycle_seconds, double arm_swing) {
  koma::SampleSettings s;
  s.walk_cycles = 10;
  s.jump = false;
  s.cycle_seconds = cycle_seconds;
  s.arm_swing = arm_swing;
  return koma::make_sample_motion(s);
}

void frames_counter(benchmark::State& state, int frames) {
  state.counters["frames/s"] =
      benchmark::Counter(static_cast<double>(frames) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_ForwardKinematics(benchmark::State& state) {
  const koma::Motion m = walk(1.1, 1.0);
  benchmark::DoNotOptimize(koma::forward_kinematics(m));  // warm-up: lets malloc's mmap threshold adapt
  for (auto _ : state) benchmark::DoNotOptimize(koma::forward_kinematics(m));
  frames_counter(state, m.frame_count);
}
BENCHMARK(BM_ForwardKinematics)->Unit(benchmark::kMillisecond);

void BM_DetectKeyTimes(benchmark::State& state) {
  const koma::Motion m = walk(1.1, 1.0);
  const auto roles = koma::body::find_joint_roles(m.skeleton);
  size_t keys = 0;
  for (auto _ : state) {
    const auto r = koma::timing::detect_key_times(m, roles);
    keys = r.effectors.size();
    benchmark::DoNotOptimize(r);
  }
  frames_counter(state, m.frame_count);
  state.counters["effectors"] = static_cast<double>(keys);
  state.counters["frames"] = m.frame_count;
}
BENCHMARK(BM_DetectKeyTimes)->Unit(benchmark::kMillisecond);

void BM_MakeTimingSource(benchmark::State& state) {
  const koma::Motion m = walk(1.4, 0.6);
  const auto roles = koma::body::find_joint_roles(m.skeleton);
  const koma::Motion ex[] = {m};
  for (auto _ : state) benchmark::DoNotOptimize(koma::timing::make_timing_source(ex, roles));
  frames_counter(state, m.frame_count);
}
BENCHMARK(BM_MakeTimingSource)->Unit(benchmark::kMillisecond);

// state.range(0): 0 = global only, 1 = global + succession + amplitude.
void BM_Retime(benchmark::State& state) {
  const koma::Motion in = walk(1.1, 1.0), ex = walk(1.4, 0.6);
  const auto roles = koma::body::find_joint_roles(in.skeleton);
  const koma::Motion exs[] = {ex};
  const koma::timing::TimingSource src = koma::timing::make_timing_source(exs, roles);
  koma::timing::RetimeSettings rs;
  rs.succession = rs.amplitude = state.range(0) != 0;
  int out_frames = 0;
  for (auto _ : state) {
    const auto r = koma::timing::retime(in, roles, src, rs);
    out_frames = r.motion.frame_count;
    benchmark::DoNotOptimize(r);
  }
  frames_counter(state, in.frame_count);
  state.counters["out_frames"] = out_frames;
}
BENCHMARK(BM_Retime)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_ResampleBaseline(benchmark::State& state) {
  const koma::Motion in = walk(1.1, 1.0);
  // The same number of output frames as the re-timed walk (1.4 / 1.1 slower steps).
  const double rate = in.frame_rate * 1.27;
  benchmark::DoNotOptimize(koma::resample(in, rate));  // warm-up, as above
  for (auto _ : state) benchmark::DoNotOptimize(koma::resample(in, rate));
  frames_counter(state, in.frame_count);
}
BENCHMARK(BM_ResampleBaseline)->Unit(benchmark::kMillisecond);

// Real walks (the shared corpus; skipped without it): Bandai-Namco dataset-1 "normal" re-timed
// like "sad" (2x slower: key correction searches hardest) and like "happy" (about the same
// tempo). range(0): 0 = sad, 1 = happy; range(1): key_iterations (0 = the global re-timing alone,
// the baseline in the same run; 6 = the default key correction). Succession and amplitude off.
const koma::Motion* bandai_walk(const std::string& style) {
  static std::map<std::string, std::unique_ptr<koma::Motion>> cache;
  if (auto it = cache.find(style); it != cache.end()) return it->second.get();
  const std::filesystem::path p = std::filesystem::path(KOMA_SHARED_DATA) /
                                  ("bvh/styles/bandai-namco-1/dataset-1_walk_" + style + "_001.bvh");
  if (!std::filesystem::exists(p)) return nullptr;
  return (cache[style] = std::make_unique<koma::Motion>(koma::io::read_motion(p).motion)).get();
}

void BM_RetimeBandai(benchmark::State& state) {
  const koma::Motion* in = bandai_walk("normal");
  const koma::Motion* ex = bandai_walk(state.range(0) == 0 ? "sad" : "happy");
  if (!in || !ex) {
    state.SkipWithError("shared data not found");
    return;
  }
  const auto roles = koma::body::find_joint_roles(in->skeleton);
  const koma::Motion exs[] = {*ex};
  const koma::timing::TimingSource src = koma::timing::make_timing_source(exs, roles);
  koma::timing::RetimeSettings rs;
  rs.succession = rs.amplitude = false;
  rs.key_iterations = static_cast<int>(state.range(1));
  koma::timing::RetimeReport rep;
  for (auto _ : state) {
    auto r = koma::timing::retime(*in, roles, src, rs);
    rep = std::move(r.report);
    benchmark::DoNotOptimize(rep);
  }
  frames_counter(state, in->frame_count);
  state.counters["out_frames"] = rep.output_frames;
  state.counters["key_error"] = rep.key_error;
  state.counters["cycle_error"] = rep.cycle_error;
  state.counters["searches"] = rep.key_passes;
}
BENCHMARK(BM_RetimeBandai)->Args({0, 0})->Args({0, 6})->Args({1, 0})->Args({1, 6})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
