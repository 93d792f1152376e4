// Round trips and quirks over every BVH of the shared corpus (skipped when it is absent).
#include <gtest/gtest.h>

#include <sstream>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/bvh.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

namespace fs = std::filesystem;

// Relative closeness of two channel values: |a - b| <= tol * max(1, |a|) (absolute below 1).
[[maybe_unused]] bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(a)); }

// The raw channel values of a BVH text's motion section, row by row.
std::vector<std::vector<double>> motion_values(const std::string& text) {
  std::vector<std::vector<double>> rows;
  size_t at = text.find("Frame Time:");
  at = text.find('\n', at) + 1;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::vector<double> row;
    const char* c = text.data() + at;
    const char* e = text.data() + end;
    while (c < e) {
      char* next = nullptr;
      const double v = std::strtod(c, &next);
      if (next == c || next > e) break;  // strtod skips newlines: never read into the next row
      row.push_back(v);
      c = next;
    }
    if (!row.empty()) rows.push_back(std::move(row));
    at = end + 1;
  }
  return rows;
}

TEST(BvhCorpus, EveryFileReadsWritesAndReadsBackWithin1e6) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = test::shared_bvh_files();
  ASSERT_GE(files.size(), 80u);
  size_t all_values = 0, all_differing = 0;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const ReadResult a = read_bvh(path);
    const std::string written = format_bvh(a.motion);
    const ReadResult b = parse_bvh(written, "rewritten");
    const Motion& ma = a.motion;
    const Motion& mb = b.motion;
    ASSERT_EQ(mb.frame_count, ma.frame_count);
    ASSERT_EQ(mb.skeleton.names, ma.skeleton.names);
    ASSERT_EQ(mb.skeleton.parents, ma.skeleton.parents);
    ASSERT_EQ(mb.skeleton.channels, ma.skeleton.channels);
    EXPECT_EQ(mb.source_unit, ma.source_unit);
    EXPECT_NEAR(mb.frame_rate, ma.frame_rate, 1e-9 * ma.frame_rate);
    for (size_t i = 0; i < ma.rotations.size(); ++i) {
      ASSERT_LE(test::rotation_angle(ma.rotations[i], mb.rotations[i]), 1e-7) << "element " << i;
      ASSERT_LE((ma.translations[i] - mb.translations[i]).norm(), 1e-7 * std::max(1.0, ma.translations[i].norm()));
    }
    // The channel values as text: the writer reproduces the file's numbers modulo 360 degrees,
    // except where the file itself switches to the other, equivalent Euler solution (some
    // exporters write middle angles beyond +-90 or jump between solutions); those rotations are
    // equal (checked above). Near gimbal lock (middle angle about 90) the choice is ambiguous; per file at least 90 %.
    const auto orig = motion_values(read_file(path));
    const auto ours = motion_values(written);
    ASSERT_GE(orig.size(), ours.size());
    size_t differing = 0, total = 0;
    for (size_t r = 0; r < ours.size(); ++r) {
      ASSERT_EQ(orig[r].size(), ours[r].size()) << "row " << r;
      for (size_t c = 0; c < ours[r].size(); ++c) {
        ++total;
        const double d = ours[r][c] - orig[r][c];
        const double wrapped = d - 360.0 * std::round(d / 360.0);
        if (std::abs(wrapped) > 1e-6 * std::max(1.0, std::abs(orig[r][c]))) ++differing;
      }
    }
    EXPECT_LE(static_cast<double>(differing), 0.10 * static_cast<double>(total));
    all_values += total;
    all_differing += differing;
  }
  std::printf("BVH corpus: %zu files, %zu channel values, %.4f %% written as the file had them (mod 360)\n",
              files.size(), all_values, 100.0 * (1.0 - static_cast<double>(all_differing) / static_cast<double>(all_values)));
}

TEST(BvhCorpus, BoxingToesDeclares3069AndHas3070Rows) {
  KOMA_REQUIRE_SHARED_DATA();
  const ReadResult r = read_bvh(test::shared_data() / "bvh/exporters/assimp/Boxing_Toes.bvh");
  EXPECT_EQ(r.motion.frame_count, 3069);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("1 motion row(s) beyond the 3069 frames"), std::string::npos) << r.warnings[0];
}

TEST(BvhCorpus, QuirkyFilesReadAsDescribed) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path d = test::shared_data() / "bvh";
  const Motion rest = read_bvh(d / "exporters/deep-motion-editing/rest.bvh").motion;
  EXPECT_EQ(rest.frame_count, 1);
  // drunk1: four rotation orders in one file.
  const Motion drunk = read_bvh(d / "exporters/jaanga-cmu-old/drunk1.bvh").motion;
  std::set<EulerOrder> orders;
  for (int j = 0; j < drunk.joint_count(); ++j) {
    if (!drunk.skeleton.channels[j].empty()) orders.insert(drunk.skeleton.euler_order(j));
  }
  EXPECT_GE(orders.size(), 4u);
  // CRLF and LF twins decode to the same motion.
  const Motion crlf = read_bvh(d / "exporters/20tab-bvh-python/test_mocapbank.bvh").motion;
  const Motion lf = read_bvh(d / "exporters/bvh-toolbox/test_mocapbank.bvh").motion;
  ASSERT_EQ(crlf.rotations.size(), lf.rotations.size());
  for (size_t i = 0; i < lf.rotations.size(); ++i) ASSERT_EQ(crlf.rotations[i].coeffs(), lf.rotations[i].coeffs());
  // Mixamo-style names with colons, a file name with a space, 6 channels on every joint.
  EXPECT_NO_THROW(read_bvh(d / "exporters/cmu-mocap-pose-library-blender/01-01 v01.bvh"));
  const Motion bandai = read_bvh(d / "styles/bandai-namco-1/dataset-1_walk_normal_001.bvh").motion;
  EXPECT_EQ(bandai.skeleton.channel_count(), 22 * 6);
  EXPECT_EQ(bandai.source_unit, LengthUnit::centimetre);
  EXPECT_EQ(bandai.frame_rate, 30.0);
}

