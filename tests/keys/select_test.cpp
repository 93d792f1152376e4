#include "koma/keys/select.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "keys_test_util.hpp"
#include "koma/core/error.hpp"

namespace koma::keys {
namespace {

using test::for_each_selection;
using test::independent_error;
using test::random_features;

struct Combo {
  const char* name;
  HoldConstraints c;
};

std::vector<Combo> combos() {
  std::vector<Combo> v;
  v.push_back({"none", {}});
  HoldConstraints a; a.min_hold = 2; v.push_back({"min2", a});
  HoldConstraints b; b.max_hold = 3; v.push_back({"max3", b});
  HoldConstraints l; l.locked = {5}; v.push_back({"lock5", l});
  HoldConstraints all; all.min_hold = 2; all.max_hold = 4; all.locked = {4, 7}; v.push_back({"min2max4lock4,7", all});
  return v;
}

// Exact == brute force over every subset, for every metric, interpolator and constraint combination,
// for every n the constraints allow; the curve matches brute force too.
TEST(SelectExact, EqualsBruteForceForEveryMetricAndConstraint) {
  const int N = 11;
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const FeatureMatrix x = random_features(N, 2, 3, seed);
    for (Interpolation interp : {Interpolation::linear, Interpolation::cubic}) {
      for (Metric metric : {Metric::position, Metric::velocity, Metric::acceleration, Metric::hold}) {
        for (const Combo& combo : combos()) {
          const SegmentCosts costs = make_segment_costs(x, interp, metric, combo.c.min_hold, combo.c.max_span(N));
          const auto [nmin, nmax] = combo.c.key_range(N);
          for (int n = nmin; n <= nmax; ++n) {
            double brute = std::numeric_limits<double>::infinity();
            for_each_selection(N, combo.c, n, [&](const std::vector<int>& k) {
              brute = std::min(brute, independent_error(x, interp, metric, k));
            });
            SelectionTarget t;
            t.keys = n;
            const Selection s = select_exact(costs, combo.c, t);
            const std::string what = std::string(to_string(interp)) + "/" + std::string(to_string(metric)) + "/" + combo.name +
                                     " n=" + std::to_string(n) + " seed=" + std::to_string(seed);
            ASSERT_EQ(static_cast<int>(s.keys.size()), n) << what;
            EXPECT_TRUE(satisfies(s.keys, N, combo.c)) << what;
            EXPECT_NEAR(independent_error(x, interp, metric, s.keys), brute, 1e-7 * (1 + brute)) << what;
            EXPECT_NEAR(s.total, brute, 1e-7 * (1 + brute)) << what;
            ASSERT_FALSE(s.curve.empty()) << what;
            EXPECT_EQ(s.curve.back().keys, n) << what;
            EXPECT_NEAR(s.curve.back().error * costs.normaliser(), brute, 1e-7 * (1 + brute)) << what;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 200);
}

// With curve_keys the level DP's back-pointers give every point of the curve its own key frames:
// each set satisfies the constraints, has that many keys, and scores the brute-force optimum for
// its count (so a caller can re-hold at any n without selecting again).
TEST(SelectExact, CurveKeysAreOptimalForEveryCount) {
  const int N = 12;
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const FeatureMatrix x = random_features(N, 2, 3, seed);
    for (Metric metric : {Metric::position, Metric::velocity}) {
      for (const Combo& combo : combos()) {
        const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, metric, combo.c.min_hold, combo.c.max_span(N));
        const auto [nmin, nmax] = combo.c.key_range(N);
        SelectionTarget t;
        t.keys = nmax;
        ExactSettings es;
        es.method = ExactMethod::levels;
        es.curve_keys = true;
        const Selection s = select_exact(costs, combo.c, t, es);
        ASSERT_FALSE(s.curve.empty()) << combo.name;
        EXPECT_EQ(s.curve.back().frames, s.keys) << combo.name << ": the last point is the answer";
        for (const CurvePoint& p : s.curve) {
          const std::string what = std::string(combo.name) + " n=" + std::to_string(p.keys) + " seed=" + std::to_string(seed);
          ASSERT_EQ(static_cast<int>(p.frames.size()), p.keys) << what;
          EXPECT_TRUE(satisfies(p.frames, N, combo.c)) << what;
          double brute = std::numeric_limits<double>::infinity();
          for_each_selection(N, combo.c, p.keys, [&](const std::vector<int>& k) {
            brute = std::min(brute, independent_error(x, Interpolation::linear, metric, k));
          });
          EXPECT_NEAR(independent_error(x, Interpolation::linear, metric, p.frames), brute, 1e-7 * (1 + brute)) << what;
          EXPECT_NEAR(p.error * costs.normaliser(), brute, 1e-7 * (1 + brute)) << what;
          ++checked;
        }
        // Off by default: no frames.
        const Selection plain = select_exact(costs, combo.c, t);
        for (const CurvePoint& p : plain.curve) EXPECT_TRUE(p.frames.empty()) << combo.name;
        (void)nmin;
      }
    }
  }
  EXPECT_GT(checked, 60);
}

// The error budget gives the fewest keys whose optimal error is within it.
TEST(SelectExact, BudgetGivesFewestKeysMeetingIt) {
  const int N = 11;
  const FeatureMatrix x = random_features(N, 2, 3, 7);
  const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 0);
  HoldConstraints c;
  std::vector<double> best(N + 1, std::numeric_limits<double>::infinity());
  for (int n = 2; n <= N; ++n) {
    for_each_selection(N, c, n, [&](const std::vector<int>& k) {
      best[n] = std::min(best[n], independent_error(x, Interpolation::linear, Metric::position, k) / costs.normaliser());
    });
  }
  for (int want = 3; want <= 8; ++want) {
    SelectionTarget t;
    t.max_error = best[want] * 1.000001;
    const Selection s = select_exact(costs, c, t);
    int fewest = 2;
    while (best[fewest] > t.max_error) ++fewest;
    EXPECT_EQ(static_cast<int>(s.keys.size()), fewest);
    EXPECT_LE(s.error, t.max_error);
  }
}

// A take that travels far and fast (3 km at 1 m a frame): the table's windows are centred on
// their own frames and, for position, on their own straight line, so its costs are as precise as
// those of the same take standing still.
TEST(SegmentCosts, TableIsAsPreciseOnATakeThatTravelsFar) {
  const FeatureMatrix still = random_features(3000, 4, 3, 5);
  FeatureMatrix far = still;
  for (int f = 0; f < far.frames; ++f)
    for (int d = 0; d < far.dims; d += 3) far.values[static_cast<size_t>(f) * far.dims + d] += f * 1.0;
  auto worst = [](const FeatureMatrix& x, Metric metric) {
    const SegmentCosts c = make_segment_costs(x, Interpolation::linear, metric, 1, 48);
    double w = 0;
    for (int j = 1; j < x.frames; j += 11) {
      for (int s = 1; s <= std::min(48, j); ++s) {
        const double d = c.cost_direct(j - s, j);
        w = std::max(w, std::abs(c.cost(j - s, j) - d) / (1 + d));
      }
    }
    return w;
  };
  for (Metric metric : {Metric::position, Metric::hold}) {
    const double near = worst(still, metric), moving = worst(far, metric);
    std::printf("%s: worst relative error %.3g standing, %.3g travelling\n", std::string(to_string(metric)).c_str(), near, moving);
    EXPECT_LT(near, 1e-7) << to_string(metric);
    EXPECT_LT(moving, std::max(1e-10, 8 * near)) << to_string(metric);
  }
}

// The closed forms agree with direct reconstruction on long segments far from the origin.
TEST(SegmentCosts, ClosedFormsMatchDirectReconstruction) {
  const FeatureMatrix x = random_features(300, 4, 3, 11);
  for (Metric metric : {Metric::position, Metric::velocity, Metric::acceleration, Metric::hold}) {
    // With a table (filled in tiles from windowed sums) and without one (whole-take sums).
    const SegmentCosts c = make_segment_costs(x, Interpolation::linear, metric, 1, 40);
    const SegmentCosts sums = make_segment_costs(x, Interpolation::linear, metric, 2, 1);
    ASSERT_EQ(sums.table_max_span, 0);
    for (int i = 0; i < 299; i += 7) {
      for (int j = i + 1; j < std::min(300, i + 120); j += 5) {
        const double d = c.cost_direct(i, j);
        EXPECT_NEAR(sums.cost_closed(i, j), d, 1e-8 * (1 + d)) << to_string(metric) << " " << i << ".." << j;
        EXPECT_NEAR(c.cost(i, j), d, 1e-8 * (1 + d));
      }
    }
  }
}

TEST(Interpolation, CubicPassesThroughKeysAndKeepsStraightLines) {
  FeatureMatrix x = random_features(20, 1, 3, 3);
  std::vector<double> out(3);
  interpolate_frame(x, Interpolation::cubic, 3, 9, 3, out);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(out[d], x.row(3)[d], 1e-12);
  interpolate_frame(x, Interpolation::cubic, 3, 9, 9, out);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(out[d], x.row(9)[d], 1e-12);
  for (int f = 0; f < 20; ++f)
    for (int d = 0; d < 3; ++d) x.row(f)[d] = 0.25 * f + d;  // constant speed
  for (int k = 4; k < 9; ++k) {
    interpolate_frame(x, Interpolation::cubic, 3, 9, k, out);
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(out[d], x.row(k)[d], 1e-12);
  }
}

// The patent's Fig. 2: a point over a hill, fast up, slow at the top, fast down. Keeping 4 of 9
// keeps the start, the two frames where the speed changes and the end (1, 4, 6, 9 in 1-based).
TEST(SelectExact, PatentHillKeepsWhereSpeedChanges) {
  FeatureMatrix x;
  x.frames = 9;
  x.coords_per_point = 2;
  x.dims = 2;
  x.point_ids = {0};
  x.weights = {1};
  const double pts[9][2] = {{0, 0}, {1, 2}, {2, 4}, {3, 6}, {3.5, 6.2}, {4, 6}, {5, 4}, {6, 2}, {7, 0}};
  for (int f = 0; f < 9; ++f) x.values.insert(x.values.end(), {pts[f][0], pts[f][1]});
  for (Metric metric : {Metric::position, Metric::velocity}) {
    const SegmentCosts c = make_segment_costs(x, Interpolation::linear, metric, 1, 0);
    SelectionTarget t;
    t.keys = 4;
    const Selection s = select_exact(c, {}, t);
    EXPECT_EQ(s.keys, (std::vector<int>{0, 3, 5, 8})) << to_string(metric);
  }
}

// On random motions exact is never worse than the heuristics at the same n and constraints.
TEST(Selectors, ExactNeverWorseAndAllRespectConstraints) {
  const int N = 120;
  const FeatureMatrix x = random_features(N, 3, 3, 5);
  for (const Combo& combo : combos()) {
    HoldConstraints c = combo.c;
    if (!c.locked.empty()) c.locked.push_back(60);
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, c.min_hold, c.max_span(N));
    for (int n : {c.key_range(N).first + 1, 30, 45}) {
      if (n > c.key_range(N).second || n < c.key_range(N).first) continue;
      SelectionTarget t;
      t.keys = n;
      const Selection e = select_exact(costs, c, t);
      AnnealSettings as;
      as.iterations = 20000;
      for (const Selection& s : {select_uniform(costs, c, t), select_cumsum(costs, c, t), select_anneal(costs, c, t, as)}) {
        EXPECT_EQ(static_cast<int>(s.keys.size()), n) << combo.name;
        EXPECT_TRUE(satisfies(s.keys, N, c)) << combo.name << " n=" << n;
        EXPECT_LE(e.total, s.total * (1 + 1e-12) + 1e-12) << combo.name << " n=" << n;
      }
    }
  }
}

TEST(Selectors, AnnealIsDeterministicAndIncrementalMatchesFullWell) {
  const int N = 80;
  const FeatureMatrix x = random_features(N, 2, 3, 9);
  const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 0);
  SelectionTarget t;
  t.keys = 20;
  AnnealSettings a;
  a.iterations = 5000;
  const Selection s1 = select_anneal(costs, {}, t, a);
  const Selection s2 = select_anneal(costs, {}, t, a);
  EXPECT_EQ(s1.keys, s2.keys);
  // The three evaluations measure the same energy: with the same seed they walk the same path
  // (up to rounding in acceptance decisions, which this small problem does not hit).
  a.evaluation = AnnealEvaluation::segments;
  EXPECT_EQ(select_anneal(costs, {}, t, a).keys, s1.keys);
  a.evaluation = AnnealEvaluation::patent;
  EXPECT_EQ(select_anneal(costs, {}, t, a).keys, s1.keys);
  a.evaluation = AnnealEvaluation::delta;
  a.iterations = 50000;
  const Selection inc = select_anneal(costs, {}, t, a);
  const Selection e = select_exact(costs, {}, t);
  // Annealing improves on its uniform start and stays above the optimum.
  EXPECT_LT(inc.total, select_uniform(costs, {}, t).total);
  EXPECT_GE(inc.total, e.total * (1 - 1e-12));
}

