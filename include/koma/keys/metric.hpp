// Interpolators and error metrics for key-pose selection, as segment costs.
//
// A key set 0 = k_0 < k_1 < ... < k_{n-1} = N-1 splits the frames into segments [k_a, k_{a+1}].
// Every metric here is segment-separable: the total error is the sum of cost(k_a, k_{a+1}), and
// cost(i, j) depends on frames i..j only. That is what makes the exact selector (select.hpp) a
// shortest path. Dropped frames i < k < j are reconstructed from the keys i and j:
//
//   frame   i    i+1   i+2   ...   j-1    j
//   source  x_i  x     x           x      x_j
//   recon   x_i  x^    x^          x^     x_j      residual r_k = x_k - x^_k  (r_i = r_j = 0)
//
//   position      sum_{k=i+1}^{j-1} |r_k|^2
//   velocity      sum_{k=i}^{j-1}   |r_{k+1} - r_k|^2            (each frame step belongs to one segment)
//   acceleration  sum_{k=i+1}^{j-1} |r_{k+1} - 2 r_k + r_{k-1}|^2  (the kinks at the keys are not counted:
//                                                                 they depend on two segments)
//   hold          sum_{k=i+1}^{j-1} |x_k - x_i|^2                (what a viewer of the stepped result sees)
//
// Closed forms in O(D) per segment from prefix sums (D = feature dims):
//   linear + position     S2 - 2/L * (B . d) + |d|^2 (L-1)(2L-1)/(6L), with L = j-i, d = x_j - x_i,
//                         S2 = sum |x_k - x_i|^2, B = sum (k-i)(x_k - x_i) from prefix sums of x, k x, |x|^2
//   linear + velocity     sum_{k=i}^{j-1} |v_k|^2 - |x_j - x_i|^2 / L
//   linear + acceleration sum_{k=i+1}^{j-1} |a_k|^2
//   hold                  S2 (any interpolator)
// Cubic and pose (slerp + FK) interpolation have no closed form: their costs are tabulated for every
// segment up to the maximum hold by direct reconstruction.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"
#include "koma/core/large_pages.hpp"
#include "koma/keys/features.hpp"

namespace koma::keys {

/// How a dropped frame is reconstructed from the two keys around it.
enum class Interpolation : std::uint8_t {
  linear,  ///< per feature, straight line between the keys
  cubic,   ///< per feature, cubic Hermite with Catmull-Rom tangents (x_{k+1} - x_{k-1}) / 2 of the
           ///< source frames at each key (so the cost of a segment depends on that segment only)
  slerp,   ///< pose: slerp of joint rotations, lerp of translations, then FK (needs a pose callback)
};

/// The error measured between the source and the reconstruction (see the file comment).
enum class Metric : std::uint8_t { position, velocity, acceleration, hold };

/// The interpolators' and metrics' names.
inline constexpr EnumNames<Interpolation, 3> kInterpolationNames{
    {{{Interpolation::linear, "linear"}, {Interpolation::cubic, "cubic"}, {Interpolation::slerp, "slerp"}}}};
inline constexpr EnumNames<Metric, 4> kMetricNames{{{{Metric::position, "position"},
                                                    {Metric::velocity, "velocity"},
                                                    {Metric::acceleration, "acceleration"},
                                                    {Metric::hold, "hold"}}}};

std::string_view to_string(Interpolation i) noexcept;
std::string_view to_string(Metric m) noexcept;
/// Parse "linear" / "cubic" / "slerp"; nullopt otherwise.
std::optional<Interpolation> parse_interpolation(std::string_view text) noexcept;
/// Parse "position" / "velocity" / "acceleration" / "hold"; nullopt otherwise.
std::optional<Metric> parse_metric(std::string_view text) noexcept;

/// True if (interpolation, metric) has an O(D) closed form from prefix sums.
constexpr bool has_closed_form(Interpolation i, Metric m) noexcept {
  return m == Metric::hold || i == Interpolation::linear;
}

/// Writes the reconstructed features of frame k (i < k < j) between keys i and j into `out`
/// (dims values). Supplied by callers whose interpolation is not per feature (slerp + FK, flow).
using InteriorFn = std::function<void(int i, int j, int k, std::span<double> out)>;

/// Reconstruction of frame k (i <= k <= j) between keys i and j, per feature, for linear and cubic
/// interpolation (dims values into `out`). Asserts i <= k <= j and i < j.
void interpolate_frame(const FeatureMatrix& x, Interpolation interp, int i, int j, int k, std::span<double> out);

/// Segment costs of one feature matrix under one interpolator and metric.
///
/// Holds the features, the prefix sums of the closed forms and a table of costs for segment
/// lengths table_min_span .. table_max_span (filled by make_segment_costs). cost() reads the table
/// when the length is inside it, else uses the closed form, else reconstructs directly.
/// Costs are sums over frames of squared feature distances (metres^2 * weight); divide by
/// normaliser() for the mean squared error per point and frame.
struct SegmentCosts {
  FeatureMatrix features;
  Interpolation interpolation = Interpolation::linear;
  Metric metric = Metric::position;
  InteriorFn interior;  ///< required for slerp; ignored otherwise

