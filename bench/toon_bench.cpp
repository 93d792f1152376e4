// The toon look's speed: a 1280x720 toon MP4 of a walk (a Bandai-Namco walk, 6.5 s at 24 fps: the
// size of the held-out set's walks) must render at least in real time on the CPU (llvmpipe). The
// label of each run names the GL renderer. Baselines in the same run: the stick figure's MP4 of the
// same walk and size (what `koma render --look sticks` does) and real time (x_realtime = 1).
//
//   build/release/bench/koma_toon_bench --benchmark_min_time=1 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <filesystem>

#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/video.hpp"

namespace {

using namespace koma;
namespace fs = std::filesystem;

struct Fixture {
  toon::ToonClip smooth, held;
  render::Comparison single, stepped;
  render::CameraSettings camera;
  bool ok = false;
  Fixture() {
    const fs::path walk = fs::path(KOMA_SHARED_DATA) / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh";
    if (!fs::exists(walk)) return;
    const Motion m = resample(io::read_motion(walk).motion, 24);
    smooth.motion = m;
    smooth.character = toon::make_character(m, nullptr, "walk");
    std::vector<int> kept;
    for (int f = 0; f < m.frame_count; f += 2) kept.push_back(f);
    held.motion = toon::held_motion(m, std::vector<int>(static_cast<size_t>(m.joint_count()), 0), {kept});
    held.character = smooth.character;
    single.frame_rate = stepped.frame_rate = 24;
    single.result = {m.skeleton, forward_kinematics(m), "walk"};
    stepped.result = {m.skeleton, forward_kinematics(held.motion), "walk on 2s"};
    stepped.kept_frames = kept;
    camera.view = render::CameraView::side;
    camera.width = 1280;
    camera.height = 720;
    ok = true;
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

double cpu_seconds(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void report(benchmark::State& state, int frames, double self0, double kids0) {
  const double n = static_cast<double>(frames) * static_cast<double>(state.iterations());
  state.counters["frames/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  // Seconds of 24 fps video made per second of wall time: >= 1 is real time.
  state.counters["x_realtime"] = benchmark::Counter(n / 24.0, benchmark::Counter::kIsRate);
  state.counters["koma_cpu_ms/frame"] = 1e3 * (cpu_seconds(RUSAGE_SELF) - self0) / n;
  state.counters["ffmpeg_cpu_ms/frame"] = 1e3 * (cpu_seconds(RUSAGE_CHILDREN) - kids0) / n;
}

bool ready(benchmark::State& state) {
  if (fixture().ok) return true;
  state.SkipWithError("the shared corpus (../shared/data) is needed");
  return false;
}

void toon_mp4(benchmark::State& state, const toon::ToonClip& clip, const render::Comparison& cmp) {
  if (!ready(state)) return;
  if (const auto why = toon::unavailable_reason()) {
    state.SkipWithError(why->c_str());
    return;
  }
  state.SetLabel(toon::Renderer(16, 16).gl_renderer());
  const double self0 = cpu_seconds(RUSAGE_SELF), kids0 = cpu_seconds(RUSAGE_CHILDREN);
  for (auto _ : state)
    toon::write_comparison_video(fs::temp_directory_path() / "koma_toon_bench.mp4", cmp, clip, nullptr,
                                 fixture().camera);
  report(state, cmp.frame_count(), self0, kids0);
}

// Every frame a new drawing: the worst case.
void BM_ToonWalkMp4(benchmark::State& state) { toon_mp4(state, fixture().smooth, fixture().single); }
BENCHMARK(BM_ToonWalkMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

// On 2s: a held drawing is copied, not drawn again.
void BM_ToonWalkOn2sMp4(benchmark::State& state) { toon_mp4(state, fixture().held, fixture().stepped); }
BENCHMARK(BM_ToonWalkOn2sMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: the stick figure, same walk, same size.
void BM_SticksWalkMp4(benchmark::State& state) {
  if (!ready(state)) return;
  const double self0 = cpu_seconds(RUSAGE_SELF), kids0 = cpu_seconds(RUSAGE_CHILDREN);
  for (auto _ : state)
    render::write_comparison_video(fs::temp_directory_path() / "koma_sticks_bench.mp4", fixture().single,
                                   fixture().camera);
  report(state, fixture().single.frame_count(), self0, kids0);
}
BENCHMARK(BM_SticksWalkMp4)->Unit(benchmark::kMillisecond)->UseRealTime();

// One toon frame alone at 1280x720 (no encoding): the renderer's own cost.
void BM_ToonFrameOnly(benchmark::State& state) {
  if (!ready(state)) return;
  if (const auto why = toon::unavailable_reason()) {
    state.SkipWithError(why->c_str());
    return;
  }
  const Fixture& fx = fixture();
  const render::ComparisonFraming fr = render::frame_comparison(fx.single, fx.camera);
  toon::ClipPainter painter{toon::ToonStyle{}};
  const int c = painter.add(fx.smooth);
  state.SetLabel(painter.gl_renderer());
  render::Image img;
  int f = 0;
  for (auto _ : state) {
    painter.paint(c, f, fr.result, img);
    f = (f + 1) % fx.single.frame_count();
  }
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ToonFrameOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