TEST(Selectors, UniformOnNsIsTheGrid) {
  const FeatureMatrix x = random_features(13, 1, 3, 2);
  const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 0);
  EXPECT_EQ(select_uniform(costs, {}, {}, 3).keys, (std::vector<int>{0, 3, 6, 9, 12}));
  EXPECT_EQ(select_uniform(costs, {}, {}, 2, 1).keys, (std::vector<int>{0, 1, 3, 5, 7, 9, 11, 12}));
}

// The exact selector has three code paths: SIMD with byte back pointers (holds span <= 256
// frames), SIMD with 16-bit back pointers (longer), and the scalar DP when no cost table covers the
// holds. All three find the same optimum, with and without locked frames.
TEST(SelectExact, SimdAndScalarPathsAgree) {
  const int N = 1100;
  const FeatureMatrix x = random_features(N, 2, 3, 21);
  for (const bool locked : {false, true}) {
    HoldConstraints unlimited;  // holds up to 1099: 16-bit back pointers
    HoldConstraints capped;
    capped.max_hold = 250;  // hold - 1 fits a byte
    if (locked) unlimited.locked = capped.locked = {333, 334, 800};
    SelectionTarget t;
    t.keys = 30;
    const SegmentCosts all = make_segment_costs(x, Interpolation::linear, Metric::hold, 1, 0);
    const SegmentCosts upto250 = make_segment_costs(x, Interpolation::linear, Metric::hold, 1, 250);
    const SegmentCosts none = make_segment_costs(x, Interpolation::linear, Metric::hold, 2, 1);  // no table
    ASSERT_EQ(none.table_width(), 0);
    const Selection a = select_exact(all, unlimited, t);
    const Selection b = select_exact(upto250, capped, t);
    const Selection c = select_exact(none, capped, t);
    int longest = 0;
    for (size_t q = 0; q + 1 < a.keys.size(); ++q) longest = std::max(longest, a.keys[q + 1] - a.keys[q]);
    ASSERT_LE(longest, 250);  // the unlimited optimum is feasible for the capped problem: same optimum
    EXPECT_NEAR(a.total, b.total, 1e-9 * a.total) << "locked " << locked;
    EXPECT_NEAR(b.total, c.total, 1e-9 * b.total) << "locked " << locked;
    EXPECT_NEAR(c.total, none.total(c.keys), 1e-9 * c.total);
    if (locked) {
      for (int f : {333, 334, 800}) EXPECT_TRUE(std::binary_search(b.keys.begin(), b.keys.end(), f)) << f;
    }
    // The capped curve starts at 6 keys (5 holds of <= 250 frames cover 1099); it can only be higher.
    if (!locked) {
      ASSERT_EQ(a.curve.size(), b.curve.size() + 4);
      for (size_t q = 0; q < b.curve.size(); ++q) {
        EXPECT_EQ(a.curve[q + 4].keys, b.curve[q].keys);
        EXPECT_GE(b.curve[q].error, a.curve[q + 4].error * (1 - 1e-12));
      }
    }
    ASSERT_EQ(b.curve.size(), c.curve.size());
    for (size_t q = 0; q < b.curve.size(); ++q) EXPECT_NEAR(b.curve[q].error, c.curve[q].error, 1e-9 * c.curve[q].error);
  }
}

