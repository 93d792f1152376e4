// Exact key selection by Lagrangian relaxation.
//
// The level DP asks "the cheapest path with exactly n - 1 segments", which costs O(n * N * H).
// Charging a price lambda per segment removes the count from the state:
//
//   g(lambda) = min over paths P of  cost(P) + lambda * |P|        one O(N * H) shortest path
//
// A lambda-optimal path with exactly K = n - 1 segments is optimal among K-segment paths, and for
// every lambda, g(lambda) - lambda * K is a lower bound on the K-segment optimum (the certificate).
// g is concave and piecewise linear in lambda; its pieces are the lower convex hull of the
// error-vs-n curve. The search:
//
//   1. bracket: prices lo and hi whose optimal paths have more and fewer than K segments
//   2. chords: the next price is where the lines of the two bracketing paths meet; its solution
//      either has K segments (optimal), replaces one end of the bracket, or lies on both lines
//      (the breakpoint lambda*, a hull edge from |hi| to |lo| segments)
//   3. at the breakpoint both bracketing paths are lambda*-optimal, so splicing one's prefix to the
//      other's suffix at a shared key is lambda*-optimal too: splices walk the counts from |hi| to
//      |lo|; one with exactly K is optimal. Otherwise the nearest splice, trimmed or filled
//      greedily to K keys, is an upper bound
//   4. the error curve is not convex everywhere (linear-interpolation costs are not Monge), so K
//      may lie strictly inside a hull edge. Then the gap between the upper bound and
//      g(lambda*) - lambda* K is closed by a level DP over only the (frame, count) states whose
//      prefix cost plus the Lagrangian bound on their suffix stays under the upper bound.
//
// Locked frames split the path into gaps that are independent given lambda: each pass runs per gap
// and the gap values add up.
#include "lagrange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "dp_kernel.hpp"
#include "koma/core/error.hpp"

namespace koma::keys::detail {

namespace {

// A path (key frames, first 0, last N - 1) with its total cost.
struct Path {
  std::vector<int> keys;
  double cost = 0;
  int segments() const { return static_cast<int>(keys.size()) - 1; }
};

// One lambda solve: the lambda-optimal value and one path attaining it.
struct Solve {
  double lambda = 0;
  double value = 0;  // g(lambda)
  Path path;
};

class Lagrangian {
 public:
  Lagrangian(const SegmentCosts& costs, const HoldConstraints& c, int n)
      : costs_(costs), N_(costs.frames()), K_(n - 1), a_(c.min_hold), b_(c.max_span(costs.frames())),
        anchors_(c.anchors(costs.frames())) {
    pad_ = b_ + 2 * kLanes;
    std::size_t longest = 0;
    for (std::size_t t = 0; t + 1 < anchors_.size(); ++t)
      longest = std::max<std::size_t>(longest, static_cast<std::size_t>(anchors_[t + 1] - anchors_[t]));
    scratch_.resize(longest + 1 + 2 * static_cast<std::size_t>(pad_));
    forward_.resize(static_cast<std::size_t>(N_));
    hold_.resize(static_cast<std::size_t>(N_));
  }

  int solves() const { return solves_; }

  // The value array of one gap (local frames 0 .. last), unreachable everywhere including the
  // padding the kernels read on both sides; only the gap's own span is reset, so many short gaps
  // between locks cost their length, not the longest gap's.
  double* fresh_values(int last) {
    std::fill(scratch_.begin(), scratch_.begin() + (last + 1 + 2 * pad_), kUnreachable);
    return scratch_.data() + pad_;
  }

  // g(lambda) and a lambda-optimal path (ties: the longest hold, i.e. fewest segments).
  Solve solve(double lambda) {
    ++solves_;
    Solve out;
    out.lambda = lambda;
    for (std::size_t t = 0; t + 1 < anchors_.size(); ++t) {
      const int begin = anchors_[t], last = anchors_[t + 1] - begin;
      double* v = fresh_values(last);
      v[0] = 0;
      LambdaPass lp = pass(begin, last, lambda, v);
      lp.hold = hold_.data() + begin;
      lambda_forward(lp);
      std::copy(v, v + last + 1, forward_.begin() + begin);
      out.value += v[last];
    }
    out.path = backtrack();
    return out;
  }