TEST(BvhCorpus, FramesAreReadAtHumanScale) {
  KOMA_REQUIRE_SHARED_DATA();
  // Standing height of the first frame: metres for every file read in cm, m, or mm.
  for (const fs::path& path : test::shared_bvh_files("bvh/styles/bandai-namco-1")) {
    const Motion m = read_bvh(path).motion;
    const WorldPoses w = forward_kinematics(m);
    double lo = INFINITY, hi = -INFINITY;
    for (const Vec3& p : w.frame_positions(0)) {
      lo = std::min(lo, p.y());
      hi = std::max(hi, p.y());
    }
    EXPECT_GT(hi - lo, 1.2) << path;
    EXPECT_LT(hi - lo, 2.2) << path;
  }
}

TEST(BvhWrite, SampleRoundTripAndUnitConversion) {
  const Motion m = make_sample_motion();
  for (LengthUnit u : {LengthUnit::metre, LengthUnit::centimetre, LengthUnit::millimetre, LengthUnit::inch}) {
    BvhWriteOptions o;
    o.unit = u;
    const ReadResult back = parse_bvh(format_bvh(m, o), "x", {u});
    for (size_t i = 0; i < m.translations.size(); ++i) {
      ASSERT_LE((back.motion.translations[i] - m.translations[i]).norm(), 1e-8 * std::max(1.0, m.translations[i].norm()));
      ASSERT_LE(test::rotation_angle(back.motion.rotations[i], m.rotations[i]), 1e-8);
    }
  }
}

// Longer than the writer's blocks (8192 frames), with holds, and a root that keeps turning past
// +-180 degrees across a block boundary: the streamed file is format_bvh's text, angles stay
// continuous through the boundary, and a held frame's row repeats the previous row exactly.
TEST(BvhWrite, LongHeldTakeStreamsContinuousAnglesAndRepeatsHeldRows) {
  const Motion base = make_sample_motion();
  Motion m = base;
  const int J = base.joint_count(), frames = 20000;
  m.frame_count = frames;
  m.rotations.resize(static_cast<size_t>(frames) * J);
  m.translations.resize(m.rotations.size());
  for (int f = 0; f < frames; ++f) {
    const int src = (f / 3) % base.frame_count;  // every pose held for 3 frames
    for (int j = 0; j < J; ++j) {
      m.rotations[static_cast<size_t>(f) * J + j] = base.rotation(src, j);
      m.translations[static_cast<size_t>(f) * J + j] = base.translation(src, j);
    }
    // The root turns 0.05 degrees a held frame: 333 degrees over the take, 180 near frame 10800.
    m.rotations[static_cast<size_t>(f) * J] = Quat(Eigen::AngleAxisd((f / 3) * 0.05 * kDegToRad, Vec3::UnitY())) *
                                             base.rotation(src, 0);
  }
  const fs::path dir = test::temp_dir("bvhlong");
  write_bvh(dir / "long.bvh", m);
  const std::string text = read_file(dir / "long.bvh");
  EXPECT_EQ(text, format_bvh(m));
  const ReadResult back = parse_bvh(text, "long.bvh", {m.source_unit});
  ASSERT_EQ(back.motion.frame_count, frames);
  for (int f = 0; f < frames; f += 37) {
    for (int j = 0; j < J; ++j) ASSERT_LE(test::rotation_angle(back.motion.rotation(f, j), m.rotation(f, j)), 1e-7) << f;
  }
  // Rows: held frames repeat; the root's angles change by little from row to row (no 360 jumps).
  std::vector<std::string_view> rows;
  for (size_t at = text.find("Frame Time:"), end; (at = text.find('\n', at)) != std::string::npos && at + 1 < text.size(); at = end) {
    end = text.find('\n', at + 1);
    rows.push_back(std::string_view(text).substr(at + 1, end - at - 1));
  }
  ASSERT_EQ(rows.size(), static_cast<size_t>(frames));
  auto values = [](std::string_view row) {
    std::vector<double> v;
    std::istringstream in{std::string(row)};
    for (double x; in >> x;) v.push_back(x);
    return v;
  };
  for (int f = 1; f < frames; ++f) {
    if (f % 3 != 0) {
      ASSERT_EQ(rows[f], rows[f - 1]) << f;
    }
    if (f % 97 != 0 && f != 8192 && f != 16384) continue;
    const std::vector<double> a = values(rows[f - 1]), b = values(rows[f]);
    ASSERT_EQ(a.size(), b.size());
    for (int c = 3; c < 6; ++c) EXPECT_LT(std::abs(b[c] - a[c]), 30.0) << "frame " << f << ", value " << c;
  }
  fs::remove_all(dir);
}

TEST(BvhWrite, FailureLeavesNoFile) {
  const fs::path dir = test::temp_dir("bvhwrite");
  Motion bad = make_sample_motion();
  bad.rotations[5].x() = NAN;
  EXPECT_THROW(write_bvh(dir / "bad.bvh", bad), Error);
  EXPECT_THROW(write_bvh(dir / "missing-dir" / "x.bvh", make_sample_motion()), Error);
  EXPECT_TRUE(fs::is_empty(dir));
  write_bvh(dir / "ok.bvh", make_sample_motion());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace koma::io