  // Prefix sums (closed forms), coordinates centred on the mean frame for precision.
  std::vector<double> mean;        ///< dims: the centre subtracted before summing
  // sum_x and sum_kx are kept only when there is no table (position and hold); with a table, its
  // tiles sum their own windows and segments longer than the table are reconstructed directly.
  std::vector<double> sum_x;       ///< (frames + 1) * dims: sum_{k<f} (x_k - mean)
  std::vector<double> sum_kx;      ///< (frames + 1) * dims: sum_{k<f} k (x_k - mean)
  std::vector<double> sum_sq;      ///< frames + 1: sum_{k<f} |x_k - mean|^2, or |v_k|^2 / |a_k|^2

  int table_min_span = 0;  ///< shortest tabulated segment (frames between keys)
  int table_max_span = 0;  ///< longest tabulated segment; 0 = no table
  /// cost(j - s, j) at [(s - table_min_span) * table_stride() + j]: one contiguous column per
  /// segment length, so the exact selector compares eight end frames per instruction. Entries with
  /// j - s < 0 and the padding j >= frames() hold 1e300 (unreachable).
  std::vector<double, LargePageAllocator<double>> table;

  int frames() const noexcept { return features.frames; }
  int table_width() const noexcept { return table_max_span >= table_min_span && table_max_span > 0 ? table_max_span - table_min_span + 1 : 0; }
  /// Distance between consecutive columns of `table`: frames() rounded up to a multiple of 8.
  std::ptrdiff_t table_stride() const noexcept { return (static_cast<std::ptrdiff_t>(frames()) + 7) / 8 * 8; }

  /// Cost of the segment between keys i < j (>= 0).
  double cost(int i, int j) const;
  /// Cost by reconstructing every frame of the segment: O((j - i) * D); independent of the prefix
  /// sums and the table (used for reports and to cross-check).
  double cost_direct(int i, int j) const;
  /// cost_direct() reusing `scratch` for the reconstruction (no allocation once it is large enough).
  double cost_direct(int i, int j, std::vector<double>& scratch) const;
  /// Closed-form cost from the prefix sums. Asserts has_closed_form() and, for position and hold,
  /// that the whole-take sums are held (no table).
  double cost_closed(int i, int j) const;
  /// Total cost of a key set (sorted, first 0, last frames()-1).
  double total(std::span<const int> keys) const;
  /// Number of error terms times points: divide a total by this for the mean squared error per point.
  double normaliser() const noexcept;
};

/// Builds the segment costs and tabulates every segment of length min_span .. max_span
/// (max_span 0 or >= frames means every length; min_span > max_span: no table). The table is filled
/// in tiles on every core (oneTBB); its memory is (frames rounded up to 8) x (max_span - min_span + 1)
/// doubles. `progress` (optional) receives fractions in [0, 1] on the calling thread.
/// Throws Error(invalid_settings, "interpolation") when slerp is asked without `interior`,
/// Error(invalid_settings, "constraints.max_hold") when the table needs more memory than the
/// machine has available (the message says how much), and Error(bad_data) for invalid features.
SegmentCosts make_segment_costs(FeatureMatrix features, Interpolation interp, Metric metric, int min_span,
                                int max_span, InteriorFn interior = {},
                                const std::function<void(double)>& progress = {});

/// What a worst-error report needs of a key set's residuals, segments on every core: each
/// segment's cost by reconstruction (cost_direct), and the largest per-point squared residual of
/// the metric (position / hold: the point's distance at a dropped frame; velocity: the step from
/// that frame to the next; acceleration: that frame's second difference) divided by its point's
/// weight, with its frame and point index (the first in frame, then point, order on ties; frame 0,
/// point 0 and 0 when every residual is 0).
struct ResidualSummary {
  std::vector<double> segment_costs;  ///< one per segment, in key order
  double worst = 0;
  int worst_frame = 0;
  int worst_point = 0;  ///< index into features.point_ids
};
ResidualSummary summarize_residuals(const SegmentCosts& costs, std::span<const int> keys);

}  // namespace koma::keys
