// The per-file pipelines besides keys and cartoon (retime_file.hpp, convert_file.hpp,
// gait_file.hpp): what they write, their settings' errors, and the same bytes through their batch
// task.
#include <gtest/gtest.h>

#include <filesystem>

#include "koma/batch/tasks.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace koma::batch {
namespace {

TEST(FrameRange, ParsesBothSidesAndRefusesTheRest) {
  const FrameRange r = parse_frame_range("10:-3");
  EXPECT_EQ(r.first, 10);
  EXPECT_EQ(r.end, -3);
  EXPECT_EQ(parse_frame_range(":50").first, 0);
  EXPECT_EQ(parse_frame_range("100:").end, std::nullopt);
  for (const char* bad : {"10", "a:b", "1:2:3", "1.5:4", ""}) {
    try {
      parse_frame_range(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_EQ(e.context(), "range");
    }
  }
}

TEST(ConvertPipeline, CutsResamplesAndWritesTheUnit) {
  const fs::path d = test::temp_dir("convert_pipeline");
  const fs::path in = test::test_data("timing_walk30.bvh");
  const Motion src = io::read_motion(in).motion;
  ConvertJob job;
  job.range = FrameRange{10, -10};
  job.output_rate = 15;
  job.write.unit = LengthUnit::metre;
  const ConvertFileResult r = run_convert_file(in, d / "out.bvh", job);
  const Motion out = io::read_motion(d / "out.bvh").motion;
  EXPECT_EQ(out.frame_count, r.frames);
  EXPECT_EQ(r.frame_rate, 15.0);
  // Frames 10 .. N-11 at 30 fps are (N - 20 - 1) / 2 intervals at 15 fps.
  EXPECT_EQ(r.frames, (src.frame_count - 20 - 1) / 2 + 1);
  EXPECT_EQ(out.source_unit, LengthUnit::metre);
  // The task writes the same bytes.
  Item item{in, "x.bvh", d / "task.bvh", 0, ""};
  std::vector<std::string> warnings;
  const nlohmann::json figures = convert_task(job)(item, [](double) {}, warnings);
  EXPECT_EQ(figures["frames"], r.frames);
  EXPECT_EQ(read_file(d / "task.bvh"), read_file(d / "out.bvh"));
  ConvertJob bad;
  bad.output_rate = -1;
  EXPECT_THROW(run_convert_file(in, d / "bad.bvh", bad), Error);
  EXPECT_FALSE(fs::exists(d / "bad.bvh"));
}

TEST(RetimePipeline, WritesTheMotionAndTheReportTogether) {
  const fs::path d = test::temp_dir("retime_pipeline");
  RetimeJob job;
  job.like = test::test_data("timing_walk20.bvh");
  job.report = d / "report.json";
  const RetimeFileResult r = run_retime_file(test::test_data("timing_walk30.bvh"), d / "out.bvh", job);
  const Motion out = io::read_motion(d / "out.bvh").motion;
  EXPECT_EQ(out.frame_count, r.report.output_frames);
  const nlohmann::json report = nlohmann::json::parse(read_file(d / "report.json"));
  EXPECT_EQ(report, r.summary);
  EXPECT_TRUE(report.contains("warp"));
  EXPECT_FALSE(retime_figures(r).contains("warp"));
  EXPECT_EQ(report["input"], test::test_data("timing_walk30.bvh").string());
  // Nothing is written when the example cannot be read, not even the report.
  RetimeJob missing = job;
  missing.like = d / "no_such_example.bvh";
  missing.report = d / "report2.json";
  EXPECT_THROW(run_retime_file(test::test_data("timing_walk30.bvh"), d / "out2.bvh", missing), Error);
  EXPECT_FALSE(fs::exists(d / "out2.bvh"));
  EXPECT_FALSE(fs::exists(d / "report2.json"));
  EXPECT_THROW(RetimeJob{}.validate(), Error);  // no example
}

// Gait style: the CSV beside the output is the single run's --csv file, written with it; the
// task writes the same bytes; one CSV path for every file of a batch is refused before any file.
TEST(GaitStylePipeline, CsvBesideTheOutputAndTheTaskWriteTheSameBytes) {
  const fs::path d = test::temp_dir("gait_style_pipeline");
  const fs::path in = test::test_data("gait_walk.bvh");
  GaitStyleJob job;
  job.style.synth.seconds = 3;
  job.csv = d / "single.csv";
  const GaitStyleFileResult single = run_gait_style_file(in, d / "single.bvh", job);
  EXPECT_EQ(single.summary["csv"], (d / "single.csv").string());
  EXPECT_THROW(gait_style_task(job), Error);  // every file would write single.csv
  job.csv.clear();
  job.csv_beside_output = true;
  Item item{in, "walk.bvh", d / "batch/walk.bvh", 0, ""};
  std::vector<std::string> warnings;
  fs::create_directories(d / "batch");
  const nlohmann::json figures = gait_style_task(job)(item, [](double) {}, warnings);
  EXPECT_EQ(figures["csv"], (d / "batch/walk.csv").string());
  EXPECT_EQ(figures["frames"], single.styled.motion.frame_count);
  EXPECT_EQ(read_file(d / "batch/walk.bvh"), read_file(d / "single.bvh"));
  EXPECT_EQ(read_file(d / "batch/walk.csv"), read_file(d / "single.csv"));
  job.csv = d / "both.csv";
  EXPECT_THROW(job.validate(), Error);  // a path and beside the output
  EXPECT_THROW(run_gait_style_file(in, d / "both.bvh", job), Error);
  EXPECT_FALSE(fs::exists(d / "both.bvh"));
}

}  // namespace
}  // namespace koma::batch
