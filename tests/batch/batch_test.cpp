// koma::batch: planning inputs into items, the runner (failures, cancellation, resume) and the
// pipelines' determinism across pool sizes.
#include "koma/batch/batch.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>

#include "koma/batch/pipelines.hpp"
#include "koma/batch/tasks.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/fbx.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace koma {
namespace {

void touch(const fs::path& p, const std::string& text = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::set<std::string> relatives(const std::vector<batch::Item>& items) {
  std::set<std::string> out;
  for (const auto& it : items) out.insert(it.relative.generic_string());
  return out;
}

TEST(BatchPlan, FolderMirrorsTreeSkipsHiddenOtherFormatsAndOutputDir) {
  const fs::path d = test::temp_dir("batch_plan_folder");
  touch(d / "in/a.bvh");
  touch(d / "in/sub/b.BVH");
  touch(d / "in/sub/deeper/c.glb");
  touch(d / "in/notes.txt");
  touch(d / "in/.hidden.bvh");
  touch(d / "in/.cache/d.bvh");
  touch(d / "in/out/old.bvh");  // the output folder inside the input folder is not searched
  const auto items = batch::plan({(d / "in").string()}, d / "in/out");
  EXPECT_EQ(relatives(items), (std::set<std::string>{"a.bvh", "sub/b.BVH", "sub/deeper/c.glb"}));
  for (const auto& it : items) EXPECT_EQ(it.output, d / "in/out" / it.relative);
  EXPECT_EQ(items.front().relative, fs::path("a.bvh"));  // sorted by relative path
}

TEST(BatchPlan, GlobsFilesAndDuplicates) {
  const fs::path d = test::temp_dir("batch_plan_glob");
  touch(d / "takes/t1/walk_a.bvh");
  touch(d / "takes/t2/walk_b.bvh");
  touch(d / "takes/t2/run_c.bvh");
  batch::PlanSettings ps;
  ps.output_extension = ".glb";
  const auto items = batch::plan({(d / "takes/*/walk_*.bvh").string(), (d / "takes/t2/walk_b.bvh").string()}, d / "o", ps);
  // The pattern's matches are relative to its wildcard-free folder; the file named again is taken once.
  EXPECT_EQ(relatives(items), (std::set<std::string>{"t1/walk_a.bvh", "t2/walk_b.bvh"}));
  for (const auto& it : items) EXPECT_EQ(it.output.extension(), ".glb");
}

TEST(BatchPlan, Errors) {
  const fs::path d = test::temp_dir("batch_plan_errors");
  touch(d / "x/a.bvh");
  touch(d / "y/a.bvh");
  try {
    batch::plan({(d / "x/a.bvh").string(), (d / "y/a.bvh").string()}, d / "o");
    FAIL() << "two inputs writing one output were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(e.message().find("would both write"), std::string::npos) << e.what();
  }
  EXPECT_THROW(batch::plan({(d / "missing.bvh").string()}, d / "o"), Error);
  EXPECT_THROW(batch::plan({(d / "x/*.nothing").string()}, d / "o"), Error);
  touch(d / "empty/readme.txt");
  EXPECT_THROW(batch::plan({(d / "empty").string()}, d / "o"), Error);
}

// An .fbx input writes .glb unless told otherwise (--to fbx), and a format koma does not write is
// refused before any file is planned.
TEST(BatchPlan, FbxInputsWriteGlbAndOnlyWrittenFormatsAreOutputs) {
  const fs::path d = test::temp_dir("batch_plan_fbx");
  touch(d / "in/hero.FBX");
  touch(d / "in/walk.bvh");
  const auto items = batch::plan({(d / "in").string()}, d / "o");
  ASSERT_EQ(relatives(items), (std::set<std::string>{"hero.FBX", "walk.bvh"}));
  for (const auto& it : items)
    EXPECT_EQ(it.output.extension(), it.input.extension() == ".bvh" ? ".bvh" : ".glb") << it.input;
  batch::PlanSettings ps;
  ps.output_extension = ".bvh";
  for (const auto& it : batch::plan({(d / "in").string()}, d / "o", ps)) EXPECT_EQ(it.output.extension(), ".bvh");
  ps.output_extension = ".fbx";  // koma writes FBX when asked
  for (const auto& it : batch::plan({(d / "in").string()}, d / "o", ps)) EXPECT_EQ(it.output.extension(), ".fbx");
  for (const char* bad : {".obj", ".mp4", "glb"}) {
    ps.output_extension = bad;
    try {
      batch::plan({(d / "in").string()}, d / "o", ps);
      FAIL() << bad << " accepted as an output format";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_EQ(e.context(), "output_extension");
      // .mp4 is written by render, not by a motion command.
      const std::string why = std::string(bad) == ".mp4" ? "is not an output format of this command; expected bvh, glb, gltf or fbx"
                                                         : "is not an output format koma writes; expected bvh, glb, gltf or fbx";
      EXPECT_NE(e.message().find(why), std::string::npos) << e.what();
    }
  }
}

// A gait-style batch (batch::gait_style_extensions()) finds gait files by their .gait.json ending,
// not other .json files; a gait file writes .bvh beside the walk's own output, or --to's format.
TEST(BatchPlan, GaitFilesByTheirEndingWriteBvh) {
  const fs::path d = test::temp_dir("batch_plan_gait");
  touch(d / "in/walk.bvh");
  touch(d / "in/gaits/walk.gait.json");
  touch(d / "in/gaits/RUN.GAIT.JSON");
  touch(d / "in/happy.adverb.json");
  touch(d / "in/roles.json");
  batch::PlanSettings ps;
  ps.extensions = batch::gait_style_extensions();
  auto items = batch::plan({(d / "in").string()}, d / "o", ps);
  ASSERT_EQ(relatives(items), (std::set<std::string>{"walk.bvh", "gaits/walk.gait.json", "gaits/RUN.GAIT.JSON"}));
  for (const auto& it : items) EXPECT_EQ(it.output.extension(), ".bvh") << it.input;
  EXPECT_EQ(items[0].output, d / "o/gaits/RUN.GAIT.bvh");
  EXPECT_EQ(items[1].output, d / "o/gaits/walk.gait.bvh");
  EXPECT_THROW(batch::plan({(d / "in/*.json").string()}, d / "o", ps), Error);  // adverbs and roles only
  ps.output_extension = ".glb";
  for (const auto& it : batch::plan({(d / "in").string()}, d / "o", ps)) EXPECT_EQ(it.output.extension(), ".glb");
  // Other commands find motions only; a gait file named directly is still taken.
  EXPECT_EQ(relatives(batch::plan({(d / "in").string()}, d / "o")), std::set<std::string>{"walk.bvh"});
  EXPECT_EQ(batch::plan({(d / "in/gaits/walk.gait.json").string()}, d / "o").at(0).output, d / "o/walk.gait.bvh");
}

// Render batches write videos or folders of PNG frames (".png": OUTDIR/<relative path without its
// extension>/, ending in '/'); run() makes the folder a folder output goes in, not the output
// itself, so a take that fails leaves nothing at its output.
TEST(BatchPlan, VideoAndFolderOutputs) {
  const fs::path d = test::temp_dir("batch_plan_video");
  touch(d / "in/walk.bvh");
  touch(d / "in/sub/Fox.glb");
  batch::PlanSettings ps;
  ps.output_formats = {".mp4", ".gif", ".png"};
  ps.output_extension = ".mp4";
  for (const auto& it : batch::plan({(d / "in").string()}, d / "o", ps))
    EXPECT_EQ(it.output, (d / "o" / it.relative).replace_extension(".mp4"));
  ps.output_extension = ".png";
  const auto items = batch::plan({(d / "in").string()}, d / "o", ps);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].output.string(), (d / "o/sub/Fox/").string());
  EXPECT_EQ(items[1].output.string(), (d / "o/walk/").string());
  ps.output_extension = ".bvh";
  try {
    batch::plan({(d / "in").string()}, d / "o", ps);
    FAIL() << ".bvh accepted for a render batch";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'bvh' is not an output format of this command; expected mp4, gif or png"),
              std::string::npos)
        << e.what();
  }
  const batch::Task fails = [](const batch::Item&, const std::function<void(double)>&, std::vector<std::string>&) -> nlohmann::json {
    throw Error(ErrorCode::bad_file, "x", "broken");
  };
  const auto records = batch::run(items, {}, fails);
  for (const auto& r : records) EXPECT_EQ(r.status, batch::Status::failed);
  EXPECT_TRUE(fs::is_directory(d / "o/sub"));
  EXPECT_FALSE(fs::exists(d / "o/sub/Fox"));
  EXPECT_FALSE(fs::exists(d / "o/walk"));
}

