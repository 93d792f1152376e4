#include "koma/keys/metric.hpp"

#include <Eigen/Core>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <atomic>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "dp_kernel.hpp"
#include "koma/core/error.hpp"

namespace koma::keys {

std::string_view to_string(Interpolation i) noexcept { return kInterpolationNames.name(i); }


std::string_view to_string(Metric m) noexcept { return kMetricNames.name(m); }


std::optional<Interpolation> parse_interpolation(std::string_view t) noexcept {
  return kInterpolationNames.parse(t);
}


std::optional<Metric> parse_metric(std::string_view t) noexcept { return kMetricNames.parse(t); }


void interpolate_frame(const FeatureMatrix& x, Interpolation interp, int i, int j, int k, std::span<double> out) {
  KOMA_ASSERT(i < j && i <= k && k <= j && static_cast<int>(out.size()) >= x.dims);
  const double L = j - i;
  const double t = (k - i) / L;
  const double* a = x.row(i);
  const double* b = x.row(j);
  if (interp != Interpolation::cubic) {
    for (int d = 0; d < x.dims; ++d) out[d] = a[d] + t * (b[d] - a[d]);
    return;
  }
  // Cubic Hermite; tangents are the source's central differences at the keys (one-sided at the ends),
  // per frame, scaled to the segment's parameter range by L.
  const double* ap = x.row(std::max(i - 1, 0));
  const double* an = x.row(std::min(i + 1, x.frames - 1));
  const double* bp = x.row(std::max(j - 1, 0));
  const double* bn = x.row(std::min(j + 1, x.frames - 1));
  const double sa = (i > 0 && i < x.frames - 1) ? 0.5 : 1.0;
  const double sb = (j > 0 && j < x.frames - 1) ? 0.5 : 1.0;
  const double t2 = t * t, t3 = t2 * t;
  const double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t, h01 = -2 * t3 + 3 * t2, h11 = t3 - t2;
  for (int d = 0; d < x.dims; ++d) {
    const double ma = sa * (an[d] - ap[d]) * L;
    const double mb = sb * (bn[d] - bp[d]) * L;
    out[d] = h00 * a[d] + h10 * ma + h01 * b[d] + h11 * mb;
  }
}

namespace {

// Residuals r_k = x_k - x^_k for k = i..j into buf ((j - i + 1) * dims); r_i = r_j = 0.
// Generated features (FeatureMatrix::generate) have the segment's rows made into `rows` first;
// they only come with linear interpolation or the hold metric (see select_keys), reconstructed
// here by the same arithmetic as interpolate_frame().
void segment_residuals(const SegmentCosts& c, int i, int j, std::vector<double>& buf, std::vector<double>& rows) {
  const FeatureMatrix& x = c.features;
  const int D = x.dims;
  buf.assign(static_cast<size_t>(j - i + 1) * D, 0.0);
  if (!x.stored()) {
    KOMA_ASSERT(c.metric == Metric::hold || c.interpolation == Interpolation::linear);
    const double* seg = x.rows(i, j - i + 1, rows);
    const double* a = seg;
    const double* b = seg + static_cast<size_t>(j - i) * D;
    const double L = j - i;
    for (int k = i + 1; k < j; ++k) {
      double* r = buf.data() + static_cast<size_t>(k - i) * D;
      const double* s = seg + static_cast<size_t>(k - i) * D;
      const double t = (k - i) / L;
      if (c.metric == Metric::hold) {
        for (int d = 0; d < D; ++d) r[d] = s[d] - a[d];
      } else {
        for (int d = 0; d < D; ++d) r[d] = s[d] - (a[d] + t * (b[d] - a[d]));
      }
    }
    return;
  }
  for (int k = i + 1; k < j; ++k) {
    std::span<double> r(buf.data() + static_cast<size_t>(k - i) * D, static_cast<size_t>(D));
    if (c.metric == Metric::hold) {
      for (int d = 0; d < D; ++d) r[d] = x.row(i)[d];
    } else if (c.interpolation == Interpolation::slerp) {
      c.interior(i, j, k, r);
    } else {
      interpolate_frame(x, c.interpolation, i, j, k, r);
    }
    const double* s = x.row(k);
    for (int d = 0; d < D; ++d) r[d] = s[d] - r[d];
  }
}

// Sum of the metric's squared terms over a residual buffer.
double metric_sum(Metric m, int span, int D, const std::vector<double>& r) {
  double sum = 0;
  auto at = [&](int k, int d) { return r[static_cast<size_t>(k) * D + d]; };
  switch (m) {
    case Metric::position:
    case Metric::hold:
      for (size_t q = 0; q < r.size(); ++q) sum += r[q] * r[q];
      break;
    case Metric::velocity:
      for (int k = 0; k < span; ++k)
        for (int d = 0; d < D; ++d) {
          const double v = at(k + 1, d) - at(k, d);
          sum += v * v;
        }
      break;
    case Metric::acceleration:
      for (int k = 1; k < span; ++k)
        for (int d = 0; d < D; ++d) {
          const double a = at(k + 1, d) - 2 * at(k, d) + at(k - 1, d);
          sum += a * a;
        }
      break;
  }
  return sum;
}

}  // namespace

double SegmentCosts::cost_direct(int i, int j) const {
  std::vector<double> buf;
  return cost_direct(i, j, buf);
}

double SegmentCosts::cost_direct(int i, int j, std::vector<double>& scratch) const {
  KOMA_ASSERT(0 <= i && i < j && j < frames());
  std::vector<double> rows;  // generated features only
  segment_residuals(*this, i, j, scratch, rows);
  return metric_sum(metric, j - i, features.dims, scratch);
}

double SegmentCosts::cost_closed(int i, int j) const {
  KOMA_ASSERT(has_closed_form(interpolation, metric) && 0 <= i && i < j && j < frames());
  KOMA_ASSERT(metric == Metric::velocity || metric == Metric::acceleration || !sum_x.empty());
  const int D = features.dims;
  const double* xi = features.row(i);
  const double* xj = features.row(j);
  const double L = j - i;
  double c = 0;
  if (metric == Metric::velocity) {
    double d2 = 0;
    for (int d = 0; d < D; ++d) d2 += (xj[d] - xi[d]) * (xj[d] - xi[d]);
    c = sum_sq[j] - sum_sq[i] - d2 / L;
  } else if (metric == Metric::acceleration) {
    c = sum_sq[j] - sum_sq[i + 1];
  } else {
    // S2 = sum_{k=i+1}^{j-1} |y_k - y_i|^2 with y = x - mean, from prefix sums. Eigen evaluates
    // each reduction with packet (SIMD) accumulators.
    using Row = Eigen::Map<const Eigen::ArrayXd>;
    const Row vi(xi, D), vj(xj, D), mu(mean.data(), D);
    const Row sx_a(sum_x.data() + static_cast<size_t>(i + 1) * D, D), sx_b(sum_x.data() + static_cast<size_t>(j) * D, D);
    const Row sk_a(sum_kx.data() + static_cast<size_t>(i + 1) * D, D), sk_b(sum_kx.data() + static_cast<size_t>(j) * D, D);
    const double m = L - 1;
    const double tri = L * (L - 1) / 2;  // sum_{k=i+1}^{j-1} (k - i)
    const auto yi = vi - mu;
    const auto sy = sx_b - sx_a;
    const auto dd = vj - vi;
    const double yi_sy = (yi * sy).sum();
    const double yi2 = yi.square().sum();
    const double s2 = (sum_sq[j] - sum_sq[i + 1]) - 2 * yi_sy + m * yi2;
    if (metric == Metric::hold) {
      c = s2;
    } else {
      // B . d with B = sum (k - i)(y_k - y_i) = (sum k y_k) - i (sum y_k) - tri y_i.
      const double bd = ((sk_b - sk_a - static_cast<double>(i) * sy - tri * yi) * dd).sum();
      const double d2 = dd.square().sum();
      c = s2 - 2 / L * bd + d2 * (L - 1) * (2 * L - 1) / (6 * L);
    }
  }
  return std::max(c, 0.0);
}

double SegmentCosts::cost(int i, int j) const {
  const int s = j - i;
  if (table_max_span > 0 && s >= table_min_span && s <= table_max_span) {
    return table[static_cast<size_t>((s - table_min_span) * table_stride() + j)];
  }
  // Position and hold closed forms need the whole-take sums, which are kept only without a table.
  const bool sums = metric == Metric::velocity || metric == Metric::acceleration || !sum_x.empty();
  return has_closed_form(interpolation, metric) && sums ? cost_closed(i, j) : cost_direct(i, j);
}

double SegmentCosts::total(std::span<const int> keys) const {
  double t = 0;
  for (size_t a = 0; a + 1 < keys.size(); ++a) t += cost(keys[a], keys[a + 1]);
  return t;
}

double SegmentCosts::normaliser() const noexcept {
  int terms = frames();
  if (metric == Metric::velocity) terms = frames() - 1;
  if (metric == Metric::acceleration) terms = frames() - 2;
  return static_cast<double>(std::max(terms, 1)) * std::max(features.point_count(), 1);
}

namespace {

// Fills the table's closed-form position / hold costs in tiles of end frames, in parallel. Each
// tile centres its own window of frames (the tile plus max_span frames before it) on the window's
// mean, so no sums over the whole take are held and the products stay small (the closed form
// subtracts them, so their size sets its rounding error); the kernel works from the window's
// banded Gram matrix (dp_kernel.hpp).
// The first non-finite value of generated features (stored ones are checked by validate()), as
// validate() names it.
[[noreturn]] void throw_not_finite(const FeatureMatrix& x, int frame) {
  std::vector<double> row;
  const double* r = x.rows(frame, 1, row);
  int d = 0;
  while (d + 1 < x.dims && std::isfinite(r[d])) ++d;
  throw Error(ErrorCode::bad_data, fmt::format("frame {}", frame),
              fmt::format("feature {} (point {}) is not finite (NaN or infinity)", d, x.point_ids[static_cast<size_t>(d / x.coords_per_point)]));
}

void fill_closed_tiled(SegmentCosts& c, int min_span, int max_span, const std::function<void(double)>& progress) {
  const FeatureMatrix& x = c.features;
  const int N = x.frames, D = x.dims;
  const int dp = (D + 7) / 8 * 8;  // zero-padded rows: whole eight-lane groups
  constexpr int kTile = 512;       // window rows stay a few hundred kilobytes (L2)
  const int tiles = (N - 1 + kTile - 1) / kTile;
  std::atomic<int> done{0};
  std::atomic<int> first_bad{N};  // generated features: the first frame with a non-finite value
  tbb::parallel_for(tbb::blocked_range<int>(0, tiles, 1), [&](const tbb::blocked_range<int>& r) {
    std::vector<double> y, scratch, rows, centre(static_cast<size_t>(D)), slope(static_cast<size_t>(D));
    for (int t = r.begin(); t < r.end(); ++t) {
      const int j0 = 1 + t * kTile, j1 = std::min(N, j0 + kTile);
      const int w0 = std::max(0, j0 - max_span);
      const int rows_n = j1 - w0;
      // The window's features: stored, or generated here (the windows overlap by max_span frames,
      // which are generated again).
      const double* xw = x.rows(w0, rows_n, rows);
      auto xrow = [&](int f) { return xw + static_cast<size_t>(f - w0) * D; };
      if (!x.stored()) {
        bool finite = true;
        for (size_t q = 0; q < static_cast<size_t>(rows_n) * D; ++q) finite &= std::isfinite(xw[q]);
        if (!finite) {
          int bad = w0;
          while (bad < j1 && std::all_of(xrow(bad), xrow(bad) + D, [](double v) { return std::isfinite(v); })) ++bad;
          int seen = first_bad.load();
          while (bad < seen && !first_bad.compare_exchange_weak(seen, bad)) {}
          continue;
        }
      }
      // Centred on the window's own mean, and for the position metric also its straight line
      // through time (linear interpolation reproduces a line exactly, so its costs do not see it):
      // a take that travels far and fast keeps small products.
      std::fill(centre.begin(), centre.end(), 0.0);
      std::fill(slope.begin(), slope.end(), 0.0);
      for (int f = w0; f < j1; ++f)
        for (int d = 0; d < D; ++d) centre[d] += xrow(f)[d];
      for (double& m : centre) m /= rows_n;
      const double t_mean = (rows_n - 1) / 2.0;
      if (c.metric == Metric::position) {
        double tt = 0;
        for (int f = w0; f < j1; ++f) {
          const double dt = (f - w0) - t_mean;
          tt += dt * dt;
          for (int d = 0; d < D; ++d) slope[d] += dt * (xrow(f)[d] - centre[d]);
        }
        if (tt > 0)
          for (double& v : slope) v /= tt;
      }
      y.assign(static_cast<size_t>(rows_n) * dp, 0.0);
      for (int f = w0; f < j1; ++f) {
        const double* xr = xrow(f);
        const double dt = (f - w0) - t_mean;
        double* yr = y.data() + static_cast<size_t>(f - w0) * dp;
        for (int d = 0; d < D; ++d) yr[d] = xr[d] - centre[d] - slope[d] * dt;
      }
      scratch.resize(detail::gram_scratch_size(rows_n, max_span, j1 - j0));
      detail::fill_gram_costs(y.data(), rows_n, dp, w0, j0, j1, min_span, max_span, c.metric == Metric::hold, c.table.data(),
                              c.table_stride(), scratch.data());
      const int now = done.fetch_add(1) + 1;
      if (progress && tbb::this_task_arena::current_thread_index() == 0) progress(static_cast<double>(now) / tiles);
    }
  });
  if (first_bad.load() < N) throw_not_finite(x, first_bad.load());
}

// The table of every segment length min_span .. max_span (stride x width doubles): tiled from
// the windows' Gram matrices (closed-form position and hold), else per segment.
SegmentCosts tabulate_costs(SegmentCosts c, int min_span, int max_span, bool tiled, const std::function<void(double)>& progress) {
  const int N = c.frames();
  const int W = max_span - min_span + 1;
  const double bytes = static_cast<double>(c.table_stride()) * W * sizeof(double);
  const std::uint64_t avail = available_memory_bytes();
  if (avail > 0 && bytes > 0.8 * static_cast<double>(avail)) {
    throw Error(ErrorCode::invalid_settings, "constraints.max_hold",
                fmt::format("{} frames with holds up to {} frames need {:.1f} GiB of segment costs and {:.1f} GiB "
                            "of memory is available; lower the maximum hold or the frame rate",
                            N, max_span, bytes / 1073741824.0, static_cast<double>(avail) / 1073741824.0));
  }
  c.table_min_span = min_span;
  c.table_max_span = max_span;
  const std::ptrdiff_t stride = c.table_stride();
  // Every entry with j >= s and j < N is written by the fill below; the others (segments that would
  // start before frame 0, and the padding past the last frame) hold the finite sentinel 1e300
  // (see dp_kernel.hpp). Nothing else is pre-filled: the table can be hundreds of megabytes.
  c.table.resize(static_cast<size_t>(stride * W));
  for (int s = min_span; s <= max_span; ++s) {
    double* col = c.table.data() + static_cast<std::ptrdiff_t>(s - min_span) * stride;
    std::fill(col, col + std::min<std::ptrdiff_t>(s, N), 1e300);
    std::fill(col + N, col + stride, 1e300);
  }
  if (tiled) {
    fill_closed_tiled(c, min_span, max_span, progress);
    if (progress) progress(1.0);
    return c;
  }
  const int D = c.features.dims;
  const Metric metric = c.metric;
  const bool closed = has_closed_form(c.interpolation, metric);
  std::atomic<int> rows_done{0};
  tbb::parallel_for(tbb::blocked_range<int>(1, N, 256), [&](const tbb::blocked_range<int>& r) {
    std::vector<double> buf, rows;
    for (int j = r.begin(); j < r.end(); ++j) {
      const int top = std::min(max_span, j);
      for (int s = min_span; s <= top; ++s) {
        const int i = j - s;
        double& at = c.table[static_cast<size_t>((s - min_span) * stride + j)];
        if (closed) {
          at = c.cost_closed(i, j);
        } else {
          segment_residuals(c, i, j, buf, rows);
          at = metric_sum(metric, s, D, buf);
        }
      }
    }
    const int now = rows_done.fetch_add(static_cast<int>(r.size())) + static_cast<int>(r.size());
    if (progress && tbb::this_task_arena::current_thread_index() == 0) progress(static_cast<double>(now) / N);
  });
  if (progress) progress(1.0);
  return c;
}

}  // namespace

SegmentCosts make_segment_costs(FeatureMatrix features, Interpolation interp, Metric metric, int min_span,
                                int max_span, InteriorFn interior, const std::function<void(double)>& progress) {
  features.validate();
  if (interp == Interpolation::slerp && metric != Metric::hold && !interior) {
    throw Error(ErrorCode::invalid_settings, "interpolation",
                "slerp needs poses (a skeleton motion); use linear or cubic for plain feature tracks");
  }
  SegmentCosts c;
  c.interpolation = interp;
  c.metric = metric;
  c.interior = std::move(interior);
  c.features = std::move(features);
  const FeatureMatrix& x = c.features;
  const int N = x.frames, D = x.dims;
  min_span = std::max(min_span, 1);
  if (max_span <= 0 || max_span > N - 1) max_span = N - 1;
  const bool tabulate = min_span <= max_span;
  const bool closed = has_closed_form(interp, metric);
  const bool tiled = tabulate && closed && (metric == Metric::position || metric == Metric::hold);
  // The mean frame (the centre of the sums) and the per-frame squared terms' prefix sums; a tiled
  // table centres and sums its own windows, and segments beyond it are reconstructed directly.
  if (tiled) return tabulate_costs(std::move(c), min_span, max_span, true, progress);
  if (!x.stored()) {
    throw Error(ErrorCode::invalid_settings, "features",
                "generated features serve the closed-form cost table only (position with linear interpolation, or hold)");
  }
  c.mean.assign(D, 0.0);
  for (int f = 0; f < N; ++f)
    for (int d = 0; d < D; ++d) c.mean[d] += x.row(f)[d];
  for (double& m : c.mean) m /= N;
  // Whole-take prefix sums of x and k x only where no table holds the costs (closed forms then
  // answer every segment); with a table, segments outside it are reconstructed directly.
  const bool whole_sums = closed && (metric == Metric::position || metric == Metric::hold);
  if (whole_sums) {
    c.sum_x.assign(static_cast<size_t>(N + 1) * D, 0.0);
    c.sum_kx.assign(static_cast<size_t>(N + 1) * D, 0.0);
  }
  c.sum_sq.assign(static_cast<size_t>(N + 1), 0.0);
  for (int f = 0; f < N; ++f) {
    const double* r = x.row(f);
    double sq = 0;
    for (int d = 0; d < D; ++d) {
      const double y = r[d] - c.mean[d];
      if (whole_sums) {
        const size_t o = static_cast<size_t>(f + 1) * D + d;
        c.sum_x[o] = c.sum_x[o - D] + y;
        c.sum_kx[o] = c.sum_kx[o - D] + f * y;
      }
      double term = y;
      if (metric == Metric::velocity) term = f + 1 < N ? x.row(f + 1)[d] - r[d] : 0.0;
      if (metric == Metric::acceleration) term = (f > 0 && f + 1 < N) ? x.row(f + 1)[d] - 2 * r[d] + x.row(f - 1)[d] : 0.0;
      sq += term * term;
    }
    c.sum_sq[f + 1] = c.sum_sq[f] + sq;
  }
  if (!tabulate) return c;
  return tabulate_costs(std::move(c), min_span, max_span, false, progress);
}

ResidualSummary summarize_residuals(const SegmentCosts& c, std::span<const int> keys) {
  const int D = c.features.dims, cp = c.features.coords_per_point, P = c.features.point_count();
  const size_t S = keys.size() < 2 ? 0 : keys.size() - 1;
  struct Worst {
    double v = 0;
    int frame = 0, point = 0;
  };
  ResidualSummary out;
  out.segment_costs.resize(S);
  std::vector<Worst> worst(S);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, S, 64), [&](const tbb::blocked_range<size_t>& r) {
    std::vector<double> buf, rows;
    for (size_t a = r.begin(); a < r.end(); ++a) {
      const int i = keys[a], j = keys[a + 1], L = j - i;
      segment_residuals(c, i, j, buf, rows);
      out.segment_costs[a] = metric_sum(c.metric, L, D, buf);
      // The frames this segment owns, and which difference of r each one holds: position and
      // hold r_k (interior frames), velocity r_{k+1} - r_k (from the first key on), acceleration
      // the second difference (interior frames).
      int k0 = 1, k1 = L, step = 0;
      if (c.metric == Metric::velocity) { k0 = 0; step = 1; }
      if (c.metric == Metric::acceleration) step = 2;
      Worst& w = worst[a];
      for (int k = k0; k < k1; ++k) {
        for (int p = 0; p < P; ++p) {
          double sum = 0;
          for (int q = 0; q < cp; ++q) {
            const int d = p * cp + q;
            auto at = [&](int kk) { return buf[static_cast<size_t>(kk) * D + d]; };
            double v = at(k);
            if (step == 1) v = at(k + 1) - at(k);
            if (step == 2) v = at(k + 1) - 2 * at(k) + at(k - 1);
            sum += v * v;
          }
          const double v = sum / c.features.weights[static_cast<size_t>(p)];
          if (v > w.v) w = {v, i + k, p};
        }
      }
    }
  });
  for (const Worst& w : worst) {
    if (w.v > out.worst) {
      out.worst = w.v;
      out.worst_frame = w.frame;
      out.worst_point = w.point;
    }
  }
  return out;
}

}  // namespace koma::keys