TEST(Error, SelectionBadInput) {
  const int N = 10;
  const SegmentCosts costs = make_segment_costs(random_features(N, 1, 3, 1), Interpolation::linear, Metric::position, 1, 0);
  auto expect_invalid = [&](const HoldConstraints& c, int n, const char* needle) {
    SelectionTarget t;
    t.keys = n;
    try {
      select_exact(costs, c, t);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_invalid({}, 1, "at least 2");
  expect_invalid({}, 11, "more than the 10 frames");
  HoldConstraints minh;
  minh.min_hold = 4;
  expect_invalid(minh, 4, "impossible");  // 3 holds of >= 4 frames need >= 13 frames
  HoldConstraints locks;
  locks.min_hold = 3;
  locks.locked = {3, 4};
  expect_invalid(locks, 4, "closer than the minimum hold");
  HoldConstraints out_of_range;
  out_of_range.locked = {12};
  expect_invalid(out_of_range, 4, "outside");
  HoldConstraints maxh;
  maxh.max_hold = 2;
  expect_invalid(maxh, 4, "impossible");
  SelectionTarget none;
  EXPECT_THROW(select_exact(costs, {}, none), Error);
  // Slerp needs poses.
  EXPECT_THROW(make_segment_costs(random_features(N, 1, 3, 1), Interpolation::slerp, Metric::position, 1, 0), Error);
  // NaN features.
  FeatureMatrix bad = random_features(N, 1, 3, 1);
  bad.row(4)[1] = std::nan("");
  try {
    make_segment_costs(bad, Interpolation::linear, Metric::position, 1, 0);
    ADD_FAILURE() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find("frame 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::keys
