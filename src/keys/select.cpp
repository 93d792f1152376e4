#include "koma/keys/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <utility>

#include "dp_kernel.hpp"
#include "lagrange.hpp"
#include "koma/core/error.hpp"

namespace koma::keys {

// ---------------------------------------------------------------------------------------------
// Constraints and targets

std::vector<int> HoldConstraints::anchors(int frames) const {
  std::vector<int> a = locked;
  a.push_back(0);
  a.push_back(frames - 1);
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

std::pair<int, int> HoldConstraints::key_range(int frames) const {
  const std::vector<int> a = anchors(frames);
  const int lo = std::max(min_hold, 1), hi = max_span(frames);
  int nmin = 1, nmax = 1;
  for (size_t t = 0; t + 1 < a.size(); ++t) {
    const int g = a[t + 1] - a[t];
    nmin += (g + hi - 1) / hi;
    nmax += g / lo;
  }
  return {nmin, nmax};
}

void HoldConstraints::validate(int frames, int keys) const {
  if (frames < 2) throw Error(ErrorCode::bad_data, "keys", fmt::format("the motion has {} frame(s); key selection needs at least 2", frames));
  if (min_hold < 1) throw Error(ErrorCode::invalid_settings, "constraints.min_hold", fmt::format("minimum hold {} must be >= 1 frame", min_hold));
  if (max_hold < 0) throw Error(ErrorCode::invalid_settings, "constraints.max_hold", fmt::format("maximum hold {} must be >= 0 (0 = unlimited)", max_hold));
  if (max_hold > 0 && max_hold < min_hold) {
    throw Error(ErrorCode::invalid_settings, "constraints.max_hold", fmt::format("maximum hold {} is shorter than the minimum hold {}", max_hold, min_hold));
  }
  for (int f : locked) {
    if (f < 0 || f >= frames) {
      throw Error(ErrorCode::invalid_settings, "constraints.locked", fmt::format("locked frame {} is outside 0..{}", f, frames - 1));
    }
  }
  const std::vector<int> a = anchors(frames);
  const int hi = max_span(frames);
  for (size_t t = 0; t + 1 < a.size(); ++t) {
    const int g = a[t + 1] - a[t];
    if (g < min_hold) {
      throw Error(ErrorCode::invalid_settings, "constraints.locked",
                  fmt::format("key frames {} and {} are {} frame(s) apart, closer than the minimum hold {}", a[t], a[t + 1], g, min_hold));
    }
    if ((g + hi - 1) / hi > g / min_hold) {
      throw Error(ErrorCode::invalid_settings, "constraints.locked",
                  fmt::format("the {} frames between keys {} and {} cannot be split into holds of {}..{} frames", g, a[t], a[t + 1], min_hold, hi));
    }
  }
  if (keys > 0) {
    const auto [nmin, nmax] = key_range(frames);
    if (keys < nmin || keys > nmax) {
      throw Error(ErrorCode::invalid_settings, "keys",
                  fmt::format("{} keys of {} frames are impossible with holds of {}..{} frames and {} locked frame(s); "
                              "possible: {}..{} keys", keys, frames, min_hold, hi, locked.size(), nmin, nmax));
    }
  }
}

void SelectionTarget::validate(int frames) const {
  if (keys == 0) {
    if (!(max_error >= 0) || !std::isfinite(max_error)) {
      throw Error(ErrorCode::invalid_settings, "keys", "give a number of keys (>= 2) or an error budget (>= 0)");
    }
    return;
  }
  if (keys < 2) throw Error(ErrorCode::invalid_settings, "keys", fmt::format("n = {} keys; at least 2 (first and last frame) are kept", keys));
  if (keys > frames) throw Error(ErrorCode::invalid_settings, "keys", fmt::format("n = {} keys is more than the {} frames", keys, frames));
}

bool satisfies(std::span<const int> keys, int frames, const HoldConstraints& c) {
  if (keys.size() < 2 || keys.front() != 0 || keys.back() != frames - 1) return false;
  const int hi = c.max_span(frames);
  for (size_t a = 0; a + 1 < keys.size(); ++a) {
    const int g = keys[a + 1] - keys[a];
    if (g < c.min_hold || g > hi) return false;
  }
  for (int f : c.locked) {
    if (!std::binary_search(keys.begin(), keys.end(), f)) return false;
  }
  return true;
}

std::string_view to_string(AnnealEvaluation e) noexcept {
  switch (e) {
    case AnnealEvaluation::delta: return "delta";
    case AnnealEvaluation::segments: return "segments";
    case AnnealEvaluation::patent: return "patent";
  }
  return "?";
}

std::optional<AnnealEvaluation> parse_anneal_evaluation(std::string_view t) noexcept {
  if (t == "delta") return AnnealEvaluation::delta;
  if (t == "segments") return AnnealEvaluation::segments;
  if (t == "patent") return AnnealEvaluation::patent;
  return std::nullopt;
}

std::string_view to_string(Selector s) noexcept {
  switch (s) {
    case Selector::exact: return "exact";
    case Selector::anneal: return "anneal";
    case Selector::cumsum: return "cumsum";
    case Selector::cumsum_anneal: return "cumsum+anneal";
    case Selector::uniform: return "uniform";
  }
  return "?";
}

std::optional<Selector> parse_selector(std::string_view t) noexcept {
  if (t == "exact") return Selector::exact;
  if (t == "anneal") return Selector::anneal;
  if (t == "cumsum") return Selector::cumsum;
  if (t == "cumsum+anneal") return Selector::cumsum_anneal;
  if (t == "uniform") return Selector::uniform;
  return std::nullopt;
}

namespace {

// std::allocator that default-initialises: resize() then leaves trivial values unwritten instead of
// zero-filling tens of megabytes the DP overwrites anyway.
template <class T>
struct UninitAllocator : std::allocator<T> {
  using value_type = T;
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

Selection finish(const SegmentCosts& costs, std::vector<int> keys) {
  Selection s;
  s.keys = std::move(keys);
  s.total = costs.total(s.keys);
  s.error = s.total / costs.normaliser();
  return s;
}

// Smallest n in the feasible range whose selection meets the budget (bisection, assuming the error
// falls with n); the largest n when none does.
template <class Fn>
Selection budget_search(const SegmentCosts& costs, const HoldConstraints& c, double budget, Fn&& run) {
  auto [lo, hi] = c.key_range(costs.frames());
  hi = std::min(hi, costs.frames());
  Selection best = run(hi);
  if (best.error > budget) return best;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    Selection s = run(mid);
    if (s.error <= budget) {
      hi = mid;
      best = std::move(s);
    } else {
      lo = mid + 1;
    }
  }
  return best;
}

// Keys per gap between anchors so that the total is n: start from the fewest each gap allows, then
// give the next key to the gap with the longest average hold.
std::vector<int> allocate(const std::vector<int>& anchors, int n, int lo, int hi, const std::vector<int>* preferred = nullptr) {
  const size_t G = anchors.size() - 1;
  std::vector<int> m(G), mmax(G);
  int used = 1;
  for (size_t t = 0; t < G; ++t) {
    const int g = anchors[t + 1] - anchors[t];
    m[t] = (g + hi - 1) / hi;
    mmax[t] = g / lo;
    if (preferred) m[t] = std::clamp((*preferred)[t], m[t], mmax[t]);
    used += m[t];
  }
  while (used > n) {  // only with `preferred`: take from the gap with the shortest average hold
    size_t best = G;
    double bv = 1e300;
    for (size_t t = 0; t < G; ++t) {
      const int g = anchors[t + 1] - anchors[t];
      if (m[t] > (g + hi - 1) / hi && static_cast<double>(g) / m[t] < bv) { bv = static_cast<double>(g) / m[t]; best = t; }
    }
    KOMA_ASSERT(best < G);
    --m[best];
    --used;
  }
  while (used < n) {
    size_t best = G;
    double bv = -1;
    for (size_t t = 0; t < G; ++t) {
      const double v = static_cast<double>(anchors[t + 1] - anchors[t]) / m[t];
      if (m[t] < mmax[t] && v > bv) { bv = v; best = t; }
    }
    KOMA_ASSERT(best < G);
    ++m[best];
    ++used;
  }
  return m;
}

void spread(std::vector<int>& keys, int from, int to, int parts) {
  const int g = to - from;
  for (int q = 1; q < parts; ++q) keys.push_back(from + static_cast<int>(std::lround(static_cast<double>(g) * q / parts)));
}

std::vector<int> even_keys(int frames, const HoldConstraints& c, int n) {
  const std::vector<int> a = c.anchors(frames);
  const std::vector<int> m = allocate(a, n, c.min_hold, c.max_span(frames));
  std::vector<int> keys{0};
  for (size_t t = 0; t + 1 < a.size(); ++t) {
    spread(keys, a[t], a[t + 1], m[t]);
    keys.push_back(a[t + 1]);
  }
  return keys;
}

// Makes `keys` (sorted, containing 0 and N-1) satisfy the constraints with exactly n keys: gaps
// between anchors keep their keys when they already fit; the others are re-spread evenly.
std::vector<int> repair(std::vector<int> keys, int frames, const HoldConstraints& c, int n) {
  std::vector<int> a = c.anchors(frames);
  keys.insert(keys.end(), a.begin(), a.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (static_cast<int>(keys.size()) == n && satisfies(keys, frames, c)) return keys;
  const size_t G = a.size() - 1;
  std::vector<int> have(G, 0);
  std::vector<std::vector<int>> inner(G);
  size_t t = 0;
  for (int k : keys) {
    while (t < G && k >= a[t + 1]) ++t;
    if (t < G && k > a[t]) inner[t].push_back(k);
  }
  for (size_t g = 0; g < G; ++g) have[g] = static_cast<int>(inner[g].size()) + 1;
  const std::vector<int> m = allocate(a, n, c.min_hold, c.max_span(frames), &have);
  std::vector<int> out{0};
  for (size_t g = 0; g < G; ++g) {
    std::vector<int> seg{a[g]};
    seg.insert(seg.end(), inner[g].begin(), inner[g].end());
    seg.push_back(a[g + 1]);
    bool ok = m[g] == have[g];
    for (size_t q = 0; ok && q + 1 < seg.size(); ++q) {
      const int h = seg[q + 1] - seg[q];
      ok = h >= c.min_hold && h <= c.max_span(frames);
    }
    if (ok) {
      out.insert(out.end(), inner[g].begin(), inner[g].end());
    } else {
      spread(out, a[g], a[g + 1], m[g]);
    }
    out.push_back(a[g + 1]);
  }
  return out;
}

using detail::kUnreachable;

}  // namespace

// ---------------------------------------------------------------------------------------------
// exact: the level DP (the reference; also the whole error-vs-n curve)

namespace {

// rows[m][j]: the cheapest path from frame 0 to j with m segments. Level m can only sit on frames
// [lo, hi]: at least m minimum holds in, at most m maximum holds in, and close enough to the end
// for the n - 1 - m keys left. The last bound depends on n only through "at least", so the values
// at N - 1 of the levels before n - 1 stay exact: they are the optimal error-vs-n curve.
class LevelDp {
 public:
  LevelDp(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target)
      : costs_(costs), N_(costs.frames()), a_(c.min_hold), b_(c.max_span(costs.frames())), anchors_(c.anchors(N_)) {
    const auto [nmin, nmax] = c.key_range(N_);
    nmin_ = nmin;
    budget_ = target.keys == 0;
    n_ = budget_ ? nmax : target.keys;
    norm_ = costs.normaliser();
    budget_total_ = budget_ ? target.max_error * norm_ : 0.0;
    // lockprev[j]: the last anchor before j; a segment (i, j) may not cross it, so i >= lockprev[j].
    lockprev_.assign(static_cast<size_t>(N_), 0);
    size_t t = 0;
    for (int j = 1; j < N_; ++j) {
      while (t + 1 < anchors_.size() && anchors_[t + 1] < j) ++t;
      lockprev_[j] = anchors_[t];
    }
  }

  Selection run(const std::function<void(double)>& progress, bool curve_keys) {
    const bool tab = costs_.table_max_span > 0 && costs_.table_min_span <= a_ && costs_.table_max_span >= b_;
    if (tab) run_table(progress); else run_scalar(progress);
    if (last_level_ < 0 || (!budget_ && last_level_ != n_ - 1)) {
      throw Error(ErrorCode::invalid_settings, "keys", fmt::format("no selection of {} keys satisfies the constraints", n_));
    }
    Selection out = finish(costs_, backtrack(last_level_));
    // Every level that reached the last frame back-tracks to its own optimum: its frames lie in
    // the (looser) ranges of the n-key search, and a prefix's best predecessor does not depend on n.
    if (curve_keys) {
      for (CurvePoint& p : curve_) p.frames = backtrack(p.keys - 1);
    }
    out.curve = std::move(curve_);
    out.lower_bound = out.total;
    out.optimal = true;
    return out;
  }

 private:
  std::pair<int, int> level_range(int m) const {
    const std::int64_t lo64 = std::max<std::int64_t>(static_cast<std::int64_t>(m) * a_,
                                                     static_cast<std::int64_t>(N_ - 1) - static_cast<std::int64_t>(n_ - 1 - m) * b_);
    return {static_cast<int>(std::max<std::int64_t>(lo64, 1)),
            static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(m) * b_, N_ - 1))};
  }

  // Level m reached the last frame: one point of the curve. True when a budget is met.
  bool record(int m, double final_value) {
    if (final_value >= kUnreachable * 0.5) return false;
    curve_.push_back({m + 1, final_value / norm_, false, {}});
    last_level_ = m;
    return budget_ && m + 1 >= nmin_ && final_value <= budget_total_;
  }

  // Level m's range widened to whole groups of eight frames (the SIMD kernel's unit).
  std::pair<int, int> widened(int m, std::ptrdiff_t stride) const {
    constexpr int L = detail::kLanes;
    const auto [lo, hi] = level_range(m);
    return {lo / L * L, static_cast<int>(std::min<std::ptrdiff_t>((hi + L) / L * L, stride))};
  }

  // SIMD blocks of levels over the cost table (see dp_kernel.hpp).
  void run_table(const std::function<void(double)>& progress) {
    constexpr int L = detail::kLanes;
    const std::ptrdiff_t stride = costs_.table_stride();
    const std::ptrdiff_t pad = (b_ + 2 * L + L - 1) / L * L;
    const int kBlock = std::clamp(n_ - 1, 1, 32);  // levels per block
    std::vector<double, UninitAllocator<double>> row_store(static_cast<size_t>((kBlock + 1) * (stride + 2 * pad)));
    std::vector<double*> rows(kBlock + 1);
    for (int k = 0; k <= kBlock; ++k) rows[k] = row_store.data() + k * (stride + 2 * pad) + pad;
    std::fill(rows[0] - pad, rows[0] + stride + pad, kUnreachable);
    rows[0][0] = 0;
    std::vector<std::int64_t> span_limit;
    if (anchors_.size() > 2) {
      span_limit.assign(static_cast<size_t>(stride), std::numeric_limits<std::int32_t>::max());
      for (int j = 0; j < N_; ++j) span_limit[j] = j - lockprev_[j];
    }
    narrow_ = b_ - a_ <= 255;
    std::int64_t total = 0;
    for (int m = 1; m < n_; ++m) {
      const auto [lo, hi] = level_range(m);
      if (hi < lo) break;
      const auto [wlo, wend] = widened(m, stride);
      total += wend - wlo;
    }
    if (narrow_) back8_.resize(static_cast<size_t>(total)); else back16_.resize(static_cast<size_t>(total));
    std::vector<int> clo(kBlock + 1), cend(kBlock + 1);
    std::vector<std::uint8_t*> b8(kBlock + 1);
    std::vector<std::uint16_t*> b16(kBlock + 1);
    detail::DpBlock blk;
    blk.table = costs_.table.data();
    blk.stride = stride;
    blk.table_min = costs_.table_min_span;
    blk.a = a_;
    blk.b = b_;
    blk.span_limit = span_limit.empty() ? nullptr : span_limit.data();
    blk.clo = clo.data();
    blk.cend = cend.data();
    blk.rows = rows.data();
    blk.row_pad = pad;
    blk.back8 = narrow_ ? b8.data() : nullptr;
    blk.back16 = narrow_ ? nullptr : b16.data();
    std::int64_t used = 0;
    bool done = false;
    for (int m = 1; m < n_ && !done;) {
      int kb = 0;
      while (kb < kBlock && m + kb < n_) {
        const auto [lo, hi] = level_range(m + kb);
        if (hi < lo) break;
        const auto [wlo, wend] = widened(m + kb, stride);
        clo[kb + 1] = wlo;
        cend[kb + 1] = wend;
        level_off_.push_back(used);
        level_lo_.push_back(wlo);
        if (narrow_) b8[kb + 1] = back8_.data() + used - wlo; else b16[kb + 1] = back16_.data() + used - wlo;
        used += wend - wlo;
        ++kb;
      }
      if (kb == 0) break;
      blk.levels = kb;
      detail::dp_block(blk);
      for (int k = 1; k <= kb && !done; ++k) {
        const auto [lo, hi] = level_range(m + k - 1);
        if (record(m + k - 1, hi == N_ - 1 ? rows[k][N_ - 1] : kUnreachable)) done = true;
      }
      std::swap(rows[0], rows[kb]);
      if (kb < kBlock && m + kb < n_) done = true;  // a level with no feasible frame: nothing further
      m += kb;
      if (progress) progress(static_cast<double>(m - 1) / (n_ - 1));
    }
  }

  // No table covering the holds: the scalar DP over cost() (closed forms or reconstruction).
  void run_scalar(const std::function<void(double)>& progress) {
    std::vector<double> prev(static_cast<size_t>(N_), kUnreachable), cur(static_cast<size_t>(N_), kUnreachable);
    prev[0] = 0;
    int plo = 0, phi = 0;
    narrow_ = false;
    for (int m = 1; m < n_; ++m) {
      const auto [lo, hi] = level_range(m);
      if (hi < lo) break;
      level_off_.push_back(static_cast<std::int64_t>(back16_.size()));
      level_lo_.push_back(lo);
      back16_.resize(back16_.size() + static_cast<size_t>(hi - lo + 1));
      std::uint16_t* bk = back16_.data() + level_off_[m] - lo;
      std::fill(cur.begin(), cur.end(), kUnreachable);
      for (int j = lo; j <= hi; ++j) {
        // Holds s = j - i with i in [max(j - b, plo, lockprev), min(j - a, phi)].
        const int smin = std::max(a_, j - phi);
        const int smax = std::min({b_, j - plo, j - lockprev_[j]});
        double best = kUnreachable;
        int bs = 0;
        const double* pe = prev.data() + j;
        for (int s = smin; s <= smax; ++s) {
          if (pe[-s] >= kUnreachable) continue;
          const double v = pe[-s] + costs_.cost(j - s, j);
          if (v < best) { best = v; bs = s; }
        }
        cur[j] = best;
        bk[j] = static_cast<std::uint16_t>(bs > 0 ? bs - a_ : 0);
      }
      std::swap(prev, cur);
      plo = lo;
      phi = hi;
      if (progress) progress(static_cast<double>(m) / (n_ - 1));
      if (hi == N_ - 1 && record(m, prev[N_ - 1])) break;
    }
  }

  // Back-track from the last frame at `level` (one that reached it) through the stored holds.
  std::vector<int> backtrack(int level) const {
    std::vector<int> keys(static_cast<size_t>(level + 1));
    int j = N_ - 1;
    for (int m = level; m >= 1; --m) {
      keys[m] = j;
      const size_t at = static_cast<size_t>(level_off_[m] + (j - level_lo_[m]));
      j -= a_ + (narrow_ ? back8_[at] : back16_[at]);
    }
    KOMA_ASSERT(j == 0);
    keys[0] = 0;
    return keys;
  }

  const SegmentCosts& costs_;
  int N_, a_, b_;
  std::vector<int> anchors_;
  std::vector<int> lockprev_;
  int nmin_ = 0, n_ = 0;
  bool budget_ = false;
  double norm_ = 1, budget_total_ = 0;
  std::vector<CurvePoint> curve_;
  int last_level_ = -1;
  // Per level, the hold of the best last segment (as hold - a), indexed by frame from level_lo[m]
  // on, starting at level_off[m].
  bool narrow_ = false;
  std::vector<std::uint16_t, UninitAllocator<std::uint16_t>> back16_;
  std::vector<std::uint8_t, UninitAllocator<std::uint8_t>> back8_;
  std::vector<std::int64_t> level_off_{0}, level_lo_{0};
};

}  // namespace

std::string_view to_string(ExactMethod m) noexcept {
  switch (m) {
    case ExactMethod::automatic: return "auto";
    case ExactMethod::levels: return "levels";
    case ExactMethod::lagrange: return "lagrange";
  }
  return "?";
}

std::optional<ExactMethod> parse_exact_method(std::string_view t) noexcept {
  if (t == "auto") return ExactMethod::automatic;
  if (t == "levels") return ExactMethod::levels;
  if (t == "lagrange") return ExactMethod::lagrange;
  return std::nullopt;
}

void ExactSettings::validate() const {
  if (!(level_work >= 0)) throw Error(ErrorCode::invalid_settings, "exact.level_work", "must be >= 0");
  if (corridor_states < 1) throw Error(ErrorCode::invalid_settings, "exact.corridor_states", "must be >= 1");
}

Selection select_exact(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target,
                       const std::function<void(double)>& progress) {
  return select_exact(costs, c, target, ExactSettings{}, progress);
}

Selection select_exact(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target,
                       const ExactSettings& settings, const std::function<void(double)>& progress) {
  const int N = costs.frames();
  c.validate(N, 0);
  target.validate(N);
  c.validate(N, target.keys);
  settings.validate();
  const int a = c.min_hold, b = c.max_span(N);
  if (b > 65535) throw Error(ErrorCode::invalid_settings, "constraints.max_hold", "holds longer than 65535 frames are not supported");
  const bool tab = costs.table_max_span > 0 && costs.table_min_span <= a && costs.table_max_span >= b;
  const int n_work = target.keys > 0 ? target.keys : c.key_range(N).second;
  const double work = static_cast<double>(n_work) * N * (b - a + 1);
  bool lagrange = settings.method == ExactMethod::lagrange ||
                  (settings.method == ExactMethod::automatic && work > settings.level_work);
  if (lagrange && !tab) {
    if (settings.method == ExactMethod::lagrange) {
      throw Error(ErrorCode::invalid_settings, "exact.method",
                  "the Lagrangian search needs a cost table covering the holds (make_segment_costs with max_span >= max_hold)");
    }
    lagrange = false;
  }
  if (!lagrange) return LevelDp(costs, c, target).run(progress, settings.curve_keys);
  if (target.keys > 0) return detail::select_lagrange(costs, c, target.keys, settings, progress);
  return budget_search(costs, c, target.max_error,
                       [&](int n) { return detail::select_lagrange(costs, c, n, settings, {}); });
}

// ---------------------------------------------------------------------------------------------
// uniform

Selection select_uniform(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target, int on,
                         int offset) {
  const int N = costs.frames();
  c.validate(N, 0);
  if (on < 0 || offset < 0) throw Error(ErrorCode::invalid_settings, "on", "the step and offset must be >= 0");
  if (on > 0) {
    std::vector<int> keys{0};
    for (int f = offset > 0 ? offset : on; f < N - 1; f += on) keys.push_back(f);
    keys.push_back(N - 1);
    if (satisfies(keys, N, c)) return finish(costs, keys);
    const auto [lo, hi] = c.key_range(N);
    return finish(costs, even_keys(N, c, std::clamp(static_cast<int>(keys.size()), lo, hi)));
  }
  target.validate(N);
  if (target.keys == 0) {
    return budget_search(costs, c, target.max_error, [&](int n) { return finish(costs, even_keys(N, c, n)); });
  }
  c.validate(N, target.keys);
  return finish(costs, even_keys(N, c, target.keys));
}

// ---------------------------------------------------------------------------------------------
// cumsum

void CumsumSettings::validate() const {
  if (bisection_steps < 1) throw Error(ErrorCode::invalid_settings, "cumsum", "bisection_steps must be >= 1");
}

namespace {

std::vector<int> cumsum_run(const std::vector<double>& change, const std::vector<char>& is_anchor, int min_hold,
                            int max_hold, double threshold, bool carry) {
  const int N = static_cast<int>(change.size());
  std::vector<int> keys{0};
  int last = 0;
  double s = 0;
  for (int k = 1; k < N; ++k) {
    if (is_anchor[k]) {
      keys.push_back(k);
      last = k;
      s = 0;
      continue;
    }
    s += change[k];
    if (s > threshold && k - 1 - last >= min_hold) {
      keys.push_back(k - 1);  // the frame before the one that crosses
      last = k - 1;
      s = carry ? s - threshold : change[k];
    } else if (k - last >= max_hold) {
      keys.push_back(k);  // the hold would exceed the maximum
      last = k;
      s = 0;
    }
  }
  return keys;
}

}  // namespace

Selection select_cumsum(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target,
                        const CumsumSettings& settings) {
  settings.validate();
  const int N = costs.frames();
  c.validate(N, 0);
  target.validate(N);
  if (target.keys == 0) {
    SelectionTarget t;
    return budget_search(costs, c, target.max_error, [&](int n) { t.keys = n; return select_cumsum(costs, c, t, settings); });
  }
  c.validate(N, target.keys);
  const int n = target.keys;
  const FeatureMatrix& x = costs.features;
  std::vector<double> change(static_cast<size_t>(N), 0.0), cum(static_cast<size_t>(N), 0.0);
  for (int k = 1; k < N; ++k) {
    double s = 0;
    for (int d = 0; d < x.dims; ++d) s += (x.row(k)[d] - x.row(k - 1)[d]) * (x.row(k)[d] - x.row(k - 1)[d]);
    change[k] = std::sqrt(s);
    cum[k] = cum[k - 1] + change[k];
  }
  std::vector<char> is_anchor(static_cast<size_t>(N), 0);
  for (int f : c.anchors(N)) is_anchor[f] = 1;
  const int maxh = c.max_span(N);
  double lo = 0, hi = cum[N - 1] + 1;
  std::vector<int> above = cumsum_run(change, is_anchor, c.min_hold, maxh, lo, settings.carry_remainder);
  std::vector<int> below = cumsum_run(change, is_anchor, c.min_hold, maxh, hi, settings.carry_remainder);
  std::vector<int> keys;
  int steps = 0;
  for (; steps < settings.bisection_steps; ++steps) {
    const double mid = 0.5 * (lo + hi);
    std::vector<int> k = cumsum_run(change, is_anchor, c.min_hold, maxh, mid, settings.carry_remainder);
    if (static_cast<int>(k.size()) == n) { keys = std::move(k); break; }
    if (static_cast<int>(k.size()) > n) { lo = mid; above = std::move(k); } else { hi = mid; below = std::move(k); }
  }
  if (keys.empty()) {
    const bool thin = static_cast<int>(above.size()) - n <= n - static_cast<int>(below.size()) || static_cast<int>(below.size()) > n;
    keys = thin && static_cast<int>(above.size()) >= n ? above : below;
    // Thin: drop the key whose neighbours are closest in accumulated change.
    while (static_cast<int>(keys.size()) > n) {
      size_t best = 0;
      double bv = 1e300;
      for (size_t q = 1; q + 1 < keys.size(); ++q) {
        if (is_anchor[keys[q]] || keys[q + 1] - keys[q - 1] > maxh) continue;
        const double v = cum[keys[q + 1]] - cum[keys[q - 1]];
        if (v < bv) { bv = v; best = q; }
      }
      if (best == 0) break;
      keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(best));
    }
    // Fill: split the segment with the most accumulated change where half of it is reached.
    while (static_cast<int>(keys.size()) < n) {
      size_t best = keys.size();
      double bv = -1;
      for (size_t q = 0; q + 1 < keys.size(); ++q) {
        if (keys[q + 1] - keys[q] < 2 * c.min_hold) continue;
        const double v = cum[keys[q + 1]] - cum[keys[q]];
        if (v > bv) { bv = v; best = q; }
      }
      if (best == keys.size()) break;
      const int i = keys[best], j = keys[best + 1];
      const double half = 0.5 * (cum[i] + cum[j]);
      int f = static_cast<int>(std::lower_bound(cum.begin() + i, cum.begin() + j, half) - cum.begin());
      f = std::clamp(f, i + c.min_hold, j - c.min_hold);
      keys.insert(keys.begin() + static_cast<std::ptrdiff_t>(best + 1), f);
    }
  }
  Selection s = finish(costs, repair(std::move(keys), N, c, n));
  s.iterations = steps;
  return s;
}

