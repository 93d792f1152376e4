// The render pipeline (koma/batch/render_file.hpp): what it writes and reports, its settings'
// errors (nothing written), the notes and warnings it gives as they arise.
#include "koma/batch/render_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/toon/renderer.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace koma::batch {
namespace {

RenderJob small_job() {
  RenderJob job;
  job.camera.width = 64;
  job.camera.height = 36;
  return job;
}

int png_count(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".png";
  return n;
}

TEST(RenderPipeline, HeldOnTheReportsDrawings) {
  const fs::path d = test::temp_dir("render_pipeline_held");
  RenderJob job = small_job();
  job.keys = test::test_data("render_report_ok.json");
  job.look = Look::sticks;
  const RenderFileResult r = run_render_file(test::test_data("render_walk.bvh"), d / "frames/", job);
  EXPECT_EQ(r.format, render::VideoFormat::png_sequence);
  EXPECT_EQ(r.frames, 53);
  EXPECT_EQ(r.frame_rate, 24.0);
  EXPECT_EQ(r.drawings, 10);
  EXPECT_EQ(r.look, Look::sticks);
  EXPECT_EQ(r.width, 64);  // two panels (held and smooth), each half of an even width
  EXPECT_EQ(png_count(d / "frames"), r.frames);
  const nlohmann::json f = render_figures(r);
  EXPECT_EQ(f["drawings"], 10);
  EXPECT_EQ(f["look"], "sticks");
  EXPECT_EQ(f["framing"], "fixed");
  EXPECT_EQ(f["camera"], "side");
  EXPECT_DOUBLE_EQ(f["duration_s"].get<double>(), 53 / 24.0);
  // Not held: no drawings in the figures.
  RenderJob plain = small_job();
  plain.look = Look::sticks;
  plain.output_rate = 12;
  const RenderFileResult p = run_render_file(test::test_data("render_walk.bvh"), d / "plain/", plain);
  EXPECT_EQ(p.frame_rate, 12.0);
  EXPECT_LT(p.frames, 30);
  EXPECT_FALSE(render_figures(p).contains("drawings"));
}

TEST(RenderPipeline, ToonCelsOrTheFallBackToSticks) {
  const fs::path d = test::temp_dir("render_pipeline_cels");
  RenderJob job = small_job();
  job.keys = test::test_data("render_report_ok.json");
  job.style.transparent = true;
  const auto why = toon::unavailable_reason();
  if (why) {
    // Transparent cels need the toon look: an error naming the field, nothing written.
    try {
      run_render_file(test::test_data("render_walk.bvh"), d / "cels/", job);
      FAIL() << "cels without OpenGL";
    } catch (const Error& e) {
      EXPECT_EQ(e.context(), "toon.transparent");
    }
    EXPECT_FALSE(fs::exists(d / "cels"));
    job.style.transparent = false;
    std::vector<std::string> seen;
    job.on_warning = [&](const std::string& w) { seen.push_back(w); };
    const RenderFileResult r = run_render_file(test::test_data("render_walk.bvh"), d / "sticks/", job);
    EXPECT_EQ(r.look, Look::sticks);
    ASSERT_FALSE(r.fallback.empty());
    EXPECT_EQ(seen, r.warnings);
    EXPECT_NE(r.fallback.find(*why), std::string::npos);
    return;
  }
  job.style.smear = toon::Smear::multiples;
  const RenderFileResult r = run_render_file(test::test_data("render_walk.bvh"), d / "cels/", job);
  EXPECT_EQ(r.look, Look::toon);
  EXPECT_EQ(r.smear, toon::Smear::multiples);
  EXPECT_TRUE(r.fallback.empty());
  EXPECT_EQ(r.width, 64);  // the result alone
  EXPECT_EQ(png_count(d / "cels"), 53);
  // The same settings give the same bytes.
  run_render_file(test::test_data("render_walk.bvh"), d / "again/", job);
  for (int f : {0, 26, 52}) {
    const std::string name = "frame_000" + std::string(f < 10 ? "0" : "") + std::to_string(f) + ".png";
    EXPECT_EQ(read_file(d / "cels" / name), read_file(d / "again" / name)) << name;
  }
}

TEST(RenderPipeline, ComparingClipsOfOtherLengthsIsNoted) {
  const fs::path d = test::temp_dir("render_pipeline_compare");
  RenderJob job = small_job();
  job.look = Look::sticks;
  job.compare = test::test_data("timing_walk20.bvh");
  std::vector<std::string> notes;
  job.on_note = [&](const std::string& n) { notes.push_back(n); };
  const RenderFileResult r = run_render_file(test::test_data("render_walk.bvh"), d / "cmp/", job);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes, r.notes);
  EXPECT_NE(notes[0].find("render_walk.bvh holds its last pose from frame 53"), std::string::npos) << notes[0];
  EXPECT_GT(r.frames, 53);  // the longer clip's length
  EXPECT_EQ(png_count(d / "cmp"), r.frames);
}

TEST(RenderPipeline, BadSettingsNameTheFieldAndWriteNothing) {
  const fs::path d = test::temp_dir("render_pipeline_errors");
  const fs::path in = test::test_data("render_walk.bvh");
  auto expect_field = [&](const RenderJob& job, const fs::path& out, const std::string& field) {
    try {
      run_render_file(in, out, job);
      ADD_FAILURE() << "accepted, expected an error on " << field;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings) << field;
      EXPECT_EQ(e.context(), field);
    }
    EXPECT_FALSE(fs::exists(out)) << out;
  };
  RenderJob smear = small_job();
  smear.look = Look::sticks;
  smear.style.smear = toon::Smear::smear;
  expect_field(smear, d / "a.mp4", "toon.smear");
  RenderJob cels = small_job();
  cels.style.transparent = true;
  expect_field(cels, d / "b.mp4", "toon.transparent");  // cels are PNG frames
  cels.compare = in;
  expect_field(cels, d / "c/", "toon.transparent");  // the result alone
  RenderJob rate = small_job();
  rate.output_rate = -1;
  expect_field(rate, d / "d.mp4", "output_rate");
  RenderJob tones = small_job();
  tones.style.tones = 4;
  expect_field(tones, d / "e.mp4", "toon.tones");
  RenderJob onion = small_job();
  onion.compare_settings.onion_skin = 9;
  expect_field(onion, d / "f.mp4", "compare.onion_skin");
  // A report for another clip: a mismatch naming the report, nothing written.
  RenderJob keys = small_job();
  keys.keys = test::test_data("render_report_mismatch.json");
  try {
    run_render_file(in, d / "g/", keys);
    ADD_FAILURE() << "accepted a report of another clip";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_EQ(e.context(), keys.keys.string());
  }
  EXPECT_FALSE(fs::exists(d / "g"));
}

}  // namespace
}  // namespace koma::batch