  // Suffix bound: for every frame, the lambda-optimal cost from it to the last frame.
  std::vector<double> backward(double lambda) {
    std::vector<double> to_end(static_cast<std::size_t>(N_));
    double after = 0;
    for (std::size_t t = anchors_.size() - 1; t-- > 0;) {
      const int begin = anchors_[t], last = anchors_[t + 1] - begin;
      double* v = fresh_values(last);
      v[last] = 0;
      lambda_backward(pass(begin, last, lambda, v));
      for (int i = 0; i <= last; ++i) to_end[static_cast<std::size_t>(begin + i)] = v[i] + after;
      after += v[0];
    }
    ++solves_;
    return to_end;
  }

  double cost(int i, int j) const { return costs_.table[column(j - i) + static_cast<std::size_t>(j)]; }
  bool hold_ok(int s) const { return s >= a_ && s <= b_; }

  double path_cost(const std::vector<int>& keys) const {
    double t = 0;
    for (std::size_t q = 0; q + 1 < keys.size(); ++q) t += cost(keys[q], keys[q + 1]);
    return t;
  }

  // The first anchor after frame i (a segment from i may not pass it).
  int next_anchor(int i) const { return *std::upper_bound(anchors_.begin(), anchors_.end(), i); }
  bool is_anchor(int f) const { return std::binary_search(anchors_.begin(), anchors_.end(), f); }

  int N() const { return N_; }
  int K() const { return K_; }
  int a() const { return a_; }
  int b() const { return b_; }

 private:
  std::size_t column(int s) const {
    return static_cast<std::size_t>(s - costs_.table_min_span) * static_cast<std::size_t>(costs_.table_stride());
  }

  LambdaPass pass(int begin, int last, double lambda, double* v) const {
    LambdaPass p;
    p.table = costs_.table.data();
    p.stride = costs_.table_stride();
    p.table_min = costs_.table_min_span;
    p.a = a_;
    p.b = b_;
    p.begin = begin;
    p.last = last;
    p.table_end = costs_.table_stride();
    p.lambda = lambda;
    p.value = v;
    return p;
  }

  // Walks the holds the forward pass recorded back from the last frame of each gap (the kernel
  // keeps, per frame, the hold attaining its minimum: no table reads here, which on a long take
  // would be one cache miss per hold and key).
  Path backtrack() const {
    Path p;
    p.keys.push_back(N_ - 1);
    for (std::size_t t = anchors_.size() - 1; t-- > 0;) {
      const int begin = anchors_[t];
      int j = anchors_[t + 1] - begin;
      while (j > 0) {
        const int s = hold_[static_cast<std::size_t>(begin + j)];
        KOMA_ASSERT(s >= a_ && s <= j && forward_[static_cast<std::size_t>(begin + j)] < kUnreachable);
        j -= s;
        p.keys.push_back(begin + j);
      }
    }
    std::reverse(p.keys.begin(), p.keys.end());
    p.cost = path_cost(p.keys);
    return p;
  }