// ---------------------------------------------------------------------------------------------
// anneal

void AnnealSettings::validate() const {
  if (iterations < 1) throw Error(ErrorCode::invalid_settings, "anneal", fmt::format("iterations {} must be >= 1", iterations));
  if (!(initial_temperature >= 0) || !std::isfinite(initial_temperature)) {
    throw Error(ErrorCode::invalid_settings, "anneal", "initial temperature must be finite and >= 0 (0 = automatic)");
  }
  if (!(final_ratio > 0 && final_ratio <= 1)) throw Error(ErrorCode::invalid_settings, "anneal", "final_ratio must be in (0, 1]");
}

namespace {

// Key set as a doubly linked list over frames, plus the list of movable keys for uniform picks.
struct KeyList {
  std::vector<int> prv, nxt, slot;  // slot: index in `movable` or -1
  std::vector<char> is_key;
  std::vector<int> movable;

  KeyList(int frames, const std::vector<int>& keys, const std::vector<char>& anchor)
      : prv(static_cast<size_t>(frames), -1), nxt(static_cast<size_t>(frames), -1), slot(static_cast<size_t>(frames), -1),
        is_key(static_cast<size_t>(frames), 0) {
    for (size_t q = 0; q < keys.size(); ++q) {
      const int k = keys[q];
      is_key[k] = 1;
      if (q > 0) prv[k] = keys[q - 1];
      if (q + 1 < keys.size()) nxt[k] = keys[q + 1];
      if (!anchor[k]) { slot[k] = static_cast<int>(movable.size()); movable.push_back(k); }
    }
  }
  void remove(int k) {
    nxt[prv[k]] = nxt[k];
    prv[nxt[k]] = prv[k];
    is_key[k] = 0;
    const int s = slot[k];
    movable[s] = movable.back();
    slot[movable[s]] = s;
    movable.pop_back();
    slot[k] = -1;
  }
  void insert(int f, int l, int r) {
    prv[f] = l; nxt[f] = r; nxt[l] = f; prv[r] = f;
    is_key[f] = 1;
    slot[f] = static_cast<int>(movable.size());
    movable.push_back(f);
  }
  std::vector<int> keys() const {
    std::vector<int> out;
    for (int k = 0; k >= 0; k = nxt[k]) out.push_back(k);
    return out;
  }
  double total(const SegmentCosts& costs) const {
    double t = 0;
    for (int k = 0; nxt[k] >= 0; k = nxt[k]) t += costs.cost(k, nxt[k]);
    return t;
  }
  // Every dropped frame reconstructed and compared (no segment costs, no prefix sums).
  double total_direct(const SegmentCosts& costs, std::vector<double>& scratch) const {
    double t = 0;
    for (int k = 0; nxt[k] >= 0; k = nxt[k]) t += costs.cost_direct(k, nxt[k], scratch);
    return t;
  }
};

struct Move {
  int key = -1, to = -1, l = -1, r = -1;  // remove `key`, insert `to` between l and r (after removal)
  double delta = 0;
};

// Total of the selection as it would be after `mv`, walking the whole list (segments or frames).
double total_after(const SegmentCosts& costs, const KeyList& kl, const Move& mv, bool direct, std::vector<double>& scratch) {
  auto succ = [&](int k) {
    if (k == mv.l) return mv.to;
    if (k == mv.to) return mv.r;
    int n = kl.nxt[k];
    if (n == mv.key) n = kl.nxt[mv.key];
    return n;
  };
  double t = 0;
  for (int k = 0, n = succ(0); n >= 0; k = n, n = succ(k)) t += direct ? costs.cost_direct(k, n, scratch) : costs.cost(k, n);
  return t;
}

// Proposes a move; returns false when it breaks a hold limit or lands on a key.
bool propose(const SegmentCosts& costs, const KeyList& kl, int minh, int maxh, std::mt19937_64& rng, Move& mv) {
  const int N = costs.frames();
  const int k = kl.movable[std::uniform_int_distribution<size_t>(0, kl.movable.size() - 1)(rng)];
  const int p = kl.prv[k], nx = kl.nxt[k];
  int f;
  if (rng() & 1) {
    if (nx - p < 2) return false;
    f = std::uniform_int_distribution<int>(p + 1, nx - 1)(rng);
  } else {
    f = std::uniform_int_distribution<int>(1, N - 2)(rng);
  }
  if (f == k || kl.is_key[f]) return false;
  int l, r;
  if (f > p && f < nx) {
    l = p;
    r = nx;
  } else {
    if (nx - p > maxh) return false;
    l = f - 1;
    while (!kl.is_key[l]) --l;
    r = f + 1;
    while (!kl.is_key[r]) ++r;
  }
  if (f - l < minh || r - f < minh || f - l > maxh || r - f > maxh) return false;
  mv.key = k;
  mv.to = f;
  mv.l = l;
  mv.r = r;
  if (l == p && r == nx) {
    mv.delta = costs.cost(p, f) + costs.cost(f, nx) - costs.cost(p, k) - costs.cost(k, nx);
  } else {
    mv.delta = costs.cost(p, nx) - costs.cost(p, k) - costs.cost(k, nx) + costs.cost(l, f) + costs.cost(f, r) - costs.cost(l, r);
  }
  return true;
}

Selection anneal_n(const SegmentCosts& costs, const HoldConstraints& c, int n, const AnnealSettings& st,
                   const std::function<void(double)>& progress) {
  const int N = costs.frames();
  std::vector<int> start;
  if (st.start_from_cumsum) {
    SelectionTarget t;
    t.keys = n;
    start = select_cumsum(costs, c, t).keys;
  } else {
    start = even_keys(N, c, n);
  }
  std::vector<char> anchor(static_cast<size_t>(N), 0);
  for (int f : c.anchors(N)) anchor[f] = 1;
  KeyList kl(N, start, anchor);
  std::mt19937_64 rng(st.seed);
  const int minh = c.min_hold, maxh = c.max_span(N);
  std::vector<double> scratch;
  double e = st.evaluation == AnnealEvaluation::patent ? kl.total_direct(costs, scratch) : costs.total(start);
  Selection best = finish(costs, start);
  if (kl.movable.empty()) return best;
  double t0 = st.initial_temperature;
  if (t0 <= 0) {
    double sum = 0;
    int cnt = 0;
    Move mv;
    for (int q = 0; q < 200; ++q) {
      if (propose(costs, kl, minh, maxh, rng, mv) && mv.delta > 0) { sum += mv.delta; ++cnt; }
    }
    t0 = cnt > 0 ? sum / cnt : std::max(e / n, 1e-12);
  }
  double best_e = e;
  Move mv;
  for (int it = 0; it < st.iterations; ++it) {
    const double frac = static_cast<double>(it) / st.iterations;
    const double temp = st.schedule == Schedule::geometric ? t0 * std::pow(st.final_ratio, frac)
                                                           : t0 * (1 - (1 - st.final_ratio) * frac);
    if (progress && (it & 4095) == 0) progress(frac);
    if (!propose(costs, kl, minh, maxh, rng, mv)) continue;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    double d = mv.delta;
    if (st.evaluation != AnnealEvaluation::delta) {
      // Measure the whole selection after the move, as the patent does.
      d = total_after(costs, kl, mv, st.evaluation == AnnealEvaluation::patent, scratch) - e;
    }
    if (d <= 0 || u < std::exp(-d / temp)) {
      kl.remove(mv.key);
      kl.insert(mv.to, mv.l, mv.r);
      e += d;
    }
    if ((it & 1023) == 1023 && e < best_e) {
      best_e = e;
      best.keys = kl.keys();
    }
  }
  if (e < best_e) best.keys = kl.keys();
  Selection s = finish(costs, std::move(best.keys));  // recomputed total: no drift from the deltas
  s.iterations = st.iterations;
  return s;
}

}  // namespace

Selection select_anneal(const SegmentCosts& costs, const HoldConstraints& c, const SelectionTarget& target,
                        const AnnealSettings& settings, const std::function<void(double)>& progress) {
  settings.validate();
  const int N = costs.frames();
  c.validate(N, 0);
  target.validate(N);
  if (target.keys == 0) {
    return budget_search(costs, c, target.max_error, [&](int n) { return anneal_n(costs, c, n, settings, {}); });
  }
  c.validate(N, target.keys);
  return anneal_n(costs, c, target.keys, settings, progress);
}

}  // namespace koma::keys
