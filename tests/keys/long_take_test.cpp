// The long-take paths of the exact selector give exactly what the plain ones give: features
// generated per table window instead of stored (bit for bit the same rows, table, keys and
// residual report), on random clips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/select.hpp"

namespace koma::keys {
namespace {

// The sample walk at `rate` with every rotation jittered (seeded) and the root wandering, so
// segments differ and ties are rare.
Motion random_clip(double rate, int cycles, std::uint64_t seed) {
  SampleSettings ss;
  ss.frame_rate = rate;
  ss.walk_cycles = cycles;
  Motion m = make_sample_motion(ss);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 0.05);
  for (Quat& q : m.rotations) q = (q * Quat(Eigen::AngleAxisd(n(rng), Vec3(n(rng), n(rng), 1).normalized()))).normalized();
  for (int f = 0; f < m.frame_count; ++f) m.translations[static_cast<size_t>(f) * m.joint_count()] += Vec3(n(rng), n(rng), n(rng));
  return m;
}

TEST(GeneratedFeatures, RowsEqualStoredBitForBit) {
  const Motion m = random_clip(120, 2, 7);
  FeatureSettings fs;
  fs.camera.projection = Projection::side;
  const FeatureMatrix stored = extract_features(m, fs);
  const FeatureMatrix gen = detail::generated_features_of_valid(m, fs, {});
  ASSERT_FALSE(gen.stored());
  EXPECT_TRUE(gen.values.empty());
  ASSERT_EQ(gen.dims, stored.dims);
  EXPECT_EQ(gen.point_ids, stored.point_ids);
  std::vector<double> scratch;
  for (int first : {0, 1, 37, m.frame_count - 5}) {
    const double* r = gen.rows(first, 5, scratch);
    EXPECT_EQ(std::memcmp(r, stored.row(first), 5 * sizeof(double) * static_cast<size_t>(stored.dims)), 0) << first;
  }
}

// Random clips, holds, metrics and projections: the same cost table (every byte), the same
// selection and certificate, the same residual report.
TEST(GeneratedFeatures, SameTableKeysAndReportOnRandomClips) {
  std::mt19937_64 rng(43);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const double rate = trial % 3 == 0 ? 24.0 : 120.0;
    const Motion m = random_clip(rate, 3 + 2 * (trial % 4), 100 + static_cast<std::uint64_t>(trial));
    const int N = m.frame_count;
    FeatureSettings fs;
    fs.camera.projection = trial % 4 == 1 ? Projection::front : Projection::none;
    const Metric metric = trial % 5 == 2 ? Metric::hold : Metric::position;
    HoldConstraints c;
    c.min_hold = 1 + static_cast<int>(rng() % 3);
    c.max_hold = c.min_hold + 8 + static_cast<int>(rng() % 300);  // across the 512-frame windows' overlap
    if (trial % 4 == 3) c.locked = {N / 3};
    const int n = std::clamp(N / (3 + trial % 5), c.key_range(N).first, c.key_range(N).second);
    const SegmentCosts a = make_segment_costs(extract_features(m, fs), Interpolation::linear, metric, c.min_hold, c.max_span(N));
    const SegmentCosts b = make_segment_costs(detail::generated_features_of_valid(m, fs, {}), Interpolation::linear, metric,
                                              c.min_hold, c.max_span(N));
    const std::string what = "trial " + std::to_string(trial) + ", " + std::to_string(N) + " frames, holds " +
                             std::to_string(c.min_hold) + ".." + std::to_string(c.max_hold) + ", n " + std::to_string(n);
    ASSERT_EQ(a.table.size(), b.table.size()) << what;
    EXPECT_EQ(std::memcmp(a.table.data(), b.table.data(), a.table.size() * sizeof(double)), 0) << what;
    SelectionTarget t;
    t.keys = n;
    const Selection sa = select_exact(a, c, t, ExactSettings{});
    const Selection sb = select_exact(b, c, t, ExactSettings{});
    EXPECT_EQ(sa.keys, sb.keys) << what;
    EXPECT_EQ(sa.total, sb.total) << what;
    EXPECT_EQ(sa.lower_bound, sb.lower_bound) << what;
    EXPECT_EQ(sa.optimal, sb.optimal) << what;
    const ResidualSummary ra = summarize_residuals(a, sa.keys), rb = summarize_residuals(b, sb.keys);
    EXPECT_EQ(ra.segment_costs, rb.segment_costs) << what;
    EXPECT_EQ(ra.worst, rb.worst) << what;
    EXPECT_EQ(ra.worst_frame, rb.worst_frame) << what;
    EXPECT_EQ(ra.worst_point, rb.worst_point) << what;
    for (size_t q = 0; q + 1 < sa.keys.size(); q += 7) EXPECT_EQ(a.cost_direct(sa.keys[q], sa.keys[q + 1]), b.cost_direct(sa.keys[q], sa.keys[q + 1])) << what;
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

// select_keys takes the generated path for the exact selector: the same keys as stored features
// through the selector directly, and the report's figures agree.
TEST(GeneratedFeatures, SelectKeysMatchesStoredFeatures) {
  const Motion m = random_clip(120, 3, 5);
  KeySettings st;
  st.ratio = 0.1;
  st.constraints.max_hold = 48;
  const KeySelection ks = select_keys(m, st);
  const int N = m.frame_count;
  HoldConstraints c;
  c.max_hold = 48;
  const SegmentCosts costs = make_segment_costs(extract_features(m), Interpolation::linear, Metric::position, 1, c.max_span(N));
  SelectionTarget t;
  t.keys = static_cast<int>(std::lround(0.1 * N));
  const Selection s = select_exact(costs, c, t, ExactSettings{});
  EXPECT_EQ(ks.layers.front().keys, s.keys);
  EXPECT_EQ(ks.layers.front().total, s.total);
  EXPECT_EQ(ks.worst_frame, summarize_residuals(costs, s.keys).worst_frame);
}

// A generated row that is not finite is named by frame, as stored features are, and nothing is
// selected.
TEST(GeneratedFeatures, NonFiniteRowNamesTheFirstFrame) {
  const Motion m = random_clip(120, 30, 9);
  FeatureMatrix x = detail::generated_features_of_valid(m, {}, {});
  auto rows = x.generate;
  const int N = m.frame_count, D = x.dims, bad1 = N / 3, bad2 = 2 * N / 3;  // two tiles apart
  ASSERT_GT(bad2 - bad1, 1024);
  x.generate = [rows, D, bad1, bad2](int first, int count, double* out) {
    rows(first, count, out);
    for (int f = first; f < first + count; ++f)
      if (f == bad1 || f == bad2) out[static_cast<size_t>(f - first) * D + 4] = std::numeric_limits<double>::quiet_NaN();
  };
  try {
    (void)make_segment_costs(std::move(x), Interpolation::linear, Metric::position, 1, 48);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find("frame " + std::to_string(bad1)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("feature 4"), std::string::npos) << e.what();
  }
}

// Generated features serve the closed-form table only: anything else is refused, not guessed.
TEST(GeneratedFeatures, RefusedWithoutTheClosedFormTable) {
  const Motion m = random_clip(24, 1, 3);
  EXPECT_THROW((void)make_segment_costs(detail::generated_features_of_valid(m, {}, {}), Interpolation::cubic, Metric::position, 1, 8),
               Error);
}

}  // namespace
}  // namespace koma::keys
