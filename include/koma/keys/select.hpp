// Key selectors over segment costs: exact (dynamic programming), uniform, cumulative sum and
// simulated annealing. All work on a SegmentCosts (metric.hpp), so skeletons and video share them.
//
// A selection keeps frames 0 = k_0 < ... < k_{n-1} = N-1. A hold is the number of frames a key is
// shown: k_{a+1} - k_a (the last key shows its own frame only and is exempt from the hold limits).
//
//   frames   0  1  2  3  4  5  6  7  8
//   keys     K        K     K        K        holds 3, 2, 3
//   shown    0  0  0  3  3  5  5  5  8
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "koma/keys/metric.hpp"

namespace koma::keys {

/// Limits every selector honours. Exact honours them optimally; the others construct selections
/// that satisfy them.
struct HoldConstraints {
  int min_hold = 1;            ///< shortest hold in frames, >= 1 (default 1 = any)
  int max_hold = 0;            ///< longest hold in frames; 0 = unlimited (default)
  std::vector<int> locked;     ///< frames that must be keys (any order; 0 and N-1 are always keys)

  /// Effective maximum hold for `frames` frames (max_hold, or frames - 1 when unlimited).
  int max_span(int frames) const noexcept { return max_hold > 0 ? std::min(max_hold, frames - 1) : frames - 1; }
  /// Sorted, unique locked frames plus 0 and frames-1.
  std::vector<int> anchors(int frames) const;
  /// Smallest and largest key count any selection can have under these constraints.
  std::pair<int, int> key_range(int frames) const;
  /// Throws Error(invalid_settings) naming the problem: min_hold < 1, max_hold < min_hold, locked
  /// frames outside 0..frames-1, two anchors closer than min_hold, a gap between anchors that no
  /// holds in [min_hold, max_hold] can fill, or (when keys > 0) a key count outside key_range().
  void validate(int frames, int keys = 0) const;
};

/// The longest hold when the user set none (max_hold 0): `seconds` of the rate `rate` (frames per
/// second), at least twice the mean hold of `keys` keys (when keys >= 2) and 2 * min_hold - 1 (so
/// every gap between locked frames that min_hold allows stays fillable), doubled until the key
/// count is reachable. Returns constraints.max_hold when it is set or seconds is 0, and 0
/// (unlimited) when the cap reaches frames - 1. Bounds the cost table (frames x hold) so that it
/// grows linearly with the take's length.
int default_max_hold(const HoldConstraints& constraints, double seconds, double rate, int frames, int keys);

/// How many keys to keep.
struct SelectionTarget {
  int keys = 0;             ///< keep exactly this many (>= 2, <= frames); 0 = use max_error
  double max_error = -1;    ///< when keys == 0: fewest keys whose mean squared error (per point
                            ///< and frame, the metric's unit) is <= max_error
  /// Throws Error(invalid_settings) when neither or an invalid value is set.
  void validate(int frames) const;
};

/// One point of the optimal error-vs-n curve.
struct CurvePoint {
  int keys = 0;          ///< n
  double error = 0;      ///< mean squared error per point and frame of the best selection with n keys
  bool hull = false;     ///< a point of the curve's lower convex hull met by the Lagrangian search
                         ///< (the level DP gives every n and leaves this false)
  /// The key frames of that best selection: filled by the level DP when ExactSettings::curve_keys
  /// (the same back-pointers give every n), empty otherwise. Lets a caller re-hold at another key
  /// count without selecting again.
  std::vector<int> frames;
};

/// A selection and its error.
struct Selection {
  std::vector<int> keys;           ///< sorted key frames, first 0, last N-1
  double error = 0;                ///< mean squared error per point and frame (total / normaliser)
  double total = 0;                ///< sum of segment costs
  std::vector<CurvePoint> curve;   ///< exact: the optimum for every feasible n up to keys.size()
                                   ///< (level DP) or the hull points met (Lagrangian)
  int iterations = 0;              ///< anneal: moves tried; cumsum: bisection steps
  // exact only: the certificate.
  double lower_bound = 0;          ///< no selection with this many keys has a smaller total
  bool optimal = false;            ///< proven optimal: total - lower_bound <= 1e-9 * total (rounding)
  int solves = 0;                  ///< Lagrangian: shortest-path solves (each O(N * H))
  std::int64_t corridor_states = 0;  ///< Lagrangian: DP states spent closing a duality gap (0: the
                                     ///< price search or a splice hit n exactly)
};

/// How select_exact finds the optimum.
enum class ExactMethod : std::uint8_t {
  automatic,  ///< the level DP when n * N * H is small (it also gives the whole error-vs-n curve),
              ///< else the Lagrangian search (default)
  levels,     ///< the level DP: O(n * N * H) time, O(n * N) bytes; the reference
  lagrange,   ///< Lagrangian relaxation: a price per key, each price one O(N * H) shortest path,
              ///< prices searched by chords; closes a duality gap by a DP over the states the bound
              ///< cannot exclude. O(N * H) per solve, O(N) bytes
};
std::string_view to_string(ExactMethod m) noexcept;
/// "auto", "levels", "lagrange"; nullopt otherwise.
std::optional<ExactMethod> parse_exact_method(std::string_view text) noexcept;

struct ExactSettings {
  ExactMethod method = ExactMethod::automatic;
  double level_work = 5e7;             ///< automatic: the level DP when n * N * H <= this (default 5e7)
  std::int64_t corridor_states = 50'000'000;  ///< Lagrangian: most DP states when closing a gap
                                       ///< (default 50 million, 8 bytes each); beyond, the answer
                                       ///< is the best found with its certified bound
  /// Level DP: also the key frames of every point of the curve (CurvePoint::frames; n^2 / 2 ints
  /// for n keys). Default off. The Lagrangian search gives hull errors only.
  bool curve_keys = false;
  /// Lagrangian: warm-started price search (default on). Once both ends of the price bracket are
  /// positive, the next price comes from the two previous solves: the segment count falls like a
  /// power of the price on long takes, so the price where the line through the ends' (log price,
  /// log count) reaches the target count; a chord step (the cold search's only step) whenever that
  /// made no new count. Fewer solves (1M-frame CMU take: 10-11 instead of 14); the same keys as the cold
  /// search (SelectLagrange.WarmStartPicksTheColdKeys), while the hull points met (the curve) and
  /// the certified bound's last digits may differ.
  bool warm_start = true;
  void validate() const;
};

/// Exact selection: the shortest (n-1)-link path from frame 0 to N-1 over segment costs, with
/// holds in [min_hold, max_hold] and no segment across a locked frame. Provably optimal for the
/// metric, with a certificate (lower_bound, optimal). Short clips take the level DP (O(n * N * H)
/// time, O(n * N) bytes; also the optimal error for every n up to the answer); long ones the
/// Lagrangian search (O(N * H) per price, a few dozen prices; O(N) bytes besides the table).
/// With target.max_error: the fewest keys within the budget (or the most keys allowed if none is).
/// Throws Error(invalid_settings) for impossible constraints or targets.
Selection select_exact(const SegmentCosts& costs, const HoldConstraints& constraints, const SelectionTarget& target,
                       const std::function<void(double)>& progress = {});
/// select_exact with an explicit method (see ExactMethod). Every method returns an optimal
/// selection, or (Lagrangian past its state budget) the best found with `optimal` false and a
/// certified lower_bound.
Selection select_exact(const SegmentCosts& costs, const HoldConstraints& constraints, const SelectionTarget& target,
                       const ExactSettings& settings, const std::function<void(double)>& progress = {});

/// Uniform selection. With on > 0 and no locks or hold limits violated: every on-th frame starting
/// at `offset` (plus 0 and N-1) — "animation on Ns". Otherwise n keys spread as evenly as the
/// constraints allow (each gap between anchors gets keys in proportion to its length).
Selection select_uniform(const SegmentCosts& costs, const HoldConstraints& constraints, const SelectionTarget& target,
                         int on = 0, int offset = 0);

/// The patent's cumulative-sum rule.
struct CumsumSettings {
  bool carry_remainder = false;  ///< after a key, restart the sum at the crossing step (false, default)
                                 ///< or carry the remainder over the threshold (true)
  int bisection_steps = 60;      ///< threshold bisection iterations to hit n, >= 1 (default 60)
  void validate() const;
};

/// Cumulative sum: accumulate the per-frame change |x_k - x_{k-1}| (feature space); when the sum
/// crosses the threshold at frame k, key frame k-1 (the frame before), then restart. Locked frames
/// are keyed and restart the sum; a key is forced when the hold would exceed max_hold, and a
/// crossing is ignored while the hold is shorter than min_hold. The threshold is bisected to hit n;
/// if no threshold gives exactly n, the nearest larger set is thinned (dropping the key whose
/// neighbours are closest in accumulated change) or the nearest smaller set is filled (splitting the
/// segment with the largest change).
Selection select_cumsum(const SegmentCosts& costs, const HoldConstraints& constraints, const SelectionTarget& target,
                        const CumsumSettings& settings = {});

/// Temperature schedule of the annealer.
enum class Schedule : std::uint8_t { geometric, linear };

/// How the annealer measures a move.
enum class AnnealEvaluation : std::uint8_t {
  delta,     ///< the two or three segments a move changes, O(1) costs per move (default; koma's)
  segments,  ///< the whole selection as a sum of segment costs, O(n) per move
  patent,    ///< the whole motion re-interpolated and compared frame by frame, O(N * D) per move,
             ///< as the patent describes (no segment costs); the reference for speed comparisons
};
std::string_view to_string(AnnealEvaluation e) noexcept;
/// "delta", "segments", "patent"; nullopt otherwise.
std::optional<AnnealEvaluation> parse_anneal_evaluation(std::string_view text) noexcept;

/// The patent's simulated annealing.
struct AnnealSettings {
  std::uint64_t seed = 1;           ///< random seed (explicit; same seed = same result)
  int iterations = 200000;          ///< moves tried, >= 1 (default 200,000)
  double initial_temperature = 0;   ///< in the metric's cost unit; 0 = automatic (mean uphill move
                                    ///< of 200 random moves from the start)
  double final_ratio = 1e-4;        ///< final temperature = initial * final_ratio, in (0, 1]
  Schedule schedule = Schedule::geometric;  ///< default geometric cooling
  bool start_from_cumsum = false;   ///< start from select_cumsum (true) or uniform (false, default)
  AnnealEvaluation evaluation = AnnealEvaluation::delta;  ///< default delta; all three accept the same
                                    ///< moves up to rounding, only the cost of measuring them differs
  void validate() const;
};

/// Simulated annealing over key sets of exactly n keys: a move takes a random unlocked key and puts
/// it on a random free frame (half the time between its neighbours, half anywhere); moves that
/// would break a hold limit are rejected; Metropolis acceptance; the best set seen is returned.
/// max_error targets search n by bisection.
Selection select_anneal(const SegmentCosts& costs, const HoldConstraints& constraints, const SelectionTarget& target,
                        const AnnealSettings& settings = {}, const std::function<void(double)>& progress = {});

/// The selectors by name.
enum class Selector : std::uint8_t { exact, anneal, cumsum, cumsum_anneal, uniform };
std::string_view to_string(Selector s) noexcept;
/// "exact", "anneal", "cumsum", "cumsum+anneal", "uniform"; nullopt otherwise.
std::optional<Selector> parse_selector(std::string_view text) noexcept;

/// True if `keys` is a valid selection for `frames` frames under `constraints` (sorted, starts at 0,
/// ends at frames-1, every hold within limits, every locked frame present).
bool satisfies(std::span<const int> keys, int frames, const HoldConstraints& constraints);

}  // namespace koma::keys