// --animations all: one item per animation of each glTF/FBX file (FBX rest-pose stacks of one
// frame left out), written as <stem>.<animation>.<ext>, each reading its own animation; the keys
// pipeline then names every output after its animation.
TEST(BatchPlan, EveryAnimationIsOneItem) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path d = test::temp_dir("batch_plan_animations");
  const fs::path fox = test::shared_data() / "gltf/Fox/Fox.glb";
  const fs::path human = test::shared_data() / "fbx/quaternius_AnimatedHuman.fbx";
  batch::PlanSettings ps;
  ps.every_animation = true;
  ps.output_extension = ".fbx";
  const auto items = batch::plan({fox.string(), human.string(), test::test_data("tiny.bvh").string()}, d / "o", ps);
  std::set<std::string> outputs;
  for (const auto& it : items) outputs.insert(it.output.filename().string());
  for (const char* name : {"Fox.Survey.fbx", "Fox.Walk.fbx", "Fox.Run.fbx", "quaternius_AnimatedHuman.Walk.fbx",
                           "quaternius_AnimatedHuman.Run.fbx", "tiny.fbx"})
    EXPECT_TRUE(outputs.count(name)) << name;
  EXPECT_FALSE(outputs.count("quaternius_AnimatedHuman.ArmatureAction.001.fbx"));  // a 1-frame rest pose
  EXPECT_EQ(items.size(), 3u + 8u + 1u);
  batch::KeysJob job;
  job.keys.on = 2;
  fs::create_directories(d / "o");
  for (const auto& it : items) {
    if (it.input != fox) continue;
    batch::KeysJob j = job;
    j.read.animation = it.animation;
    batch::run_keys_file(it.input, it.output, j);
    const std::string stem = it.output.stem().string();
    EXPECT_EQ(io::list_fbx_animations(it.output).at(0).name, stem.substr(stem.find('.') + 1)) << it.output;
  }
}

