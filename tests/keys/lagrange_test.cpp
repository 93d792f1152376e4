// The Lagrangian exact selector against the level DP (the reference) and brute force, its
// certificate, and every SIMD path this CPU runs.
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>

#include "keys_test_util.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/simd.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/select.hpp"
#include "test_support.hpp"

namespace koma::keys {
namespace {

using test::for_each_selection;
using test::independent_error;
using test::random_features;

Selection run(const SegmentCosts& costs, const HoldConstraints& c, int n, ExactMethod method,
              std::int64_t corridor_states = 50'000'000) {
  SelectionTarget t;
  t.keys = n;
  ExactSettings st;
  st.method = method;
  st.corridor_states = corridor_states;
  return select_exact(costs, c, t, st);
}

double rel_tol(double v) { return 1e-9 * std::max(1.0, std::abs(v)); }

// Pins one SIMD path for a scope.
struct IsaScope {
  explicit IsaScope(simd::Isa isa) : saved(simd::active()) { simd::set_active(isa); }
  ~IsaScope() { simd::set_active(saved); }
  simd::Isa saved;
};

// Brute force on small N: every n, every constraint combination; the certificate holds.
TEST(SelectLagrange, EqualsBruteForceOnSmallClips) {
  const int N = 13;
  struct Combo { const char* name; HoldConstraints c; };
  std::vector<Combo> combos;
  combos.push_back({"none", {}});
  HoldConstraints a; a.min_hold = 2; combos.push_back({"min2", a});
  HoldConstraints b; b.max_hold = 3; combos.push_back({"max3", b});
  HoldConstraints l; l.locked = {5}; l.max_hold = 6; combos.push_back({"lock5", l});
  HoldConstraints all; all.min_hold = 2; all.max_hold = 4; all.locked = {4, 7}; combos.push_back({"min2max4lock", all});
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const FeatureMatrix x = random_features(N, 2, 3, seed);
    for (Metric metric : {Metric::position, Metric::velocity, Metric::hold}) {
      for (const Combo& combo : combos) {
        const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, metric, combo.c.min_hold, combo.c.max_span(N));
        const auto [nmin, nmax] = combo.c.key_range(N);
        for (int n = nmin; n <= nmax; ++n) {
          double brute = std::numeric_limits<double>::infinity();
          for_each_selection(N, combo.c, n, [&](const std::vector<int>& k) {
            brute = std::min(brute, independent_error(x, Interpolation::linear, metric, k));
          });
          const Selection s = run(costs, combo.c, n, ExactMethod::lagrange);
          const std::string what = std::string(to_string(metric)) + "/" + combo.name + " n=" + std::to_string(n) +
                                   " seed=" + std::to_string(seed);
          ASSERT_EQ(static_cast<int>(s.keys.size()), n) << what;
          EXPECT_TRUE(satisfies(s.keys, N, combo.c)) << what;
          EXPECT_TRUE(s.optimal) << what;
          EXPECT_NEAR(s.total, brute, 1e-7 * (1 + brute)) << what;
          EXPECT_LE(s.lower_bound, brute + 1e-7 * (1 + brute)) << what;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// Random motions of a few hundred frames: equal to the level DP at many n and constraints; the
// hull points of the curve are optimal values for their n.
TEST(SelectLagrange, EqualsLevelDpOnRandomMotions) {
  int checked = 0, hull_points = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const int N = 200 + 37 * static_cast<int>(seed);
    const FeatureMatrix x = random_features(N, 3, 3, seed);
    HoldConstraints c;
    c.min_hold = 1 + static_cast<int>(seed % 2);
    c.max_hold = 8 + 4 * static_cast<int>(seed % 3);
    if (seed % 2 == 0) c.locked = {N / 3, N / 3 + 5, 2 * N / 3};
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, c.min_hold, c.max_hold);
    const auto [nmin, nmax] = c.key_range(N);
    // The level DP's whole curve at the largest n, then Lagrangian runs along it.
    const Selection ref = run(costs, c, nmax, ExactMethod::levels);
    for (int n = nmin; n <= nmax; n += std::max(1, (nmax - nmin) / 23)) {
      const Selection lv = run(costs, c, n, ExactMethod::levels);
      const Selection lg = run(costs, c, n, ExactMethod::lagrange);
      ASSERT_EQ(static_cast<int>(lg.keys.size()), n);
      EXPECT_TRUE(satisfies(lg.keys, N, c));
      EXPECT_TRUE(lg.optimal) << "seed " << seed << " n " << n;
      EXPECT_NEAR(lg.total, lv.total, rel_tol(lv.total)) << "seed " << seed << " n " << n;
      EXPECT_LE(lg.lower_bound, lv.total + rel_tol(lv.total));
      for (const CurvePoint& p : lg.curve) {
        ASSERT_TRUE(p.hull);
        const auto at = std::find_if(ref.curve.begin(), ref.curve.end(), [&](const CurvePoint& q) { return q.keys == p.keys; });
        ASSERT_NE(at, ref.curve.end());
        EXPECT_NEAR(p.error, at->error, rel_tol(at->error)) << "hull point n=" << p.keys;
        ++hull_points;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(hull_points, 100);
}

// The warm-started price search (ExactSettings::warm_start, the default) picks exactly the keys of
// the cold one (chords only), with the same total and certificate verdict, on many random clips:
// smooth random walks, and the same with exact ties (still stretches where every hold costs
// nothing, and a stretch repeated bit for bit, so several key sets cost the same), at counts
// across the feasible range, with and without locks and hold limits, under every metric.
TEST(SelectLagrange, WarmStartPicksTheColdKeys) {
  int checked = 0, fewer = 0, warm_solves = 0, cold_solves = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const int N = 300 + 97 * static_cast<int>(seed % 7);
    FeatureMatrix x = random_features(N, 3, 3, seed);
    if (seed % 3 != 0) {
      // Ties: a still stretch (every row the same) and, when seed % 3 == 2, the first stretch of
      // frames repeated later bit for bit.
      const int still = N / 5, len = N / 6;
      for (int f = still + 1; f < still + len; ++f) std::memcpy(x.row(f), x.row(still), sizeof(double) * x.dims);
      if (seed % 3 == 2) {
        const int from = 10, to = N / 2 + 7;
        for (int f = 0; f < len && to + f < N; ++f) std::memcpy(x.row(to + f), x.row(from + f), sizeof(double) * x.dims);
      }
    }
    HoldConstraints c;
    c.min_hold = 1 + static_cast<int>(seed % 2);
    c.max_hold = 6 + 5 * static_cast<int>(seed % 4);
    if (seed % 4 == 1) c.locked = {N / 4, N / 2 + 3};
    const Metric metric = seed % 5 == 0 ? Metric::hold : seed % 5 == 1 ? Metric::velocity : Metric::position;
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, metric, c.min_hold, c.max_hold);
    const auto [nmin, nmax] = c.key_range(N);
    for (int n = nmin; n <= nmax; n += std::max(1, (nmax - nmin) / 17)) {
      SelectionTarget t;
      t.keys = n;
      ExactSettings warm, cold;
      warm.method = cold.method = ExactMethod::lagrange;
      cold.warm_start = false;
      ASSERT_TRUE(warm.warm_start);  // the default
      const Selection w = select_exact(costs, c, t, warm), k = select_exact(costs, c, t, cold);
      const std::string what = "seed " + std::to_string(seed) + " n " + std::to_string(n);
      ASSERT_EQ(w.keys, k.keys) << what;
      EXPECT_EQ(w.total, k.total) << what;
      EXPECT_EQ(w.optimal, k.optimal) << what;
      fewer += w.solves < k.solves ? 1 : 0;
      warm_solves += w.solves;
      cold_solves += k.solves;
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(fewer, 0);  // the warm start does save solves somewhere
  std::printf("warm start: %d selections, %d warm solves against %d cold, fewer on %d\n", checked, warm_solves,
              cold_solves, fewer);
}

// A hand-made non-convex error curve: a zigzag 0 -> 1 -> -1 -> 0 through two corners. Two inner
// keys on the corners make n = 4 free, while one inner key (n = 3) removes almost nothing of the
// n = 2 error, so n = 3 lies above the chord from 2 to 4: off the convex hull, where the price
// search alone cannot reach it. The gap must be closed (or reported), with the optimum inside it.
TEST(SelectLagrange, NonConvexCurveIsClosedOrBounded) {
  int nonconvex = 0;
  for (int N = 20; N <= 80; N += 6) {
    const int p = N / 3, q = 2 * N / 3 + (N % 4);
    FeatureMatrix x;
    x.frames = N;
    x.coords_per_point = 1;
    x.dims = 1;
    x.point_ids = {0};
    x.weights = {1.0};
    x.values.resize(static_cast<size_t>(N));
    for (int f = 0; f < N; ++f) {
      double v = 0;
      if (f <= p) v = static_cast<double>(f) / p;
      else if (f <= q) v = 1 - 2.0 * (f - p) / (q - p);
      else v = -1 + static_cast<double>(f - q) / (N - 1 - q);
      x.values[static_cast<size_t>(f)] = v;
    }
    HoldConstraints c;
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 0);
    const Selection ref = run(costs, c, 6, ExactMethod::levels);
    ASSERT_GE(ref.curve.size(), 4u);
    // Curve points n = 2, 3, 4: convex iff e3 <= (e2 + e4) / 2.
    const double e2 = ref.curve[0].error, e3 = ref.curve[1].error, e4 = ref.curve[2].error;
    if (e3 <= (e2 + e4) / 2) continue;
    ++nonconvex;
    const Selection closed = run(costs, c, 3, ExactMethod::lagrange);
    const Selection levels = run(costs, c, 3, ExactMethod::levels);
    EXPECT_TRUE(closed.optimal);
    EXPECT_NEAR(closed.total, levels.total, rel_tol(levels.total)) << "N " << N;
    // With no room to close the gap, the answer is bounded: lower_bound <= optimum <= total.
    const Selection bounded = run(costs, c, 3, ExactMethod::lagrange, 1);
    EXPECT_LE(bounded.lower_bound, levels.total + rel_tol(levels.total));
    EXPECT_GE(bounded.total, levels.total - rel_tol(levels.total));
    EXPECT_EQ(bounded.keys.size(), 3u);
    if (!bounded.optimal) {
      EXPECT_LT(bounded.lower_bound, bounded.total);
    }
  }
  EXPECT_GT(nonconvex, 5) << "too few zigzags gave a non-convex curve: the test checks little";
}

// Every SIMD path this CPU runs: the same tables and the same selections (scalar is the reference).
TEST(SelectLagrange, EverySimdPathAgrees) {
  const FeatureMatrix x = random_features(1500, 5, 3, 42);
  HoldConstraints c;
  c.max_hold = 24;
  c.locked = {700};
  SegmentCosts ref_costs;
  Selection ref_lg, ref_lv;
  {
    IsaScope scope(simd::Isa::scalar);
    ref_costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 24);
    ref_lg = run(ref_costs, c, 500, ExactMethod::lagrange);
    ref_lv = run(ref_costs, c, 500, ExactMethod::levels);
  }
  EXPECT_NEAR(ref_lg.total, ref_lv.total, rel_tol(ref_lv.total));
  int paths = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    IsaScope scope(isa);
    const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 24);
    // Every path adds in the same order (eight-lane groups, one reduction order): the same table
    // bit for bit, so every machine selects the same keys.
    ASSERT_EQ(costs.table.size(), ref_costs.table.size());
    EXPECT_EQ(std::memcmp(costs.table.data(), ref_costs.table.data(), costs.table.size() * sizeof(double)), 0)
        << simd::to_string(isa) << ": the table differs from the scalar path's";
    // Every path's table against direct reconstruction (no sums at all), on a sample of segments:
    // the closed form's rounding is relative to the clip's cost scale (its mean segment cost).
    std::vector<std::pair<double, double>> pairs;
    double mean = 0;
    for (int j = 1; j < x.frames; j += 7) {
      for (int s = 1; s <= std::min(24, j); s += 3) {
        pairs.emplace_back(costs.cost(j - s, j), costs.cost_direct(j - s, j));
        mean += pairs.back().second;
      }
    }
    mean /= static_cast<double>(pairs.size());
    double worst = 0;
    for (const auto& [table, direct] : pairs) worst = std::max(worst, std::abs(table - direct) / (direct + mean));
    EXPECT_LT(worst, 1e-8) << simd::to_string(isa);
    const Selection lg = run(costs, c, 500, ExactMethod::lagrange);
    const Selection lv = run(costs, c, 500, ExactMethod::levels);
    // Each path's answer is optimal for its own table; the tables differ by rounding (FMA, the
    // closed form's cancellation), so across paths the totals agree to 1e-7.
    EXPECT_NEAR(lg.total, lv.total, rel_tol(lv.total)) << simd::to_string(isa);
    EXPECT_NEAR(lv.total, ref_lv.total, 1e-7 * ref_lv.total) << simd::to_string(isa);
    EXPECT_TRUE(lg.optimal) << simd::to_string(isa);
    ++paths;
  }
  EXPECT_GE(paths, 1);
  std::printf("checked SIMD paths: %s\n", simd::cpu_flags().c_str());
}

TEST(SelectLagrange, ImpossibleKeyCountIsAnError) {
  const FeatureMatrix x = random_features(100, 1, 3, 3);
  HoldConstraints c;
  c.max_hold = 10;
  const SegmentCosts costs = make_segment_costs(x, Interpolation::linear, Metric::position, 1, 10);
  EXPECT_THROW(run(costs, c, 5, ExactMethod::lagrange), Error);  // 99 frames need >= 11 keys
  // The Lagrangian search needs a table covering the holds.
  const SegmentCosts untabled = make_segment_costs(x, Interpolation::linear, Metric::position, 2, 1);
  EXPECT_THROW(run(untabled, c, 20, ExactMethod::lagrange), Error);
}

// Defaults on a long take: the longest hold is 2 s of the motion's rate (raised only when the key
// count needs it), so the table stays linear in the length and the exact answer is certified.
TEST(SelectKeys, DefaultMaxHoldIsTwoSecondsAndLongTakesRun) {
  SampleSettings ss;
  ss.frame_rate = 120;
  ss.walk_cycles = 45;  // ~50 s, ~6,000 frames
  const Motion m = make_sample_motion(ss);
  ASSERT_GT(m.frame_count, 5000);
  KeySettings st;  // on 2s, exact
  const KeySelection on2 = select_keys(m, st);
  EXPECT_EQ(on2.layers[0].max_hold, 240);
  EXPECT_TRUE(on2.layers[0].optimal);
  for (size_t a = 0; a + 1 < on2.keys().size(); ++a) EXPECT_LE(on2.keys()[a + 1] - on2.keys()[a], 240);
  st.keys = 20;  // a mean hold of ~560 frames: the cap rises to twice that
  const KeySelection few = select_keys(m, st);
  EXPECT_EQ(static_cast<int>(few.keys().size()), 20);
  EXPECT_GE(few.layers[0].max_hold, 2 * (m.frame_count - 1) / 19);
  st.keys = 0;
  st.max_hold_seconds = 0.25;  // 30 frames
  st.ratio = 0.1;
  const KeySelection quarter = select_keys(m, st);
  EXPECT_EQ(quarter.layers[0].max_hold, 30);
}

TEST(Simd, UnknownOrUnsupportedIsaIsAnError) {
  EXPECT_FALSE(simd::parse_isa("sse9").has_value());
  EXPECT_EQ(simd::parse_isa("baseline"), simd::Isa::scalar);
  for (simd::Isa isa : {simd::Isa::scalar, simd::Isa::avx2, simd::Isa::avx512}) {
    if (!simd::supported(isa)) {
      EXPECT_THROW(simd::set_active(isa), Error);
    }
  }
  EXPECT_TRUE(simd::supported(simd::Isa::scalar));
}

// Every real clip, at 24 fps and at its own rate, with every constraint select_keys offers
// (locks, contacts, min/max hold, layers): the Lagrangian selection equals the level DP's wherever
// its certificate says optimal, and lies within its bound elsewhere.
TEST(RealData, LagrangeEqualsLevelDpOnEveryClip) {
  KOMA_REQUIRE_SHARED_DATA();
  int clips = 0, optimal = 0, runs = 0;
  for (const auto& path : koma::test::shared_bvh_files()) {
    io::ReadResult r = io::read_motion(path);
    if (r.motion.frame_count < 24) continue;
    for (bool native : {false, true}) {
      Motion m = native ? r.motion : resample(r.motion, 24.0);
      if (m.frame_count > 1200) m = cut(m, 0, 1200);  // the level DP is the slow side
      if (m.frame_count < 10) continue;
      KeySettings st;
      st.ratio = native ? 0.1 : 0.33;
      st.constraints.min_hold = native ? 2 : 1;
      st.constraints.max_hold = native ? 40 : 12;
      st.constraints.locked = {m.frame_count / 2};
      st.keep_contacts = true;
      if (clips % 3 == 0) st.layers = parse_layers("legs:2");
      st.exact.method = ExactMethod::levels;
      KeySelection lv;
      try {
        lv = select_keys(m, st);
      } catch (const Error&) {
        continue;  // constraints this clip cannot meet (e.g. contacts closer than min_hold): same for both
      }
      st.exact.method = ExactMethod::lagrange;
      const KeySelection lg = select_keys(m, st);
      ASSERT_EQ(lg.layers.size(), lv.layers.size());
      for (size_t l = 0; l < lg.layers.size(); ++l) {
        const LayerSelection& a = lg.layers[l];
        const LayerSelection& b = lv.layers[l];
        const std::string what = path.string() + (native ? " native" : " 24fps") + " layer " + a.name;
        ASSERT_EQ(a.keys.size(), b.keys.size()) << what;
        if (a.optimal) {
          EXPECT_NEAR(a.total, b.total, rel_tol(b.total)) << what;
          ++optimal;
        } else {
          EXPECT_LE(a.lower_bound, b.total + rel_tol(b.total)) << what;
          EXPECT_GE(a.total, b.total - rel_tol(b.total)) << what;
        }
        ++runs;
      }
    }
    ++clips;
  }
  EXPECT_GT(clips, 50);
  EXPECT_EQ(optimal, runs) << "every real clip's selection was certified optimal";
}

}  // namespace
}  // namespace koma::keys