  const SegmentCosts& costs_;
  int N_, K_, a_, b_;
  std::vector<int> anchors_;
  std::ptrdiff_t pad_ = 0;
  std::vector<double> scratch_;
  std::vector<double> forward_;
  std::vector<std::uint16_t> hold_;
  int solves_ = 0;
};

// The warm search's next price: where the line through the bracket ends' (log price, log segment
// count) reaches K segments (on a long take the count falls like a power of the price). NaN when
// an end's price is not positive (then the chord is used).
double power_law_price(const Solve& lo, const Solve& hi, int K) {
  if (!(lo.lambda > 0) || !(hi.lambda > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double x0 = std::log(lo.lambda), x1 = std::log(hi.lambda);
  const double y0 = std::log(static_cast<double>(lo.path.segments())), y1 = std::log(static_cast<double>(hi.path.segments()));
  const double t = (std::log(static_cast<double>(K)) - y0) / (y1 - y0);
  return std::exp(x0 + t * (x1 - x0));
}

bool close_enough(double upper, double lower) { return upper - lower <= 1e-9 * std::max(std::abs(upper), 1e-300); }

// Greedy to exactly K segments: drop the key whose removal costs least (too many), or add the key
// that saves most (too few), keeping holds and anchors. Each step takes the best move from a heap
// and re-prices only the moves next to it: O((K + d) log K) for d keys too many or too few (a scan
// per step was O(d K) table reads, seconds on a 100,000-key take).
void greedy_fix(Lagrangian& lg, std::vector<int>& keys) {
  using Move = std::pair<double, int>;  // (cost of the move, index into keys); smallest first
  auto heap_less = [](const Move& x, const Move& y) { return x.first > y.first || (x.first == y.first && x.second > y.second); };
  const int n = static_cast<int>(keys.size());
  if (n - 1 > lg.K()) {
    std::vector<int> prev(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
    std::vector<double> price(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
    for (int q = 0; q < n; ++q) { prev[q] = q - 1; next[q] = q + 1; }
    std::vector<Move> heap;
    auto reprice = [&](int q) {
      if (q <= 0 || q >= n - 1) return;
      const int a = keys[prev[q]], k = keys[q], b = keys[next[q]];
      price[q] = lg.is_anchor(k) || !lg.hold_ok(b - a) ? std::numeric_limits<double>::infinity()
                                                        : lg.cost(a, b) - lg.cost(a, k) - lg.cost(k, b);
      if (price[q] < std::numeric_limits<double>::infinity()) {
        heap.emplace_back(price[q], q);
        std::push_heap(heap.begin(), heap.end(), heap_less);
      }
    };
    for (int q = 1; q + 1 < n; ++q) reprice(q);
    std::vector<char> gone(static_cast<std::size_t>(n), 0);
    int segments = n - 1;
    while (segments > lg.K() && !heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), heap_less);
      const auto [c, q] = heap.back();
      heap.pop_back();
      if (gone[q] || c != price[q]) continue;  // stale: removed, or re-priced since
      gone[q] = 1;
      --segments;
      next[prev[q]] = next[q];
      prev[next[q]] = prev[q];
      reprice(prev[q]);
      reprice(next[q]);
    }
    std::vector<int> kept;
    kept.reserve(static_cast<std::size_t>(segments) + 1);
    for (int q = 0; q < n; ++q)
      if (!gone[q]) kept.push_back(keys[q]);
    keys.swap(kept);
    return;  // when no key can go without breaking a hold, the corridor DP decides
  }
  if (n - 1 >= lg.K()) return;
  // Too few: per segment its best split (frame, saving), in a heap; a split re-prices its two halves.
  struct Split { double gain; int i, j, k; };
  auto best_split = [&](int i, int j) {
    Split sp{std::numeric_limits<double>::infinity(), i, j, -1};
    const double whole = lg.cost(i, j);
    for (int k = i + lg.a(); k <= j - lg.a(); ++k) {
      if (!lg.hold_ok(k - i) || !lg.hold_ok(j - k)) continue;
      const double d = lg.cost(i, k) + lg.cost(k, j) - whole;
      if (d < sp.gain) { sp.gain = d; sp.k = k; }
    }
    return sp;
  };
  auto split_less = [](const Split& x, const Split& y) { return x.gain > y.gain || (x.gain == y.gain && x.i > y.i); };
  std::vector<Split> heap;
  auto push = [&](int i, int j) {
    const Split sp = best_split(i, j);
    if (sp.k < 0) return;
    heap.push_back(sp);
    std::push_heap(heap.begin(), heap.end(), split_less);
  };
  for (int q = 0; q + 1 < n; ++q) push(keys[q], keys[q + 1]);
  std::vector<int> added;
  for (int segments = n - 1; segments < lg.K() && !heap.empty(); ++segments) {
    std::pop_heap(heap.begin(), heap.end(), split_less);
    const Split sp = heap.back();
    heap.pop_back();
    added.push_back(sp.k);
    push(sp.i, sp.k);
    push(sp.k, sp.j);
  }
  keys.insert(keys.end(), added.begin(), added.end());
  std::sort(keys.begin(), keys.end());
}

// Splices of two lambda-optimal paths at their shared keys (prefix of one, suffix of the other).
// Each splice's cost comes from the two paths' prefix sums of segment costs, so the search is
// linear in the keys; only the chosen splice is built. The cheapest splice with exactly K segments
// if any (at the breakpoint every such splice is optimal), else the cheapest of the nearest ones
// above and below K after greedy_fix.
Path splice(Lagrangian& lg, const Path& lo, const Path& hi) {
  auto prefix = [&](const Path& p) {
    std::vector<double> c(p.keys.size(), 0.0);
    for (std::size_t q = 1; q < p.keys.size(); ++q) c[q] = c[q - 1] + lg.cost(p.keys[q - 1], p.keys[q]);
    return c;
  };
  const std::vector<double> c_lo = prefix(lo), c_hi = prefix(hi);
  auto build = [](const Path& first, const Path& second, std::size_t p, std::size_t q) {
    std::vector<int> keys(first.keys.begin(), first.keys.begin() + static_cast<std::ptrdiff_t>(p));
    keys.insert(keys.end(), second.keys.begin() + static_cast<std::ptrdiff_t>(q), second.keys.end());
    return keys;
  };
  struct Candidate { int dir = -1; std::size_t p = 0, q = 0; double cost = std::numeric_limits<double>::infinity(); };
  Candidate exact, near_below, near_above;
  int below_count = -1, above_count = std::numeric_limits<int>::max();
  for (int dir = 0; dir < 2; ++dir) {
    const Path& first = dir == 0 ? lo : hi;
    const Path& second = dir == 0 ? hi : lo;
    const std::vector<double>& cf = dir == 0 ? c_lo : c_hi;
    const std::vector<double>& cs = dir == 0 ? c_hi : c_lo;
    for (std::size_t p = 0, q = 0; p < first.keys.size() && q < second.keys.size();) {
      if (first.keys[p] < second.keys[q]) { ++p; continue; }
      if (first.keys[p] > second.keys[q]) { ++q; continue; }
      // Shared key: p segments of `first`, then second's suffix from index q.
      const int count = static_cast<int>(p + (second.keys.size() - 1 - q));
      const double cost = cf[p] + (cs.back() - cs[q]);
      if (count == lg.K() && cost < exact.cost) exact = {dir, p, q, cost};
      if (count < lg.K() && count > below_count) { below_count = count; near_below = {dir, p, q, cost}; }
      if (count > lg.K() && count < above_count) { above_count = count; near_above = {dir, p, q, cost}; }
      ++p;
      ++q;
    }
  }
  auto make = [&](const Candidate& c) {
    return c.dir == 0 ? build(lo, hi, c.p, c.q) : build(hi, lo, c.p, c.q);
  };
  if (exact.dir >= 0) {
    Path out{make(exact), 0};
    out.cost = lg.path_cost(out.keys);
    return out;
  }
  Path best;
  best.cost = std::numeric_limits<double>::infinity();
  for (const Candidate* c : {&near_below, &near_above}) {
    if (c->dir < 0) continue;
    std::vector<int> keys = make(*c);
    greedy_fix(lg, keys);
    if (static_cast<int>(keys.size()) - 1 != lg.K()) continue;
    const double cost = lg.path_cost(keys);
    if (cost < best.cost) best = Path{std::move(keys), cost};
  }
  return best;
}

// The exact K-segment optimum over the states (frame j, count m) that can still beat `upper`:
// prefix(j, m) + to_end(j) - lambda * (K - m) <= upper, where to_end is the lambda-optimal cost from
// j to the end (so the second and third terms bound any suffix of K - m segments from below).
// Returns false when the states exceed the budget.
bool corridor(Lagrangian& lg, double lambda, const std::vector<double>& to_end, double upper, std::int64_t budget,
              Path& out, std::int64_t& states) {
  const int N = lg.N(), K = lg.K();
  const double slack = upper + 1e-9 * std::max(std::abs(upper), 1e-300);
  struct State {
    int frame;
    int parent;  // index in the previous level
  };
  std::vector<std::vector<State>> levels(static_cast<std::size_t>(K) + 1);
  std::vector<double> value{0.0}, next_value;
  levels[0].push_back({0, -1});
  std::vector<double> best(static_cast<std::size_t>(N), kUnreachable);
  std::vector<int> from(static_cast<std::size_t>(N), -1);
  std::vector<int> touched;
  states = 1;
  for (int m = 0; m < K; ++m) {
    const std::vector<State>& cur = levels[static_cast<std::size_t>(m)];
    touched.clear();
    for (std::size_t q = 0; q < cur.size(); ++q) {
      const int i = cur[q].frame;
      if (i >= N - 1) continue;
      const int top = std::min({i + lg.b(), lg.next_anchor(i), N - 1});
      for (int j = i + lg.a(); j <= top; ++j) {
        const double v = value[q] + lg.cost(i, j);
        if (v + to_end[static_cast<std::size_t>(j)] - lambda * (K - m - 1) > slack) continue;
        if (best[static_cast<std::size_t>(j)] >= kUnreachable) touched.push_back(j);
        if (v < best[static_cast<std::size_t>(j)]) {
          best[static_cast<std::size_t>(j)] = v;
          from[static_cast<std::size_t>(j)] = static_cast<int>(q);
        }
      }
    }
    std::sort(touched.begin(), touched.end());
    std::vector<State>& nxt = levels[static_cast<std::size_t>(m) + 1];
    next_value.clear();
    for (int j : touched) {
      // A state may not leave an anchor behind: every anchor up to j must be a key already, which
      // next_anchor() guarantees for the segment; level K must end on the last frame.
      if (m + 1 == K && j != N - 1) { best[static_cast<std::size_t>(j)] = kUnreachable; continue; }
      nxt.push_back({j, from[static_cast<std::size_t>(j)]});
      next_value.push_back(best[static_cast<std::size_t>(j)]);
      best[static_cast<std::size_t>(j)] = kUnreachable;
    }
    value.swap(next_value);
    states += static_cast<std::int64_t>(nxt.size());
    if (states > budget) return false;
    if (nxt.empty()) return false;
  }
  const std::vector<State>& last = levels[static_cast<std::size_t>(K)];
  if (last.empty() || last.back().frame != N - 1) return false;
  out.keys.assign(static_cast<std::size_t>(K) + 1, 0);
  int q = static_cast<int>(last.size()) - 1;
  for (int m = K; m >= 0; --m) {
    const State& s = levels[static_cast<std::size_t>(m)][static_cast<std::size_t>(q)];
    out.keys[static_cast<std::size_t>(m)] = s.frame;
    q = s.parent;
  }
  out.cost = lg.path_cost(out.keys);
  return true;
}

}  // namespace

Selection select_lagrange(const SegmentCosts& costs, const HoldConstraints& c, int n, const ExactSettings& st,
                          const std::function<void(double)>& progress) {
  Lagrangian lg(costs, c, n);
  const int K = lg.K();
  std::vector<CurvePoint> hull;
  std::int64_t corridor_states = 0;
  // Every solve bounds the optimum from below (weak duality); keep the best bound.
  double lower = -std::numeric_limits<double>::infinity();
  auto note = [&](const Solve& s) {
    lower = std::max(lower, s.value - s.lambda * K);
    hull.push_back({s.path.segments() + 1, s.path.cost, true, {}});
    if (progress) progress(std::min(0.9, lg.solves() / 40.0));
  };
  auto finish = [&](Path p, double bound, bool optimal) {
    Selection out;
    out.keys = std::move(p.keys);
    out.total = costs.total(out.keys);
    out.error = out.total / costs.normaliser();
    out.lower_bound = std::min(bound, out.total);
    out.optimal = optimal;
    out.solves = lg.solves();
    out.corridor_states = corridor_states;
    std::sort(hull.begin(), hull.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.keys < y.keys; });
    hull.erase(std::unique(hull.begin(), hull.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.keys == y.keys; }),
               hull.end());
    for (CurvePoint& q : hull) q.error /= costs.normaliser();
    out.curve = std::move(hull);
    if (progress) progress(1.0);
    return out;
  };
  // 1. Bracket. lambda = 0 charges nothing: its path has as many segments as lowering the cost
  // wants, usually more than K. The price scale is the mean cost per segment of that path or of
  // an even selection.
  Solve lo, hi;
  bool have_lo = false, have_hi = false;
  {
    Solve s = lg.solve(0.0);
    note(s);
    if (s.path.segments() == K) return finish(s.path, s.value, true);
    (s.path.segments() > K ? (have_lo = true, lo) : (have_hi = true, hi)) = std::move(s);
  }
  double scale = 0;
  for (int i = 0; i + lg.b() < lg.N(); i += std::max(1, (lg.N() - 1) / 64)) scale = std::max(scale, lg.cost(i, i + lg.b()));
  scale = std::max(scale, 1e-12);
  for (double step = scale; !(have_lo && have_hi); step *= 4) {
    if (step > 1e280) throw Error(ErrorCode::invalid_settings, "keys", fmt::format("no selection of {} keys satisfies the constraints", n));
    Solve s = lg.solve(have_lo ? step : -step);
    note(s);
    if (s.path.segments() == K) return finish(s.path, s.value - s.lambda * K, true);
    if (s.path.segments() > K) { lo = std::move(s); have_lo = true; } else { hi = std::move(s); have_hi = true; }
  }
  // 2. Chords; warm, a price from the two previous solves while it makes progress.
  bool chord_next = !st.warm_start;
  for (int iter = 0; iter < 200; ++iter) {
    const double chord = (hi.path.cost - lo.path.cost) / (lo.path.segments() - hi.path.segments());
    if (!(chord > lo.lambda && chord < hi.lambda)) break;  // rounding: the bracket cannot shrink
    double lambda = chord;
    if (!chord_next) {
      const double guess = power_law_price(lo, hi, K);
      if (guess > lo.lambda && guess < hi.lambda) lambda = guess;
    }
    Solve s = lg.solve(lambda);
    note(s);
    if (s.path.segments() == K) return finish(s.path, s.value - lambda * K, true);
    if (lambda == chord) {
      const double line = lo.path.cost + lambda * lo.path.segments();
      if (s.value >= line - 1e-12 * std::max(std::abs(line), 1e-300)) {
        break;  // the breakpoint: both bracketing paths are optimal here
      }
    }
    // A count met before (an end's): the ends may be neighbours on the hull, which only the chord
    // price tells (it is their breakpoint).
    const bool new_count = s.path.segments() != lo.path.segments() && s.path.segments() != hi.path.segments();
    chord_next = !st.warm_start || !new_count;
    if (s.path.segments() > K) lo = std::move(s); else hi = std::move(s);
  }
  // 3. Splice at the breakpoint lambda* (the best lower bound the bracket gives).
  const double lambda = (hi.path.cost - lo.path.cost) / (lo.path.segments() - hi.path.segments());
  Path upper = splice(lg, lo.path, hi.path);
  if (!upper.keys.empty() && close_enough(upper.cost, lower)) return finish(std::move(upper), lower, true);
  // 4. Close the gap.
  const std::vector<double> to_end = lg.backward(lambda);
  const double bound = upper.keys.empty() ? std::numeric_limits<double>::max() / 4 : upper.cost;
  Path exact;
  std::int64_t states = 0;
  const bool closed = corridor(lg, lambda, to_end, bound, st.corridor_states, exact, states);
  corridor_states = states;
  if (closed) return finish(std::move(exact), exact.cost, true);
  if (upper.keys.empty()) {
    throw Error(ErrorCode::invalid_settings, "keys",
                fmt::format("the exact search for {} keys needs more than {} states; use the level DP "
                            "(method levels) or a smaller maximum hold",
                            n, st.corridor_states));
  }
  return finish(std::move(upper), lower, false);
}

}  // namespace koma::keys::detail
