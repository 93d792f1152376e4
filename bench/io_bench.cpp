// BVH parsing throughput against the floor of merely converting the same numbers with
// std::from_chars (no hierarchy, no rotations, no validation). The ratio is what docs/perf.md
// records; the target is >= 50 %.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <optional>

#include <charconv>
#include <filesystem>

#include "koma/core/atomic_file.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/simd.hpp"
#include "koma/io/bvh.hpp"

namespace {

// The large file: CMU 01_01 (2752 frames, 120 fps) when the corpus is present, else the built-in
// sample at 120 fps with enough cycles for a file of similar size.
const std::string& large_bvh() {
  static const std::string text = [] {
    const std::filesystem::path cmu = std::filesystem::path(KOMA_SHARED_DATA) / "bvh/cmu/assimp/01_01.bvh";
    if (std::filesystem::exists(cmu)) return koma::read_file(cmu);
    koma::SampleSettings s;
    s.frame_rate = 120;
    s.walk_cycles = 20;
    return koma::io::format_bvh(koma::make_sample_motion(s));
  }();
  return text;
}

// range(0): the SIMD path of the parser's trig kernel (0 scalar, 1 avx2, 2 avx512; skipped when
// this CPU cannot run it); range(1): threads the reader may use (0 = all cores, 1 = one, like the
// single-threaded baseline). Compare each with BM_FromCharsOnly of the same run; with all cores,
// compare wall time (the CPU time column counts the benchmark's own thread only).
void BM_ParseBvh(benchmark::State& state) {
  const auto isa = static_cast<koma::simd::Isa>(state.range(0));
  std::optional<tbb::global_control> one_thread;
  if (state.range(1) == 1) one_thread.emplace(tbb::global_control::max_allowed_parallelism, 1);
  if (!koma::simd::supported(isa)) {
    state.SkipWithError("this CPU cannot run this path");
    return;
  }
  koma::simd::set_active(isa);
  state.SetLabel(std::string(koma::simd::to_string(isa)));
  const std::string& text = large_bvh();
  for (auto _ : state) {
    auto r = koma::io::parse_bvh(text, "large.bvh");
    benchmark::DoNotOptimize(r.motion.rotations.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// Baseline: every whitespace-separated token of the motion section through std::from_chars.
void BM_FromCharsOnly(benchmark::State& state) {
  const std::string& text = large_bvh();
  const size_t start = text.find('\n', text.find("Frame Time")) + 1;
  for (auto _ : state) {
    const char* c = text.data() + start;
    const char* end = text.data() + text.size();
    double sum = 0;
    while (c < end) {
      while (c < end && (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')) ++c;
      if (c == end) break;
      double v = 0;
      const auto [ptr, ec] = std::from_chars(c, end, v);
      sum += v;
      c = ptr == c ? c + 1 : ptr;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_WriteBvh(benchmark::State& state) {
  const auto motion = koma::io::parse_bvh(large_bvh(), "large.bvh").motion;
  for (auto _ : state) {
    auto text = koma::io::format_bvh(motion);
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * motion.frame_count,
                                                  benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ParseBvh)->ArgsProduct({{0, 1, 2}, {1, 0}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FromCharsOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WriteBvh)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
