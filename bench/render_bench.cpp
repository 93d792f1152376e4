// Render + encode throughput of the figure renderer at 640x360, 24 fps (target: >= 10x real time).
// Baselines in the same run: encoding pre-rendered frames only (the ffmpeg cost alone), the same
// frames the way koma encoded them before (raw RGBA piped to the ffmpeg program, which converts to
// yuv420p itself), the fixed cost of one ffmpeg process (a one-frame video), and real time.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "koma/core/child_process.hpp"
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
  EncodeSettings es;
  es.threads = static_cast<int>(state.range(0));  // x264 threads: 1, 2 (the default), 3 (ffmpeg's own on 2 cores)
  const CpuSplit cpu;
  for (auto _ : state) {
    VideoWriter w(out("koma_bench_encode.mp4"), 640, 360, es);
    for (const Image& img : frames) w.add_frame(img);
    w.finish();
  }
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
BENCHMARK(BM_EncodeOnlyMp4)->Arg(2)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baselines: the previous pipeline, RGBA frames piped to `ffmpeg -pix_fmt rgba`, which converts to
// yuv420p with swscale before x264 (same preset and CRF). Frames pre-rendered (encode only) or
// rendered on the way (render + encode, as write_comparison_video did before).
void rgba_pipe(benchmark::State& state, bool render) {
  const Fixture& fx = fixture();
  const ComparisonFraming fr = frame_comparison(fx.single, fx.camera);
  std::vector<Image> frames;
  if (!render) {
    for (int f = 0; f < fx.single.frame_count(); ++f) frames.push_back(render_comparison_frame(fx.single, fr, f));
  }
  const std::vector<std::string> args = {
      "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba",
      "-s", "640x360", "-framerate", "24/1", "-i", "pipe:0", "-an", "-c:v", "libx264", "-preset", "ultrafast",
      "-crf", "18", "-pix_fmt", "yuv420p", "-movflags", "+faststart", "-f", "mp4", out("koma_bench_rgba.mp4").string()};
  const CpuSplit cpu;
  Image frame;
  for (auto _ : state) {
    // Through the same child-process runner (a socket with a 4 MiB buffer) as VideoWriter.
    koma::ChildSpec spec;
    spec.args = args;
    spec.write_stdin = true;
    koma::ChildProcess p(std::move(spec));
    for (int f = 0; f < fx.single.frame_count(); ++f) {
      if (render) render_comparison_frame(fx.single, fr, f, {}, {}, frame);
      const Image& img = render ? frame : frames[static_cast<size_t>(f)];
      if (p.write_all(std::as_bytes(std::span(img.rgba)))) break;
    }
    if (p.wait() != 0) {
      state.SkipWithError("ffmpeg failed");
      return;
    }
  }
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
void BM_EncodeOnlyMp4RgbaPipe(benchmark::State& state) { rgba_pipe(state, false); }
BENCHMARK(BM_EncodeOnlyMp4RgbaPipe)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_RenderEncodeMp4RgbaPipe(benchmark::State& state) { rgba_pipe(state, true); }
BENCHMARK(BM_RenderEncodeMp4RgbaPipe)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: the fixed cost of one video, a one-frame MP4 (ffmpeg start-up: it loads ~215 shared
// libraries, then opens x264 and the MP4 muxer). Counted per video, not per frame.
void BM_EncoderStartup(benchmark::State& state) {
  const Fixture& fx = fixture();
  const ComparisonFraming fr = frame_comparison(fx.single, fx.camera);
  const Image img = render_comparison_frame(fx.single, fr, 0);
  const CpuSplit cpu;
  for (auto _ : state) {
    VideoWriter w(out("koma_bench_one.mp4"), 640, 360);
    w.add_frame(img);
    w.finish();
  }
  cpu.report(state, 1);
}
BENCHMARK(BM_EncoderStartup)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderEncodeMp4(benchmark::State& state) {
  const Fixture& fx = fixture();
  const CpuSplit cpu;
  for (auto _ : state) write_comparison_video(out("koma_bench.mp4"), fx.single, fx.camera);
  report(state, fx.single.frame_count());
  cpu.report(state, fx.single.frame_count());
}
BENCHMARK(BM_RenderEncodeMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

// A 40 s video (960 frames: the clip played 10 times) rendered and encoded in one stream: the
// throughput once the fixed cost of starting ffmpeg is spread over a longer clip.
void BM_RenderEncodeMp4Long(benchmark::State& state) {
  const Fixture& fx = fixture();
  const ComparisonFraming fr = frame_comparison(fx.single, fx.camera);
  const int n = fx.single.frame_count() * 10;
  const CpuSplit cpu;
  Image frame;
  for (auto _ : state) {
    VideoWriter w(out("koma_bench_long.mp4"), 640, 360);
    for (int f = 0; f < n; ++f) {
      render_comparison_frame(fx.single, fr, f % fx.single.frame_count(), {}, {}, frame);
      w.add_frame(frame);
    }
    w.finish();
  }
  report(state, n);
  cpu.report(state, n);
}
BENCHMARK(BM_RenderEncodeMp4Long)->Unit(benchmark::kMillisecond)->UseRealTime();

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
