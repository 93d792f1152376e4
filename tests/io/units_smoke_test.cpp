// Issue 19: every BVH of the shared corpus reads at a human size, or says which scale it used.
// Prints, per file, the figure's height in metres, the length of the character's path and the
// frame rate (the smoke table of docs/formats.md comes from this output).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "koma/body/height.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/stats.hpp"
#include "koma/core/units.hpp"
#include "koma/io/bvh.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

bool is_humanoid(const Skeleton& sk) {
  const body::JointRoles r = body::find_joint_roles(sk);
  using body::Role;
  return r.has(Role::head) && r.has(Role::left_ankle) && r.has(Role::right_ankle) && r.has(Role::left_hand) &&
         r.has(Role::right_hand);
}

// The leg-bone height of the built-in 1.75 m character (no shared data needed), and the fallback.
TEST(UnitsSmoke, HeightFromLegBones) {
  const Motion m = make_sample_motion();
  const body::HeightEstimate h = body::estimate_height(m);
  EXPECT_TRUE(h.from_legs);
  EXPECT_NEAR(h.height, 1.75, 0.2) << h.rule;
  Motion legless = rest_motion(m.skeleton, 30, 2);
  for (auto& n : legless.skeleton.names) n = "bone" + std::to_string(&n - legless.skeleton.names.data());
  const body::HeightEstimate f = body::estimate_height(legless);
  EXPECT_FALSE(f.from_legs);
  EXPECT_DOUBLE_EQ(f.height, figure_size(legless));
}

TEST(UnitsSmoke, EveryHumanoidIsHumanSizedOrWarned) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = test::shared_bvh_files();
  ASSERT_GT(files.size(), 40u);
  int humanoids = 0, warned = 0;
  fmt::print("{:<64} {:>6} {:>8} {:>6}  {}\n", "file", "height", "path", "fps", "unit");
  for (const auto& path : files) {
    const ReadResult r = read_bvh(path);
    MotionStats s = motion_stats(r.motion);
    s.height = body::estimate_height(r.motion).height;
    const std::string rel = std::filesystem::relative(path, test::shared_data()).string();
    fmt::print("{:<64} {:>5.2f}m {:>7.2f}m {:>6.1f}  {}\n", rel, s.height, s.root_travel, s.frame_rate,
               to_string(r.motion.source_unit));
    EXPECT_TRUE(r.unit_detected) << rel;
    EXPECT_FALSE(r.unit_rule.empty()) << rel;
    if (!is_humanoid(r.motion.skeleton)) continue;
    ++humanoids;
    if (s.height >= kHumanMinHeight && s.height <= kHumanMaxHeight) continue;
    ++warned;
    bool named = false;
    for (const auto& w : r.warnings) {
      named |= w.find(fmt::format("{:.2f} m", s.height)) != std::string::npos &&
               w.find("file units tall; read as") != std::string::npos;
    }
    EXPECT_TRUE(named) << rel << ": " << s.height << " m without a warning naming the scale";
  }
  fmt::print("{} humanoids, {} outside {}-{} m with a warning\n", humanoids, warned, kHumanMinHeight, kHumanMaxHeight);
  EXPECT_GT(humanoids, 40);
}

// The most common free mocap (cgspeed CMU, Xia 2015) reads in CMU units as a person, not a doll.
TEST(UnitsSmoke, CmuAndXiaReadInCmuUnits) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* f : {"bvh/styles/xia2015/neutral_01_000.bvh", "bvh/cmu/assimp/01_01.bvh", "bvh/cmu/bvh11/131_01.bvh"}) {
    const ReadResult r = read_bvh(test::shared_data() / f);
    EXPECT_EQ(r.motion.source_unit, LengthUnit::cmu) << f << ": " << r.unit_rule;
    const double h = body::estimate_height(r.motion).height;
    EXPECT_GT(h, 1.4) << f;
    EXPECT_LT(h, 2.1) << f;
  }
}

// Bandai-Namco walks keep a static dummy root at the origin: height and path come from the hips.
TEST(UnitsSmoke, BandaiWalkMeasuresTheHipsNotTheDummyRoot) {
  KOMA_REQUIRE_SHARED_DATA();
  const ReadResult r = read_bvh(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh");
  MotionStats s = motion_stats(r.motion);
  s.height = body::estimate_height(r.motion).height;
  EXPECT_EQ(r.motion.skeleton.names[static_cast<size_t>(s.path_joint)], "Hips");
  EXPECT_GT(s.root_travel, 3.0);
  EXPECT_GE(s.height, kHumanMinHeight);
  EXPECT_LE(s.height, kHumanMaxHeight);
  EXPECT_EQ(r.motion.source_unit, LengthUnit::centimetre);
}

}  // namespace
}  // namespace koma::io
