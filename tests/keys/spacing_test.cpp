// Issue 42: spacing charts between key poses. Every inbetween's share of the pose path, measured
// here from the source's forward kinematics and the written pose (not through the library's own
// path), must match the fraction it reports; key poses never move; slow-in-out crowds the keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/spacing.hpp"
#include "test_support.hpp"

namespace koma::keys {
namespace {

// Sum over joints of the distance between two poses' world joint positions.
double pose_distance(std::span<const Vec3> a, std::span<const Vec3> b, int joints) {
  double d = 0;
  for (int j = 0; j < joints; ++j) d += (a[j] - b[j]).norm();
  return d;
}

// The share of the gap's pose path that the pose `shown` (world positions) covers, where `at` is
// its reported position in source frames: the path runs from the key pose `from_pose` through
// every source frame strictly between the keys to the key pose `to_pose`.
struct Measured {
  double share = 0, total = 0;
};
Measured measure_share(const WorldPoses& src, int joints, std::span<const Vec3> from_pose, double from_at,
                       std::span<const Vec3> to_pose, double to_at, std::span<const Vec3> shown, double at) {
  double covered = 0, total = 0;
  std::span<const Vec3> prev = from_pose;
  bool placed = false;
  for (int f = static_cast<int>(std::floor(from_at)) + 1; f < to_at; ++f) {
    if (f <= from_at) continue;
    const std::span<const Vec3> cur = src.frame_positions(f);
    if (!placed && at <= f) {
      covered = total + pose_distance(prev, shown, joints);
      placed = true;
    }
    total += pose_distance(prev, cur, joints);
    prev = cur;
  }
  if (!placed) covered = total + pose_distance(prev, shown, joints);
  total += pose_distance(prev, to_pose, joints);
  return {total > 0 ? covered / total : 0.0, total};
}

Motion read(const std::string& rel) { return io::read_motion(test::shared_data() / rel).motion; }

// Every inbetween of `spacing` (on the spaced output `out`) against the source: its pose is the
// source's at the reported time, and its covered share is within `tol` of the reported fraction.
// Returns the number of inbetweens measured and adds to `worst` the largest difference.
int expect_shares_match(const Motion& source, const Spacing& spacing, const Motion& out, double tol,
                        const std::string& what, double& worst) {
  const WorldPoses src = forward_kinematics(source), shown = forward_kinematics(out);
  const int J = source.joint_count();
  int checked = 0;
  for (const Drawing& d : spacing.drawings) {
    if (d.kind != DrawingKind::inbetween) continue;
    const GapSpacing& g = spacing.gaps[static_cast<size_t>(d.gap)];
    const double from_at = g.start / spacing.frame_rate * source.frame_rate;
    const double to_at = std::min(g.end / spacing.frame_rate * source.frame_rate, source.frame_count - 1.0);
    EXPECT_NEAR(d.source_time * source.frame_rate, d.source_frame, 1e-9);
    EXPECT_GT(d.source_frame, from_at - 1e-9) << what;
    EXPECT_LT(d.source_frame, to_at + 1e-9) << what;
    const Measured m = measure_share(src, J, shown.frame_positions(g.start), from_at, shown.frame_positions(g.end), to_at,
                                     shown.frame_positions(d.frame), d.source_frame);
    if (m.total < 1e-6) continue;  // a still gap: every share is the same pose
    worst = std::max(worst, std::abs(m.share - d.chart));
    EXPECT_NEAR(m.share, d.chart, tol) << what << ": inbetween on frame " << d.frame << " of gap " << g.start << "-"
                                       << g.end << " (" << g.chart.name() << ")";
    ++checked;
  }
  EXPECT_GT(checked, 0) << what;
  return checked;
}

TEST(Chart, ParsesNamesAndFractions) {
  EXPECT_EQ(parse_chart("slow-in-out").kind, ChartKind::slow_in_out);
  EXPECT_EQ(parse_chart("SLOW_IN").kind, ChartKind::slow_in);
  EXPECT_EQ(parse_chart("halves").name(), "halves");
  const Chart c = parse_chart("0.1, 0.35,0.8");
  EXPECT_EQ(c.kind, ChartKind::custom);
  EXPECT_EQ(c.fractions, (std::vector<double>{0.1, 0.35, 0.8}));
  EXPECT_EQ(parse_chart(c.name()).fractions, c.fractions);  // the name reads back
}

TEST(Chart, RefusesFractionsOutsideOrNotIncreasing) {
  auto message = [](const char* text) {
    try {
      parse_chart(text);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_EQ(e.context(), "chart");
      return std::string(e.message());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("0.2,1.5").find("fraction 2 (1.5) is outside [0, 1]"), std::string::npos) << message("0.2,1.5");
  EXPECT_NE(message("-0.1").find("outside [0, 1]"), std::string::npos);
  EXPECT_NE(message("0.5,0.4").find("fraction 2 (0.4) does not increase on fraction 1 (0.5)"), std::string::npos);
  EXPECT_NE(message("0.5,0.5").find("does not increase"), std::string::npos);
  EXPECT_NE(message("fast").find("unknown chart 'fast'; expected source, even"), std::string::npos);
  EXPECT_NE(message("0.2,x").find("'x' in '0.2,x' is not a fraction"), std::string::npos);
  EXPECT_NE(message("nan").find("outside [0, 1]"), std::string::npos);
  Chart named{ChartKind::even, {0.5}};
  EXPECT_THROW(named.validate(), Error);
}

TEST(Chart, FractionsFollowTheirCurves) {
  const std::vector<double> u{0.25, 0.5, 0.75};
  EXPECT_EQ(chart_fractions(Chart{ChartKind::even, {}}, u), u);
  EXPECT_TRUE(chart_fractions(Chart{}, u).empty());  // source: measured, not chosen
  const auto in = chart_fractions(Chart{ChartKind::slow_in, {}}, u);
  const auto out = chart_fractions(Chart{ChartKind::slow_out, {}}, u);
  const auto both = chart_fractions(Chart{ChartKind::slow_in_out, {}}, u);
  const auto halves = chart_fractions(Chart{ChartKind::halves, {}}, u);
  for (size_t i = 0; i < u.size(); ++i) {
    EXPECT_GT(in[i], u[i]);   // ahead of even: crowds the next key
    EXPECT_LT(out[i], u[i]);  // behind even: crowds its own key
    EXPECT_NEAR(in[i] + chart_fractions(Chart{ChartKind::slow_out, {}}, std::vector<double>{1 - u[i]})[0], 1.0, 1e-12);
  }
  EXPECT_LT(both[0], u[0]);
  EXPECT_NEAR(both[1], 0.5, 1e-12);
  EXPECT_GT(both[2], u[2]);
  EXPECT_EQ(halves, (std::vector<double>{0.5, 0.75, 0.875}));
  // Each halves step is half the one before.
  EXPECT_NEAR(halves[2] - halves[1], (halves[1] - halves[0]) / 2, 1e-12);
  // A custom chart with the gap's count is used as written; with another count it is a curve.
  EXPECT_EQ(chart_fractions(Chart{ChartKind::custom, {0.1, 0.2, 0.9}}, u), (std::vector<double>{0.1, 0.2, 0.9}));
  const auto bent = chart_fractions(Chart{ChartKind::custom, {0.1}}, std::vector<double>{0.25, 0.5, 0.75});
  EXPECT_NEAR(bent[0], 0.05, 1e-12);
  EXPECT_NEAR(bent[1], 0.1, 1e-12);
  EXPECT_NEAR(bent[2], 0.55, 1e-12);
}

TEST(Spacing, SourceChartShowsTheResampledFramesAndKeysNeverMove) {
  const Motion src = make_sample_motion();
  const Motion m = resample(src, 24.0);
  KeySettings ks;
  ks.keys = 6;
  const KeySelection sel = select_keys(m, ks);
  const Motion held = hold(m, sel);
  for (ChartKind kind : {ChartKind::source, ChartKind::even, ChartKind::halves, ChartKind::slow_in_out}) {
    SpacingSettings st;
    st.chart.kind = kind;
    const Spacing sp = space_drawings(src, sel.keys(), 24.0, st);
    const Motion out = spaced_motion(src, sp);
    ASSERT_EQ(out.frame_count, m.frame_count);
    EXPECT_EQ(out.frame_rate, 24.0);
    for (int k : sel.keys()) {
      for (int j = 0; j < m.joint_count(); ++j) {  // bit for bit
        EXPECT_EQ(out.rotation(k, j).coeffs(), held.rotation(k, j).coeffs()) << "key " << k;
        EXPECT_EQ(out.translation(k, j), held.translation(k, j)) << "key " << k;
      }
    }
    for (const Drawing& d : sp.drawings) {
      if (kind != ChartKind::source || d.kind != DrawingKind::inbetween) continue;
      for (int j = 0; j < m.joint_count(); ++j) EXPECT_EQ(out.rotation(d.frame, j).coeffs(), m.rotation(d.frame, j).coeffs());
    }
  }
}

TEST(Spacing, DrawingsEveryOnFramesAndShortGapsHeld) {
  const Motion src = make_sample_motion();
  const std::vector<int> keys{0, 1, 3, 4, 12, resampled_frame_count(src.frame_count, src.frame_rate, 24) - 1};
  SpacingSettings st;
  st.on = 3;
  st.chart.kind = ChartKind::even;
  const Spacing sp = space_drawings(src, keys, 24.0, st);
  ASSERT_EQ(sp.gaps.size(), keys.size() - 1);
  EXPECT_TRUE(sp.gaps[0].held);  // 0-1, 1-3, 3-4: no room for an inbetween on 3s
  EXPECT_TRUE(sp.gaps[1].held);
  EXPECT_TRUE(sp.gaps[2].held);
  EXPECT_FALSE(sp.gaps[3].held);  // 4-12: inbetweens on 7 and 10
  EXPECT_EQ(sp.gaps[3].inbetweens, 2);
  std::vector<int> frames = sp.drawing_frames();
  EXPECT_TRUE(std::is_sorted(frames.begin(), frames.end()));
  EXPECT_EQ(std::vector<int>(frames.begin(), frames.begin() + 7), (std::vector<int>{0, 1, 3, 4, 7, 10, 12}));
  // A held gap shows its first key until the next.
  const Motion out = spaced_motion(src, sp);
  for (int j = 0; j < out.joint_count(); ++j) EXPECT_EQ(out.rotation(2, j).coeffs(), out.rotation(1, j).coeffs());
  for (int j = 0; j < out.joint_count(); ++j) EXPECT_EQ(out.rotation(8, j).coeffs(), out.rotation(7, j).coeffs());
}

TEST(Spacing, BadInputIsRefusedClearly) {
  const Motion src = make_sample_motion();
  const int frames = resampled_frame_count(src.frame_count, src.frame_rate, 24);
  SpacingSettings st;
  st.chart.kind = ChartKind::even;
  try {
    space_drawings(src, std::vector<int>{0}, 24.0, st);
    ADD_FAILURE() << "one key accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_EQ(e.context(), "chart");
    EXPECT_NE(std::string(e.message()).find("1 key pose gives no gap"), std::string::npos) << e.message();
  }
  EXPECT_THROW(space_drawings(src, std::vector<int>{0, 5, 5, frames - 1}, 24.0, st), Error);
  EXPECT_THROW(space_drawings(src, std::vector<int>{0, frames}, 24.0, st), Error);
  st.gaps.push_back({7, Chart{ChartKind::halves, {}}});
  try {
    space_drawings(src, std::vector<int>{0, 6, frames - 1}, 24.0, st);
    ADD_FAILURE() << "a chart for a frame that is no key accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.message()).find("gap from frame 7"), std::string::npos);
  }
  st.gaps = {{6, Chart{ChartKind::halves, {}}}, {6, Chart{}}};
  EXPECT_THROW(st.validate(), Error);
  st.gaps.clear();
  st.on = 0;
  EXPECT_THROW(st.validate(), Error);
}

TEST(Spacing, GapChartsOverrideTheDefault) {
  const Motion src = make_sample_motion();
  const int frames = resampled_frame_count(src.frame_count, src.frame_rate, 24);
  SpacingSettings st;
  st.chart.kind = ChartKind::even;
  st.gaps.push_back({10, Chart{ChartKind::halves, {}}});
  st.gaps.push_back({20, parse_chart("0.05,0.1")});
  const Spacing sp = space_drawings(src, std::vector<int>{0, 10, 20, frames - 1}, 24.0, st);
  EXPECT_EQ(sp.gaps[0].chart.kind, ChartKind::even);
  EXPECT_EQ(sp.gaps[1].chart.kind, ChartKind::halves);
  EXPECT_EQ(sp.gaps[2].chart.kind, ChartKind::custom);
  std::vector<double> halves;
  for (const Drawing& d : sp.drawings) {
    if (d.gap == 1 && d.kind == DrawingKind::inbetween) halves.push_back(d.chart);
  }
  EXPECT_EQ(halves, (std::vector<double>{0.5, 0.75, 0.875, 0.9375}));
}

// The check of issue 42 on shared takes (walks, punches, kicks at 30 and 120 fps): every chart,
// every inbetween within 0.03 of its fraction, measured from the source's FK.
TEST(Spacing, SharesMatchChartsOnSharedTakes) {
  KOMA_REQUIRE_SHARED_DATA();
  int inbetweens = 0;
  double worst = 0;
  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh",
                           "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh",
                           "bvh/styles/xia2015/neutral_18_000.bvh", "bvh/styles/xia2015/angry_22_000.bvh"}) {
    const Motion src = read(file);
    const Motion m = resample(src, 24.0);
    KeySettings ks;
    ks.keys = std::max(3, m.frame_count / 8);
    const KeySelection sel = select_keys(m, ks);
    for (const char* chart : {"source", "even", "slow-in", "slow-out", "slow-in-out", "halves", "0.05,0.3,0.9"}) {
      for (int on : {1, 2, 3}) {
        SpacingSettings st;
        st.on = on;
        st.chart = parse_chart(chart);
        const Spacing sp = space_drawings(src, sel.keys(), 24.0, st);
        inbetweens += expect_shares_match(src, sp, spaced_motion(src, sp), 0.03,
                                          std::string(file) + " chart " + chart + " on " + std::to_string(on), worst);
      }
    }
  }
  // The figure docs/keys.md quotes.
  std::printf("spacing: %d inbetweens measured, largest |share - chart| %.4f\n", inbetweens, worst);
}

// slow-in-out puts a gap's first inbetween nearer its key than even spacing does, its last nearer
// the next key: measured as covered shares of the same gaps.
TEST(Spacing, SlowInOutCrowdsBothKeys) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh"}) {
    const Motion src = read(file);
    KeySettings ks;
    ks.keys = 8;
    const KeySelection sel = select_keys(resample(src, 24.0), ks);
    SpacingSettings st;
    st.chart.kind = ChartKind::even;
    const Spacing even = space_drawings(src, sel.keys(), 24.0, st);
    st.chart.kind = ChartKind::slow_in_out;
    const Spacing slow = space_drawings(src, sel.keys(), 24.0, st);
    const WorldPoses e = forward_kinematics(spaced_motion(src, even)), s = forward_kinematics(spaced_motion(src, slow));
    int gaps = 0;
    for (const GapSpacing& g : slow.gaps) {
      if (g.inbetweens < 2 || g.path < 1e-3) continue;
      const int first = g.start + slow.on, last = g.start + g.inbetweens * slow.on;
      const int J = src.joint_count();
      // Distance (summed over joints) from each inbetween to the key it should crowd.
      EXPECT_LT(pose_distance(s.frame_positions(first), s.frame_positions(g.start), J),
                pose_distance(e.frame_positions(first), e.frame_positions(g.start), J))
          << file << " gap " << g.start << "-" << g.end;
      EXPECT_LT(pose_distance(s.frame_positions(last), s.frame_positions(g.end), J),
                pose_distance(e.frame_positions(last), e.frame_positions(g.end), J))
          << file << " gap " << g.start << "-" << g.end;
      ++gaps;
    }
    EXPECT_GE(gaps, 3) << file;
  }
}

}  // namespace
}  // namespace koma::keys
