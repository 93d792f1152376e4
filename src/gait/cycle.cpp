#include "koma/gait/cycle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "detail.hpp"
#include "koma/core/error.hpp"
#include "koma/core/quat_sign.hpp"
#include "koma/core/fk.hpp"

namespace koma::gait {

std::string_view to_string(AngleMode mode) noexcept { return kAngleModeNames.name(mode); }


std::string_view to_string(PeriodMethod method) noexcept { return kPeriodMethodNames.name(method); }


void CycleSettings::validate() const {
  auto bad = [](const char* field, std::string msg) { throw Error(ErrorCode::invalid_settings, field, std::move(msg)); };
  if (samples < 8 || samples > 4096) bad("samples", fmt::format("{} must be in 8..4096", samples));
  if (!(min_period > 0 && std::isfinite(min_period))) bad("min_period", fmt::format("{} s must be finite and > 0", min_period));
  if (!(max_period > min_period && std::isfinite(max_period)))
    bad("max_period", fmt::format("{} s must be finite and > min_period ({} s)", max_period, min_period));
  if (!(min_confidence >= 0 && min_confidence <= 1)) bad("min_confidence", fmt::format("{} must be in [0, 1]", min_confidence));
  if (!(outlier_factor == 0 || (outlier_factor >= 1 && std::isfinite(outlier_factor))))
    bad("outlier_factor", fmt::format("{} must be 0 (keep all) or >= 1", outlier_factor));
  contact.validate();
}

void GaitBasis::validate() const {
  skeleton.validate();
  const int n = skeleton.joint_count();
  auto bad = [](std::string what, std::string msg) { throw Error(ErrorCode::bad_data, std::move(what), std::move(msg)); };
  if (root_joint < 0 || root_joint >= n) bad("root_joint", fmt::format("{} is not a joint index (0..{})", root_joint, n - 1));
  if (!forward.allFinite() || std::abs(forward.norm() - 1) > 1e-6) bad("forward", "must be a unit XZ vector");
  if (!(period > 0 && std::isfinite(period))) bad("period", fmt::format("{} s must be finite and > 0", period));
  if (static_cast<int>(mean_rotations.size()) != n || static_cast<int>(bones.size()) != n)
    bad("gait", fmt::format("mean_rotations ({}) and bones ({}) must have one entry per joint ({})", mean_rotations.size(),
                            bones.size(), n));
  for (int j = 0; j < n; ++j) {
    if (!mean_rotations[j].coeffs().allFinite() || std::abs(mean_rotations[j].norm() - 1) > 1e-6)
      bad("joint " + skeleton.names[j], "mean rotation is not a unit quaternion");
    if (!bones[j].allFinite()) bad("joint " + skeleton.names[j], "bone vector is not finite");
  }
}

std::vector<std::string> channel_names(const GaitBasis& basis) {
  const Skeleton& s = basis.skeleton;
  const std::string& root = s.names[basis.root_joint];
  std::vector<std::string> names = {root + ".height", root + ".forward_speed", root + ".lateral_speed"};
  for (int j = 0; j < s.joint_count(); ++j) {
    if (basis.angles == AngleMode::log_map) {
      for (const char* a : {".lx", ".ly", ".lz"}) names.push_back(s.names[j] + a);
    } else {
      for (int axis : euler_axes(s.euler_order(j))) names.push_back(s.names[j] + "." + "XYZ"[axis] + "rotation");
    }
  }
  return names;
}

Quat heading_rotation(const Eigen::Vector2d& forward) {
  return Quat(Eigen::AngleAxisd(std::atan2(forward.x(), forward.y()), Vec3::UnitY()));
}

Quat joint_rotation(const GaitBasis& basis, int joint, const Vec3& v) {
  if (basis.angles == AngleMode::euler) return euler_to_quat(v, basis.skeleton.euler_order(joint));
  return (basis.mean_rotations[joint] * quat_exp(v)).normalized();
}

namespace detail {

Quat mean_rotation(std::span<const Quat> qs) {
  KOMA_ASSERT(!qs.empty());
  // Sign-aligned normalised sum as the start, then Karcher (geodesic mean) iterations.
  Quat m = sign_aligned_mean(qs);
  for (int it = 0; it < 8; ++it) {
    Vec3 step = Vec3::Zero();
    const Quat inv = m.conjugate();
    for (const Quat& q : qs) step += quat_log(inv * q);
    step /= static_cast<double>(qs.size());
    m = (m * quat_exp(step)).normalized();
    if (step.norm() < 1e-13) break;
  }
  return m;
}

// Channel row `row` at fractional frame u (linear interpolation, clamped to the motion).
double sample_row(const Eigen::MatrixXd& x, int row, double u) {
  const int n = static_cast<int>(x.cols());
  u = std::clamp(u, 0.0, static_cast<double>(n - 1));
  const int i = std::min(static_cast<int>(std::floor(u)), n - 2);
  const double t = u - i;
  return x(row, i) * (1 - t) + x(row, i + 1) * t;
}

}  // namespace detail

MotionChannels motion_channels(const Motion& motion, AngleMode angles) {
  motion.validate();
  if (motion.frame_count < 3)
    throw Error(ErrorCode::bad_data, "motion", fmt::format("{} frames: gait analysis needs at least 3", motion.frame_count));
  const Skeleton& sk = motion.skeleton;
  const int nj = sk.joint_count(), nf = motion.frame_count;
  MotionChannels out;
  GaitBasis& b = out.basis;
  b.skeleton = sk;
  b.source_unit = motion.source_unit;
  b.angles = angles;

  // Root = the joint whose local translation varies most; bones = mean local translations.
  b.bones.assign(nj, Vec3::Zero());
  std::vector<double> variance(nj, 0.0);
  for (int j = 0; j < nj; ++j) {
    for (int f = 0; f < nf; ++f) b.bones[j] += motion.translation(f, j);
    b.bones[j] /= nf;
    for (int f = 0; f < nf; ++f) variance[j] += (motion.translation(f, j) - b.bones[j]).squaredNorm();
  }
  b.root_joint = 0;
  for (int j = 1; j < nj; ++j)
    if (variance[j] > variance[b.root_joint] + 1e-12) b.root_joint = j;

  const WorldPoses poses = forward_kinematics(motion);
  std::vector<Vec3> p(nf);
  for (int f = 0; f < nf; ++f) p[f] = poses.position(f, b.root_joint);
  const Eigen::Vector2d disp(p[nf - 1].x() - p[0].x(), p[nf - 1].z() - p[0].z());
  b.forward = disp.norm() > 0.01 ? Eigen::Vector2d(disp.normalized()) : Eigen::Vector2d(0, 1);
  const Eigen::Vector2d lateral(b.forward.y(), -b.forward.x());  // Y x forward

  // Rotations per joint over time. The root's are made heading-free: the yaw H that turns +Z into
  // the travel direction is taken out (in the world, through whatever joints sit above the root),
  // so two walks in different directions have the same posture; synthesis puts H back.
  const Quat heading = heading_rotation(b.forward);
  const int root_parent = sk.parents[b.root_joint];
  b.mean_rotations.assign(nj, Quat::Identity());
  std::vector<Quat> track(nf);
  out.values.resize(b.channel_count(), nf);
  for (int j = 0; j < nj; ++j) {
    for (int f = 0; f < nf; ++f) track[f] = motion.rotation(f, j);
    if (j == b.root_joint)
      for (int f = 0; f < nf; ++f) {
        const Quat a = root_parent < 0 ? Quat::Identity() : poses.rotations[static_cast<size_t>(f) * nj + root_parent];
        track[f] = (a.conjugate() * heading.conjugate() * a * track[f]).normalized();
      }
    if (angles == AngleMode::log_map) {
      const Quat m = detail::mean_rotation(track);
      b.mean_rotations[j] = m;
      for (int f = 0; f < nf; ++f) out.values.block<3, 1>(joint_channel(j, 0), f) = quat_log(m.conjugate() * track[f]);
    } else {
      const EulerOrder order = sk.euler_order(j);
      Vec3 prev = Vec3::Zero();
      for (int f = 0; f < nf; ++f) {
        prev = quat_to_euler(track[f], order, prev);
        out.values.block<3, 1>(joint_channel(j, 0), f) = prev;
      }
    }
  }
  for (int f = 0; f < nf; ++f) {
    const int a = std::max(f - 1, 0), c = std::min(f + 1, nf - 1);
    const Vec3 v = (p[c] - p[a]) * motion.frame_rate / (c - a);
    const Eigen::Vector2d h(v.x(), v.z());
    out.values(0, f) = p[f].y();
    out.values(1, f) = h.dot(b.forward);
    out.values(2, f) = h.dot(lateral);
  }
  return out;
}

namespace {

// Rows of the joint channels used for the period search.
std::vector<int> period_rows(const Skeleton& sk, int root, const CycleSettings& s) {
  std::vector<int> rows;
  if (!s.period_joint.empty()) {
    const int j = sk.find(s.period_joint);
    if (j < 0) throw Error(ErrorCode::invalid_settings, "period_joint", fmt::format("no joint named '{}'", s.period_joint));
    for (int a = 0; a < 3; ++a) rows.push_back(joint_channel(j, a));
  } else {
    // The root and the joints above it carry the heading, which need not repeat (a curved path).
    std::vector<bool> above(sk.joint_count(), false);
    for (int j = root; j >= 0; j = sk.parents[j]) above[j] = true;
    for (int j = 0; j < sk.joint_count(); ++j)
      for (int a = 0; a < 3 && !above[j]; ++a) rows.push_back(joint_channel(j, a));
    if (rows.empty())
      for (int a = 0; a < 3; ++a) rows.push_back(joint_channel(root, a));
  }
  return rows;
}

// The period rows of `values`, each centred on its mean.
Eigen::MatrixXd centred_rows(const Eigen::MatrixXd& values, const std::vector<int>& rows) {
  Eigen::MatrixXd x(rows.size(), values.cols());
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto row = static_cast<Eigen::Index>(r);
    x.row(row) = values.row(rows[r]);
    x.row(row).array() -= x.row(row).mean();
  }
  return x;
}

// Normalised autocorrelation of x at a fractional lag (the later frame linearly interpolated).
double lag_correlation(const Eigen::MatrixXd& x, double tau) {
  const int n = static_cast<int>(x.cols());
  const int whole = static_cast<int>(std::floor(tau));
  const double t = tau - whole;
  double num = 0, ea = 0, eb = 0;
  for (int i = 0; i + whole + 1 < n; ++i) {
    const Eigen::VectorXd later = (1 - t) * x.col(i + whole) + t * x.col(i + whole + 1);
    num += x.col(i).dot(later);
    ea += x.col(i).squaredNorm();
    eb += later.squaredNorm();
  }
  return ea > 0 && eb > 0 ? num / std::sqrt(ea * eb) : 0.0;
}

// The lag within a frame of `centre` with the highest lag_correlation (golden-section search).
double refine_lag(const Eigen::MatrixXd& x, double centre) {
  const double phi = 0.5 * (std::sqrt(5.0) - 1);
  double lo_t = std::max(1.0, centre - 1.0), hi_t = std::min(static_cast<double>(x.cols()) - 2.0, centre + 1.0);
  double x1 = hi_t - phi * (hi_t - lo_t), x2 = lo_t + phi * (hi_t - lo_t);
  double f1 = lag_correlation(x, x1), f2 = lag_correlation(x, x2);
  for (int it = 0; it < 30 && hi_t - lo_t > 1e-4; ++it) {
    if (f1 < f2) {
      lo_t = x1, x1 = x2, f1 = f2, x2 = lo_t + phi * (hi_t - lo_t), f2 = lag_correlation(x, x2);
    } else {
      hi_t = x2, x2 = x1, f2 = f1, x1 = hi_t - phi * (hi_t - lo_t), f1 = lag_correlation(x, x1);
    }
  }
  return 0.5 * (lo_t + hi_t);
}

// Autocorrelation route. period_frames = 0 when no peak exists in the searchable lags; `why` says so.
PeriodEstimate autocorrelation_period(const Eigen::MatrixXd& x, double rate, const CycleSettings& s, std::string& why) {
  const int n = static_cast<int>(x.cols());
  PeriodEstimate est;
  est.method = PeriodMethod::autocorrelation;
  const int lo = std::max(2, static_cast<int>(std::ceil(s.min_period * rate)));
  // Lags up to 2/3 of the motion: the overlap still covers half a cycle or more.
  const int hi = std::min(static_cast<int>(std::floor(s.max_period * rate)), 2 * n / 3);
  if (hi < lo + 1) {
    why = fmt::format("{} frames ({:.2f} s) are too short to find a period of at least {} s", n, (n - 1) / rate,
                      s.min_period);
    return est;
  }
  // Energy of frames for the normalisation of each overlap: prefix sums of per-frame squared norms.
  std::vector<double> e(n + 1, 0.0);
  for (int t = 0; t < n; ++t) e[t + 1] = e[t] + x.col(t).squaredNorm();
  std::vector<double> r(hi + 2, 0.0);
  for (int tau = lo - 1; tau <= hi + 1 && tau < n; ++tau) {
    double num = 0;
    for (int t = 0; t + tau < n; ++t) num += x.col(t).dot(x.col(t + tau));
    const double den = std::sqrt((e[n - tau] - e[0]) * (e[n] - e[tau]));
    r[tau] = den > 1e-300 ? num / den : 0.0;
  }
  double best = -1;
  std::vector<int> peaks;
  for (int tau = lo; tau <= hi && tau + 1 < n; ++tau) {
    if (r[tau] > r[tau - 1] && r[tau] >= r[tau + 1]) {
      peaks.push_back(tau);
      best = std::max(best, r[tau]);
    }
  }
  if (peaks.empty() || best <= 0) {
    why = fmt::format("no autocorrelation peak between {} and {:.3g} s (nothing repeats with such a period, or the "
                      "clip is shorter than 1.5 cycles)",
                      s.min_period, hi / rate);
    return est;
  }
  int chosen = peaks.front();
  for (int tau : peaks)
    if (r[tau] >= 0.85 * best) {
      chosen = tau;
      break;
    }
  // Sub-frame period: maximise the autocorrelation at fractional lags by golden-section search
  // within a frame of the integer peak. A parabola through three integer lags is biased for
  // non-sinusoidal gaits; this is exact for a periodic signal.
  const double refined = refine_lag(x, chosen);
  const double r_refined = lag_correlation(x, refined);
  est.period_frames = r_refined >= r[chosen] ? refined : chosen;
  est.period = est.period_frames / rate;
  est.confidence = std::clamp(std::max(r_refined, r[chosen]), 0.0, 1.0);
  return est;
}

// Contacts route: touch-downs (contact starts) of each foot from koma::body's detector. The
// period is the summed span between each foot's first and last touch-down over the strides in
// between; a gap of about n median intervals counts as n strides (a missed contact), and
// touch-downs closer than min_period to the previous one are ignored (a contact split in two).
// period_frames = 0 when there is no stride to measure; `why` says what was found.
PeriodEstimate contact_period(const Motion& motion, const Eigen::MatrixXd& x, const CycleSettings& s, std::string& why) {
  const double rate = motion.frame_rate;
  const body::ContactReport report =
      s.feet.empty() ? body::detect_foot_contacts(motion, s.contact) : body::detect_contacts(motion, s.feet, s.contact);
  PeriodEstimate est;
  est.method = PeriodMethod::contacts;
  std::vector<std::vector<int>> downs;
  std::vector<int> intervals;
  for (const body::EffectorContacts& foot : report.effectors) {
    std::vector<int> d;
    for (const body::Contact& c : foot.contacts) {
      if (c.begin == 0) continue;  // in contact from the first frame: not a touch-down
      if (!d.empty() && c.begin - d.back() < s.min_period * rate) continue;
      d.push_back(c.begin);
    }
    for (size_t i = 1; i < d.size(); ++i) intervals.push_back(d[i] - d[i - 1]);
    est.contacts += static_cast<int>(d.size());
    downs.push_back(std::move(d));
  }
  if (intervals.empty()) {
    why = fmt::format("foot contacts: {} touch-downs, no foot touches down twice", est.contacts);
    return est;
  }
  std::vector<int> sorted = intervals;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  double span = 0, strides = 0;
  for (const std::vector<int>& d : downs)
    for (size_t i = 1; i < d.size(); ++i) {
      span += d[i] - d[i - 1];
      strides += std::max(1.0, std::round((d[i] - d[i - 1]) / median));
    }
  const double period = span / strides;
  if (period < s.min_period * rate || period > s.max_period * rate || period > motion.frame_count - 2) {
    why = fmt::format("foot contacts: {} touch-downs, stride period {:.3f} s outside {} .. {} s", est.contacts,
                      period / rate, s.min_period, std::min(s.max_period, (motion.frame_count - 2) / rate));
    return est;
  }
  // Touch-downs are whole frames: refine to the best fractional lag within a frame of the
  // contacts' period (the contacts choose the peak, the autocorrelation places it).
  const double refined = refine_lag(x, period), r_contacts = lag_correlation(x, period);
  const double r_refined = lag_correlation(x, refined);
  est.period_frames = r_refined >= r_contacts ? refined : period;
  est.period = est.period_frames / rate;
  est.confidence = std::clamp(std::max(r_refined, r_contacts), 0.0, 1.0);
  return est;
}

PeriodEstimate checked_period(const Motion& motion, const MotionChannels& ch, const CycleSettings& s) {
  const double rate = motion.frame_rate;
  const Eigen::MatrixXd x = centred_rows(ch.values, period_rows(ch.basis.skeleton, ch.basis.root_joint, s));
  auto ok = [&](const PeriodEstimate& e) { return e.period_frames > 0 && e.confidence >= s.min_confidence; };
  auto describe = [&](const PeriodEstimate& e, const std::string& why) {
    if (e.period_frames <= 0) return why;
    return fmt::format("{}{} gives {:.3f} s with confidence {:.3f}", e.method == PeriodMethod::contacts ? "foot contacts: " : "",
                       e.method == PeriodMethod::contacts ? fmt::format("{} touch-downs", e.contacts) : "autocorrelation",
                       e.period, e.confidence);
  };
  std::string why_a, why_c;
  PeriodEstimate a, c;
  c.method = PeriodMethod::contacts;
  if (s.period_method != PeriodMethod::contacts) a = autocorrelation_period(x, rate, s, why_a);
  if (s.period_method == PeriodMethod::contacts) {
    c = contact_period(motion, x, s, why_c);  // throws for a skeleton without feet
  } else if (s.period_method == PeriodMethod::automatic) {
    try {
      c = contact_period(motion, x, s, why_c);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::bad_data) throw;
      why_c = "foot contacts: " + e.message();
    }
  }
  if (s.period_method == PeriodMethod::automatic) {
    // Contacts win over a confident autocorrelation only when the two disagree by more than 20 %.
    if (ok(a) && !(ok(c) && std::abs(a.period_frames / c.period_frames - 1) > 0.2)) return a;
    if (ok(c)) return c;
  } else if (ok(s.period_method == PeriodMethod::contacts ? c : a)) {
    return s.period_method == PeriodMethod::contacts ? c : a;
  }
  // No route passed: report the best confidence found and what each route saw.
  const PeriodEstimate& best = c.period_frames > 0 && (a.period_frames <= 0 || c.confidence > a.confidence) ? c : a;
  std::string seen;
  if (s.period_method != PeriodMethod::contacts) seen += describe(a, why_a);
  if (s.period_method != PeriodMethod::autocorrelation) seen += (seen.empty() ? "" : "; ") + describe(c, why_c);
  if (best.period_frames <= 0)
    throw Error(ErrorCode::bad_data, "period",
                fmt::format("no stable period between {} and {} s: confidence 0.000 ({})", s.min_period, s.max_period, seen));
  throw Error(ErrorCode::bad_data, "period",
              fmt::format("no stable period between {} and {} s: confidence {:.3f} is below min_confidence {:.3f} ({})",
                          s.min_period, s.max_period, best.confidence, s.min_confidence, seen));
}

