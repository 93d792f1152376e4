// koma::gait speed: analysis and synthesis, each against one forward-kinematics pass over the
// same frames (the cheapest thing any tool does with a motion) measured in the same run.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/gait/apply.hpp"
#include "koma/gait/synth.hpp"
#include "koma/io/motion_file.hpp"

namespace {

using namespace koma;

// The Bandai-Namco dataset-1 normal walk (195 frames, 22 joints, 30 fps), or the sample walk.
const Motion& input() {
  static const Motion m = [] {
    const std::filesystem::path p =
        std::filesystem::path(KOMA_SHARED_DATA) / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh";
    if (std::filesystem::exists(p)) return io::read_motion(p).motion;
    SampleSettings s;
    s.walk_cycles = 6;
    s.jump = false;
    return make_sample_motion(s);
  }();
  return m;
}

const gait::Gait& gait_of_input() {
  static const gait::Gait g = gait::analyze_gait(input());
  return g;
}

void frames_counter(benchmark::State& state, int frames) {
  state.counters["frames/s"] =
      benchmark::Counter(static_cast<double>(frames) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_FkBaseline_Input(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(forward_kinematics(input()));
  frames_counter(state, input().frame_count);
}
BENCHMARK(BM_FkBaseline_Input)->Unit(benchmark::kMicrosecond);

// Arg: 0 = automatic (both routes), 1 = autocorrelation only, 2 = foot contacts only.
void BM_EstimatePeriod(benchmark::State& state) {
  gait::CycleSettings s;
  s.period_method = static_cast<gait::PeriodMethod>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gait::estimate_period(input(), s));
  frames_counter(state, input().frame_count);
}
BENCHMARK(BM_EstimatePeriod)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_AnalyzeGait(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gait::analyze_gait(input()));
  frames_counter(state, input().frame_count);
}
BENCHMARK(BM_AnalyzeGait)->Unit(benchmark::kMicrosecond);

gait::SynthSettings synth_settings(double seconds, double fps) {
  gait::SynthSettings s;
  s.seconds = seconds;
  s.frame_rate = fps;
  return s;
}

// args: seconds, fps
void BM_Synthesize(benchmark::State& state) {
  const auto s = synth_settings(static_cast<double>(state.range(0)), static_cast<double>(state.range(1)));
  int frames = 0;
  for (auto _ : state) {
    const Motion m = gait::synthesize(gait_of_input(), s);
    frames = m.frame_count;
    benchmark::DoNotOptimize(m.rotations.data());
  }
  frames_counter(state, frames);
}
BENCHMARK(BM_Synthesize)->Args({10, 24})->Args({60, 60})->Unit(benchmark::kMicrosecond);

void BM_FkBaseline_Synthesized(benchmark::State& state) {
  const Motion m = gait::synthesize(gait_of_input(), synth_settings(static_cast<double>(state.range(0)),
                                                                    static_cast<double>(state.range(1))));
  for (auto _ : state) benchmark::DoNotOptimize(forward_kinematics(m));
  frames_counter(state, m.frame_count);
}
BENCHMARK(BM_FkBaseline_Synthesized)->Args({10, 24})->Args({60, 60})->Unit(benchmark::kMicrosecond);

// `koma gait apply` on a 10-minute take at 120 fps (72,000 frames: the built-in walk, 545 cycles),
// the arm-swing adverb of the built-in walk, against one forward-kinematics pass over the take.
const Motion& long_take() {
  static const Motion m = [] {
    SampleSettings s;
    s.walk_cycles = 545;
    s.jump = false;
    s.frame_rate = 120;
    return make_sample_motion(s);
  }();
  return m;
}

void BM_FkBaseline_LongTake(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(forward_kinematics(long_take()));
  frames_counter(state, long_take().frame_count);
}
BENCHMARK(BM_FkBaseline_LongTake)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ApplyToTake_LongTake(benchmark::State& state) {
  SampleSettings wide;
  wide.walk_cycles = 6;
  wide.jump = false;
  wide.arm_swing = 2.0;
  SampleSettings plain = wide;
  plain.arm_swing = 1.0;
  const gait::WeightedAdverb w{gait::make_adverb(gait::analyze_gait(make_sample_motion(plain)),
                                                 gait::analyze_gait(make_sample_motion(wide))),
                               1.0, "arms"};
  for (auto _ : state) benchmark::DoNotOptimize(gait::apply_to_take(long_take(), std::span(&w, 1)));
  frames_counter(state, long_take().frame_count);
}
BENCHMARK(BM_ApplyToTake_LongTake)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