// A task that writes "<input name>" atomically, fails on names containing "bad", counts its calls.
struct FakeTask {
  std::atomic<int>* calls;
  nlohmann::json operator()(const batch::Item& item, const std::function<void(double)>& progress,
                            std::vector<std::string>&) const {
    ++*calls;
    progress(0.5);
    const std::string name = item.input.filename().string();
    if (name.find("bad") != std::string::npos) throw Error(ErrorCode::bad_file, name + ":3", "broken on purpose");
    if (name.find("oops") != std::string::npos) throw std::runtime_error("not a koma::Error");
    write_file_atomic(item.output, name);
    return {{"name", name}};
  }
};

std::vector<batch::Item> fake_items(const fs::path& d, int good, const std::vector<std::string>& extra) {
  for (int i = 0; i < good; ++i) touch(d / "in" / fmt::format("f{}.bvh", i), std::string(static_cast<size_t>(i + 1), 'x'));
  for (const auto& e : extra) touch(d / "in" / e);
  return batch::plan({(d / "in").string()}, d / "out");
}

TEST(BatchRun, OneBadFileNeverStopsTheBatch) {
  for (int jobs : {1, 2, 3}) {
    const fs::path d = test::temp_dir(fmt::format("batch_run_bad_{}", jobs));
    const auto items = fake_items(d, 5, {"sub/bad.bvh", "oops.bvh"});
    std::atomic<int> calls{0};
    batch::RunSettings rs;
    rs.jobs = jobs;
    int callbacks = 0;
    const auto records = batch::run(items, rs, FakeTask{&calls}, [&](const batch::Record&, const batch::Counts& c) {
      ++callbacks;
      EXPECT_EQ(c.finished(), callbacks);
    });
    ASSERT_EQ(records.size(), 7u);
    EXPECT_EQ(calls.load(), 7);
    EXPECT_EQ(callbacks, 7);
    const batch::Counts c = batch::count(records);
    EXPECT_EQ(c.ok, 5);
    EXPECT_EQ(c.failed, 2);
    for (const auto& r : records) {
      if (r.item.input.filename() == "bad.bvh") {
        EXPECT_EQ(r.status, batch::Status::failed);
        EXPECT_EQ(r.error_code, "bad_file");
        EXPECT_EQ(r.error_context, "bad.bvh:3");
        EXPECT_EQ(r.error_message, "broken on purpose");
        EXPECT_FALSE(fs::exists(r.item.output));
      } else if (r.item.input.filename() == "oops.bvh") {
        EXPECT_EQ(r.error_code, "internal");
      } else {
        EXPECT_EQ(r.status, batch::Status::ok);
        EXPECT_EQ(read_file(r.item.output), r.item.input.filename().string());
        EXPECT_EQ(r.figures["name"], r.item.input.filename().string());
      }
    }
    const nlohmann::json rep = batch::report("fake", {{"x", 1}}, rs, records, 1.0);
    EXPECT_EQ(rep["counts"]["failed"], 2);
    EXPECT_EQ(rep["files"].size(), 7u);
    EXPECT_EQ(rep["jobs"], jobs);
  }
}