// One cycle as cut: `m` samples from fractional frame `start` over `period` frames (not periodic:
// its end need not meet its start).
Eigen::MatrixXd cut_cycle(const Eigen::MatrixXd& x, double start, double period, int m) {
  const int rows = static_cast<int>(x.rows());
  Eigen::MatrixXd c(rows, m);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < m; ++i) c(r, i) = detail::sample_row(x, r, start + period * i / m);
  return c;
}

// Per channel: how far the cycle from `start` ends from where it began, x(start + period) - x(start).
Eigen::VectorXd cycle_drift(const Eigen::MatrixXd& x, double start, double period) {
  Eigen::VectorXd d(x.rows());
  for (int r = 0; r < static_cast<int>(x.rows()); ++r)
    d[r] = detail::sample_row(x, r, start + period) - detail::sample_row(x, r, start);
  return d;
}

// Largest |entry| among the joint channels.
double joint_max_abs(const Eigen::VectorXd& d) { return d.tail(d.size() - kRootChannels).cwiseAbs().maxCoeff(); }

double joint_distance(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const auto n = a.rows() - kRootChannels;
  return std::sqrt((a.bottomRows(n) - b.bottomRows(n)).squaredNorm() / static_cast<double>(n * a.cols()));
}

Eigen::MatrixXd median_cycle(const std::vector<Eigen::MatrixXd>& cycles) {
  Eigen::MatrixXd med(cycles[0].rows(), cycles[0].cols());
  std::vector<double> v(cycles.size());
  for (Eigen::Index r = 0; r < med.rows(); ++r)
    for (Eigen::Index i = 0; i < med.cols(); ++i) {
      for (size_t k = 0; k < cycles.size(); ++k) v[k] = cycles[k](r, i);
      std::sort(v.begin(), v.end());
      // An even count takes the mean of the two middle values (of two cycles, their mean, not the
      // larger value of each sample).
      const size_t h = v.size() / 2;
      med(r, i) = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
    }
  return med;
}

}  // namespace

