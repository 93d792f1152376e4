#include "koma/timing/files.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/timing/report.hpp"
#include "test_support.hpp"

namespace koma::timing {
namespace {

MotionFileReader io_reader() {
  MotionFileReader r;
  r.is_motion_file = [](const std::filesystem::path& p) { return io::is_motion_file(p); };
  r.read = [](const std::filesystem::path& p) { return io::read_motion(p).motion; };
  return r;
}

const Motion& walk30() {
  static const Motion m = io::read_motion(test::test_data("timing_walk30.bvh")).motion;
  return m;
}

// A path names a source: one file, a folder (sorted, labelled by file name) or a saved JSON.
TEST(TimingSourceFiles, FileFolderAndSavedJson) {
  const TimingSource one = load_timing_source(test::test_data("timing_walk20.bvh"), io_reader());
  ASSERT_EQ(one.examples.size(), 1u);
  EXPECT_EQ(one.examples[0], "timing_walk20.bvh");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "koma-timing-files-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(test::test_data("timing_walk30.bvh"), dir / "b.bvh");
  std::filesystem::copy_file(test::test_data("timing_walk20.bvh"), dir / "a.bvh");
  std::filesystem::copy_file(test::test_data("timing_roles.json"), dir / "notes.txt");
  const TimingSource folder = load_timing_source(dir, io_reader());
  EXPECT_EQ(folder.examples, (std::vector<std::string>{"a.bvh", "b.bvh"}));
  write_file_atomic(dir / "saved.json", timing_source_to_json(folder));
  EXPECT_EQ(timing_source_to_json(load_timing_source(dir / "saved.json", io_reader())), timing_source_to_json(folder));
  const nlohmann::json summary = timing_source_summary(folder);
  EXPECT_EQ(summary["examples"].size(), 2u);
  std::filesystem::remove_all(dir / "a.bvh");
  std::filesystem::remove_all(dir / "b.bvh");
  std::filesystem::remove_all(dir / "saved.json");
  try {
    load_timing_source(dir, io_reader());
    ADD_FAILURE() << "no error for a folder without motions";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
  std::filesystem::remove_all(dir);
}

TEST(TimingReports, KeyTimesAndRetime) {
  const Motion& m = walk30();
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  const nlohmann::json kt = key_times_report(m, roles, detect_key_times(m, roles));
  EXPECT_EQ(kt["frames"], m.frame_count);
  EXPECT_EQ(kt["roles"]["left_ankle"], m.skeleton.point_name(roles[body::Role::left_ankle]));
  const TimingSource src = load_timing_source(test::test_data("timing_walk20.bvh"), io_reader());
  const RetimeResult r = retime(m, roles, src);
  const nlohmann::json rep = retime_report(r.report, src);
  EXPECT_EQ(rep["output_frames"], r.report.output_frames);
  EXPECT_EQ(rep["warp"].size(), r.report.warp.size());
  EXPECT_FALSE(retime_report(r.report, src, false).contains("warp"));
}

}  // namespace
}  // namespace koma::timing
