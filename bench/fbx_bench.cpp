// FBX reading (assimp parse + koma's skeleton, units and sampling) against the BVH reader on the
// same motion: the FBX stack is read once, written as BVH, and both files are read from disk in the
// same run. Counters: bytes/s (per MB of each file) and frames/s. docs/fbx.md records the ratios.
// Needs ../shared/data/fbx; skips with a message when it is absent.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "koma/io/bvh.hpp"
#include "koma/io/fbx.hpp"

namespace {

namespace fs = std::filesystem;

struct Pair {
  fs::path fbx, bvh;
  std::string stack;
  int frames = 0;
};

// quaternius_AnimatedHuman.fbx (41 bones, one 4734-vertex mesh, 9 stacks), stack "Idle":
// 241 frames at 24 fps. The BVH twin holds the same 35 joints and frames.
const Pair& pair() {
  static const Pair p = [] {
    Pair out;
    out.fbx = fs::path(KOMA_SHARED_DATA) / "fbx/quaternius_AnimatedHuman.fbx";
    out.stack = "Human Armature|Idle";
    if (!fs::exists(out.fbx)) return out;
    const koma::Motion m = koma::io::read_fbx(out.fbx, {out.stack, 0.0}).motion;
    out.frames = m.frame_count;
    out.bvh = fs::temp_directory_path() / "koma_fbx_bench_idle.bvh";
    koma::io::write_bvh(out.bvh, m);
    return out;
  }();
  return p;
}

void BM_ReadFbx(benchmark::State& state) {
  const Pair& p = pair();
  if (p.frames == 0) return state.SkipWithError("../shared/data/fbx not found");
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::read_fbx(p.fbx, {p.stack, 0.0}));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(p.fbx)));
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * p.frames,
                                                  benchmark::Counter::kIsRate);
}

// The same read without the child process (KOMA_READ_IN_PROCESS=1): what isolating assimp costs
// (fork, limits, sending the motion and the character back). Real time for both: a child's CPU
// time is not the benchmark process's.
void BM_ReadFbxInProcess(benchmark::State& state) {
  const Pair& p = pair();
  if (p.frames == 0) return state.SkipWithError("../shared/data/fbx not found");
  ::setenv("KOMA_READ_IN_PROCESS", "1", 1);
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::read_fbx(p.fbx, {p.stack, 0.0}));
  ::unsetenv("KOMA_READ_IN_PROCESS");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(p.fbx)));
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * p.frames,
                                                  benchmark::Counter::kIsRate);
}

// Listing the stacks alone: the cost of assimp's parse of the whole document.
void BM_ListFbxStacks(benchmark::State& state) {
  const Pair& p = pair();
  if (p.frames == 0) return state.SkipWithError("../shared/data/fbx not found");
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::list_fbx_animations(p.fbx));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(p.fbx)));
}

void BM_ReadBvhSameMotion(benchmark::State& state) {
  const Pair& p = pair();
  if (p.frames == 0) return state.SkipWithError("../shared/data/fbx not found");
  for (auto _ : state) benchmark::DoNotOptimize(koma::io::read_bvh(p.bvh));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(p.bvh)));
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * p.frames,
                                                  benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ReadFbx)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadFbxInProcess)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ListFbxStacks)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadBvhSameMotion)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
