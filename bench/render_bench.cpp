// Render + encode throughput of the figure renderer at 640x360, 24 fps (target: >= 10x real time).
// Baselines in the same run: encoding pre-rendered frames only (the ffmpeg cost alone), and real time.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <filesystem>

#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/sheet.hpp"

namespace {

using namespace koma;
using namespace koma::render;
namespace fs = std::filesystem;

struct Fixture {
  Comparison single, pair;
  CameraSettings camera;
  Fixture() {
    const Motion m = resample(make_sample_motion(), 24);
    const WorldPoses w = forward_kinematics(m);
    single.frame_rate = pair.frame_rate = 24;
    single.result = {m.skeleton, w, "walk"};
    for (int f = 0; f < m.frame_count; f += 2) pair.kept_frames.push_back(f);
    pair.original = Clip{m.skeleton, w, "original"};
    pair.result = {m.skeleton, hold_poses(w, pair.kept_frames), "on 2s"};
    camera.view = CameraView::side;
    camera.width = 640;
    camera.height = 360;
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

fs::path out(const char* name) { return fs::temp_directory_path() / name; }

double cpu_seconds(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// CPU seconds of koma (this process) and of the ffmpeg children, per frame: on a loaded machine the
// wall clock says little, so these give the throughput one dedicated core would have.
struct CpuSplit {
  double self0 = cpu_seconds(RUSAGE_SELF), kids0 = cpu_seconds(RUSAGE_CHILDREN);
  void report(benchmark::State& state, int frames) const {
    const double n = static_cast<double>(frames) * static_cast<double>(state.iterations());
    const double self = cpu_seconds(RUSAGE_SELF) - self0, kids = cpu_seconds(RUSAGE_CHILDREN) - kids0;
    state.counters["koma_cpu_ms/frame"] = 1e3 * self / n;
    state.counters["ffmpeg_cpu_ms/frame"] = 1e3 * kids / n;
    state.counters["x_realtime_1core"] = n / 24.0 / (self + kids);
  }
};

void report(benchmark::State& state, int frames) {
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames) * state.iterations(),
                                                  benchmark::Counter::kIsRate);
  // Seconds of 24 fps video made per second of wall time.
  state.counters["x_realtime"] = benchmark::Counter(frames / 24.0 * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_RenderFrameOnly(benchmark::State& state) {
  const Fixture& fx = fixture();
  const ComparisonFraming fr = frame_comparison(fx.single, fx.camera);
  int f = 0;
  const CpuSplit cpu;
  for (auto _ : state) {
    benchmark::DoNotOptimize(render_comparison_frame(fx.single, fr, f, {}, {}));
    f = (f + 1) % fx.single.frame_count();
  }
  report(state, 1);
  cpu.report(state, 1);
}
BENCHMARK(BM_RenderFrameOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: the encoder alone, fed frames rendered beforehand.
void BM_EncodeOnlyMp4(benchmark::State& state) {
  const Fixture& fx = fixture();
  const ComparisonFraming fr = frame_comparison(fx.single, fx.camera);
  std::vector<Image> frames;
  for (int f = 0; f < fx.single.frame_count(); ++f) frames.push_back(render_comparison_frame(fx.single, fr, f));
  const CpuSplit cpu;
  for (auto _ : state) {
    VideoWriter w(out("koma_bench_encode.mp4"), 640, 360);
    for (const Image& img : frames) w.add_frame(img);
    w.finish();
  }
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
BENCHMARK(BM_EncodeOnlyMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderEncodeMp4(benchmark::State& state) {
  const Fixture& fx = fixture();
  const CpuSplit cpu;
  for (auto _ : state) write_comparison_video(out("koma_bench.mp4"), fx.single, fx.camera);
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
BENCHMARK(BM_RenderEncodeMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderEncodeSideBySideMp4(benchmark::State& state) {
  const Fixture& fx = fixture();
  CameraSettings cam = fx.camera;
  CompareSettings cs;
  cs.onion_skin = 2;
  const CpuSplit cpu;
  for (auto _ : state) write_comparison_video(out("koma_bench_pair.mp4"), fx.pair, cam, {}, cs);
  report(state, fx.pair.frame_count());
  cpu.report(state, fx.pair.frame_count());
}
BENCHMARK(BM_RenderEncodeSideBySideMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderEncodeGif(benchmark::State& state) {
  const Fixture& fx = fixture();
  const CpuSplit cpu;
  for (auto _ : state) write_comparison_video(out("koma_bench.gif"), fx.single, fx.camera);
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
BENCHMARK(BM_RenderEncodeGif)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
