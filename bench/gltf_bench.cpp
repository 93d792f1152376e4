// glTF reading and writing speed, with BVH on the same motion as the baseline.
//   build/bench/bench/koma_gltf_bench
#include <benchmark/benchmark.h>

#include <filesystem>

#include "koma/core/sample.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/motion_file.hpp"

namespace {

namespace fs = std::filesystem;

const koma::Motion& sample() {
  static const koma::Motion m = koma::make_sample_motion();  // 241 frames, 19 joints
  return m;
}

fs::path temp(const char* name) { return fs::temp_directory_path() / name; }

void frames_counter(benchmark::State& state, int frames) {
  state.counters["frames/s"] =
      benchmark::Counter(static_cast<double>(frames) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_WriteGlb(benchmark::State& state) {
  const fs::path p = temp("koma-bench.glb");
  for (auto _ : state) koma::io::write_motion(p, sample());
  frames_counter(state, sample().frame_count);
}
BENCHMARK(BM_WriteGlb)->Unit(benchmark::kMillisecond);

void BM_WriteBvh_Baseline(benchmark::State& state) {
  const fs::path p = temp("koma-bench.bvh");
  for (auto _ : state) koma::io::write_motion(p, sample());
  frames_counter(state, sample().frame_count);
}
BENCHMARK(BM_WriteBvh_Baseline)->Unit(benchmark::kMillisecond);

void BM_ReadGlb(benchmark::State& state) {
  const fs::path p = temp("koma-bench-read.glb");
  koma::io::write_motion(p, sample());
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::read_motion(p));
  frames_counter(state, sample().frame_count);
}
BENCHMARK(BM_ReadGlb)->Unit(benchmark::kMillisecond);

void BM_ReadBvh_Baseline(benchmark::State& state) {
  const fs::path p = temp("koma-bench-read.bvh");
  koma::io::write_motion(p, sample());
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::read_motion(p));
  frames_counter(state, sample().frame_count);
}
BENCHMARK(BM_ReadBvh_Baseline)->Unit(benchmark::kMillisecond);

// Real files: the skinned characters with their mesh and textures (the shared corpus).
void BM_ReadShared(benchmark::State& state, const char* rel) {
  const fs::path p = fs::path(KOMA_SHARED_DATA) / rel;
  if (!fs::exists(p)) {
    state.SkipWithError("shared data absent");
    return;
  }
  int frames = 0;
  for (auto _ : state) {
    const auto r = koma::io::read_motion(p);
    frames = r.motion.frame_count;
    benchmark::DoNotOptimize(r);
  }
  frames_counter(state, frames);
}
BENCHMARK_CAPTURE(BM_ReadShared, Fox_Survey, "gltf/Fox/Fox.glb")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadShared, CesiumMan, "gltf/CesiumMan/CesiumMan.gltf")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