PeriodEstimate estimate_period(const Motion& motion, const CycleSettings& settings) {
  settings.validate();
  const MotionChannels ch = motion_channels(motion, settings.angles);
  return checked_period(motion, ch, settings);
}

GaitCycle extract_cycle(const Motion& motion, const CycleSettings& settings) {
  settings.validate();
  const MotionChannels ch = motion_channels(motion, settings.angles);
  const PeriodEstimate est = checked_period(motion, ch, settings);
  const double period = est.period_frames;
  const int n = motion.frame_count, m = settings.samples;
  const double last_start = (n - 1) - period;
  if (last_start < 0)
    throw Error(ErrorCode::bad_data, "cycle", fmt::format("{} frames hold no full cycle of {:.2f} frames", n, period));

  // Cut every full cycle on the grid k * period.
  std::vector<double> starts;
  for (int k = 0; k * period <= last_start + 1e-9; ++k) starts.push_back(k * period);
  std::vector<Eigen::MatrixXd> cycles;
  for (double s : starts) cycles.push_back(cut_cycle(ch.values, s, period, m));

  // Align each cycle to the median cycle: best shift within a quarter period, searched in
  // half-frame steps, then in 1/16-frame steps around the best. Cycles are compared as cut: each
  // cycle's own drift is cycle-to-cycle variation (up to 58 degrees on the shared walks' arms and
  // toes), and bending every cycle by its own ramp distorted the comparison.
  if (cycles.size() > 1) {
    const Eigen::MatrixXd tmpl = median_cycle(cycles);
    const double reach = period / 4;
    for (size_t k = 0; k < cycles.size(); ++k) {
      const double s0 = starts[k];
      double best_d = joint_distance(cycles[k], tmpl), best_s = s0;
      auto try_shift = [&](double s) {
        if (s < 0 || s > last_start || s == best_s) return;
        const double dist = joint_distance(cut_cycle(ch.values, s, period, m), tmpl);
        if (dist < best_d) best_d = dist, best_s = s;
      };
      for (double d = -reach; d <= reach + 1e-9; d += 0.5) try_shift(s0 + d);
      const double coarse = best_s;
      for (double d = -0.5; d <= 0.5 + 1e-9; d += 0.0625) try_shift(coarse + d);
      starts[k] = best_s;
      cycles[k] = cut_cycle(ch.values, best_s, period, m);
    }
  }

  // Drop outliers against the median of the aligned cycles, then average.
  std::vector<bool> keep(cycles.size(), true);
  if (cycles.size() > 2 && settings.outlier_factor > 0) {
    const Eigen::MatrixXd tmpl = median_cycle(cycles);
    std::vector<double> dist(cycles.size());
    for (size_t k = 0; k < cycles.size(); ++k) dist[k] = joint_distance(cycles[k], tmpl);
    std::vector<double> sorted = dist;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    // Cycles within 0.01 rad RMS of the median are never outliers (an exactly periodic input).
    const double limit = settings.outlier_factor * sorted[sorted.size() / 2] + 0.01;
    for (size_t k = 0; k < cycles.size(); ++k) keep[k] = dist[k] <= limit;
  }
  GaitCycle out;
  out.basis = ch.basis;
  for (int j = 0; j < motion.joint_count(); ++j) {
    RotationJump worst{j, 0, kPi / 2};
    for (int f = 1; f < n; ++f) {
      const double a = motion.rotation(f - 1, j).angularDistance(motion.rotation(f, j));
      if (a > worst.angle) worst.frame = f, worst.angle = a;
    }
    if (worst.frame > 0) out.jumps.push_back(worst);
  }
  // Average the cycles as cut, then make the average periodic: its seam is the mean of the kept
  // cycles' drifts (their cycle-to-cycle variation cancels), removed as one linear ramp. The same
  // average as ramping every cycle by its own drift, but the correction it needs, reported, is the
  // mean drift, not the largest single one.
  out.samples = Eigen::MatrixXd::Zero(ch.values.rows(), m);
  Eigen::VectorXd seam = Eigen::VectorXd::Zero(ch.values.rows());
  int used = 0;
  for (size_t k = 0; k < cycles.size(); ++k) {
    if (!keep[k]) continue;
    out.samples += cycles[k];
    const Eigen::VectorXd d = cycle_drift(ch.values, starts[k], period);
    seam += d;
    out.max_cycle_drift = std::max(out.max_cycle_drift, joint_max_abs(d));
    out.starts.push_back(starts[k]);
    ++used;
  }
  out.samples /= used;
  seam /= used;
  for (int i = 0; i < m; ++i) out.samples.col(i) -= seam * (static_cast<double>(i) / m);
  out.max_seam_correction = joint_max_abs(seam);
  out.seam_correction.assign(static_cast<size_t>(motion.joint_count()), 0.0);
  for (int j = 0; j < motion.joint_count(); ++j)
    out.seam_correction[static_cast<size_t>(j)] = seam.segment<3>(joint_channel(j, 0)).norm();
  GaitBasis& b = out.basis;
  b.period = est.period;
  b.confidence = est.confidence;
  b.period_method = est.method;
  b.cycles_found = static_cast<int>(cycles.size());
  b.cycles_used = used;
  out.period_frames = period;

  // Re-centre the log maps on the averaged cycle's own mean rotation (posture lives in the mean).
  if (b.angles == AngleMode::log_map) {
    std::vector<Quat> qs(m);
    for (int j = 0; j < b.skeleton.joint_count(); ++j) {
      for (int i = 0; i < m; ++i) qs[i] = joint_rotation(b, j, out.samples.block<3, 1>(joint_channel(j, 0), i));
      const Quat mean = detail::mean_rotation(qs);
      b.mean_rotations[j] = mean;
      for (int i = 0; i < m; ++i) out.samples.block<3, 1>(joint_channel(j, 0), i) = quat_log(mean.conjugate() * qs[i]);
    }
  }
  return out;
}

}  // namespace koma::gait