TEST(BatchRun, CancelStopsTakingFilesAndResumeFinishesEachOnce) {
  const fs::path d = test::temp_dir("batch_run_cancel");
  const auto items = fake_items(d, 8, {});
  std::atomic<int> calls{0};
  batch::RunSettings rs;
  rs.jobs = 1;
  std::atomic<int> finished{0};
  // Cancel after three files: the fourth is abandoned at its progress call, the rest never start.
  const auto records = batch::run(
      items, rs, FakeTask{&calls}, [&](const batch::Record&, const batch::Counts&) { ++finished; },
      [&] { return finished.load() >= 3; });
  const batch::Counts c = batch::count(records);
  EXPECT_EQ(c.ok, 3);
  EXPECT_LE(c.cancelled, 1);
  EXPECT_EQ(c.ok + c.cancelled + (c.total - c.finished()), 8);
  int outputs = 0;
  for (const auto& r : records) outputs += fs::exists(r.item.output) ? 1 : 0;
  EXPECT_EQ(outputs, 3);
  // Resume: the three complete outputs are skipped, the other five run once.
  rs.resume = true;
  calls = 0;
  const auto again = batch::run(items, rs, FakeTask{&calls});
  const batch::Counts c2 = batch::count(again);
  EXPECT_EQ(c2.skipped, 3);
  EXPECT_EQ(c2.ok, 5);
  EXPECT_EQ(calls.load(), 5);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].status == batch::Status::ok, again[i].status == batch::Status::skipped) << i;
  }
}

TEST(BatchRun, ResumeRedoesAnOutputOlderThanItsInput) {
  const fs::path d = test::temp_dir("batch_run_stale");
  const auto items = fake_items(d, 2, {});
  touch(items[0].output, "stale");
  fs::last_write_time(items[0].output, fs::last_write_time(items[0].input) - std::chrono::hours(1));
  std::atomic<int> calls{0};
  batch::RunSettings rs;
  rs.resume = true;
  const auto records = batch::run(items, rs, FakeTask{&calls});
  EXPECT_EQ(records[0].status, batch::Status::ok);
  EXPECT_EQ(read_file(items[0].output), items[0].input.filename().string());
}

TEST(BatchRun, InvalidJobs) {
  batch::RunSettings rs;
  rs.jobs = -1;
  EXPECT_THROW(rs.validate(), Error);
  rs.jobs = 2;
  EXPECT_NO_THROW(rs.validate());
}

// The keys and cartoon pipelines give the same bytes whatever the pool size.
TEST(BatchPipelines, OutputsIdenticalWhateverJobs) {
  const fs::path d = test::temp_dir("batch_pipelines_jobs");
  for (const char* name : {"gait_walk.bvh", "timing_walk20.bvh", "timing_walk30.bvh", "render_walk.bvh", "tiny.bvh"}) {
    fs::create_directories(d / "in");
    fs::copy_file(test::test_data(name), d / "in" / name);
  }
  batch::KeysJob kj;
  kj.keys.on = 2;
  batch::CartoonJob cj;
  const batch::Task keys_task = [&](const batch::Item& it, const std::function<void(double)>& p, std::vector<std::string>&) {
    return batch::keys_figures(batch::run_keys_file(it.input, it.output, kj, p));
  };
  const batch::Task cartoon_task = [&](const batch::Item& it, const std::function<void(double)>& p, std::vector<std::string>&) {
    return batch::run_cartoon_file(it.input, it.output, cj, p).summary;
  };
  for (const auto& [label, task] : {std::pair{"keys", keys_task}, std::pair{"cartoon", cartoon_task}}) {
    std::vector<std::vector<std::string>> bytes;
    for (int jobs : {1, 2}) {
      const fs::path out = d / fmt::format("{}{}", label, jobs);
      const auto items = batch::plan({(d / "in").string()}, out);
      batch::RunSettings rs;
      rs.jobs = jobs;
      const auto records = batch::run(items, rs, task);
      std::vector<std::string> b;
      for (const auto& r : records) {
        b.push_back(r.status == batch::Status::ok ? read_file(r.item.output) : "failed: " + r.error_message);
      }
      bytes.push_back(b);
    }
    EXPECT_EQ(bytes[0], bytes[1]) << label;
    EXPECT_NE(bytes[0][0].rfind("failed", 0), 0u) << label << ": " << bytes[0][0];
  }
}

TEST(BatchPipelines, JobValidation) {
  batch::KeysJob kj;
  kj.output_rate = -1;
  EXPECT_THROW(kj.validate(), Error);
  batch::CartoonJob cj;
  cj.cartoon.sigma_seconds = -0.1;
  EXPECT_THROW(cj.validate(), Error);
  // Point tracks need a skeleton for planted feet.
  const fs::path d = test::temp_dir("batch_cartoon_csv");
  cj.cartoon.sigma_seconds = 0;
  cj.cartoon.keep_feet = true;
  try {
    batch::run_cartoon_file(d / "p.csv", d / "o.csv", cj);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.context(), "keep_feet");
  }
  EXPECT_FALSE(fs::exists(d / "o.csv"));
}

}  // namespace
}  // namespace koma
