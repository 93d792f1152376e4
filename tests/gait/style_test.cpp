#include "koma/gait/style.hpp"

#include <gtest/gtest.h>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "koma/gait/report.hpp"

namespace koma::gait {
namespace {

using test_util::sample_walk;

bool same_motion(const Motion& a, const Motion& b) {
  return a.frame_count == b.frame_count && a.frame_rate == b.frame_rate && a.rotations == b.rotations &&
         a.translations == b.translations;
}

// style() is exactly analyse -> adverbs -> synthesize, the steps the CLI and Python used to chain.
TEST(Style, EqualsTheStepsItChains) {
  const Motion walk = sample_walk();
  SampleSettings swingy;
  swingy.walk_cycles = 6;
  swingy.jump = false;
  swingy.arm_swing = 2.0;
  const Gait neutral = analyze_gait(walk);
  const WeightedAdverb adverb{make_adverb(neutral, analyze_gait(make_sample_motion(swingy))), 1.5, "swing"};
  StyleSettings st;
  st.synth.seconds = 4;
  st.synth.stride = 1.2;
  const StyleResult r = style(walk, std::span(&adverb, 1), st);
  const Motion manual = synthesize(apply_adverbs(neutral, std::span(&adverb, 1)), st.synth);
  EXPECT_TRUE(same_motion(r.motion, manual));
  EXPECT_TRUE(r.loop);
  EXPECT_EQ(style_summary(r)["frames"], manual.frame_count);
  const GaitAnalysis a = analyse_gait(walk);
  const auto report = analysis_report(a);
  EXPECT_EQ(report["period_s"], neutral.basis.period);
  // Per joint: K, reconstruction RMS, the raw cycles' content above K, the seam removed.
  ASSERT_EQ(report["joints"].size(), static_cast<size_t>(walk.joint_count()));
  ASSERT_EQ(a.raw_above.size(), static_cast<size_t>(walk.joint_count()));
  const std::vector<int> kj = joint_harmonics(a.gait);
  for (int j = 0; j < walk.joint_count(); ++j) {
    const auto& e = report["joints"][static_cast<size_t>(j)];
    EXPECT_EQ(e["name"], walk.skeleton.names[j]);
    EXPECT_EQ(e["harmonics"].get<int>(), kj[j]);
    EXPECT_EQ(e["channel_harmonics"].size(), 3u);
    EXPECT_NEAR(e["rms_deg"].get<double>(), a.error.joint_rms[j] * kRadToDeg, 1e-12);
    EXPECT_NEAR(e["raw_above_k_deg"].get<double>(), a.raw_above[j] * kRadToDeg, 1e-12);
    EXPECT_GE(e["raw_above_k_deg"].get<double>(), 0.0);
  }
  EXPECT_TRUE(report.contains("max_cycle_drift_deg"));
}

// Transitions turn looping off; the adverbs apply to the later gaits too.
TEST(Style, TransitionsAndRetarget) {
  const Gait g = analyze_gait(sample_walk());
  StyleSettings st;
  st.synth.seconds = 6;
  st.then.push_back({g, 3.0});
  const StyleResult r = style_gait(g, {}, st);
  EXPECT_FALSE(r.loop);
  std::vector<GaitSegment> segs{{g, 0.0}, {g, 3.0}};
  SynthSettings synth = st.synth;
  synth.loop = false;
  EXPECT_TRUE(same_motion(r.motion, synthesize(segs, synth)));

  StyleSettings other;
  other.synth.seconds = 2;
  other.target = g.basis.skeleton;
  other.target.names[0] = "Other";
  other.target_bones.assign(g.basis.bones.begin(), g.basis.bones.end());
  EXPECT_THROW(style_gait(g, {}, other), Error);
}

}  // namespace
}  // namespace koma::gait
