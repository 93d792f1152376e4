// The cartoon filter's bound and segments (see bound.hpp and docs/cartoon.md).
#include "bound.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "koma/body/contacts.hpp"
#include "koma/core/rotation.hpp"

namespace koma::cartoon {

namespace {

// A cut extends over the steps next to it that are faster than this share of cut_speed (the
// blend of a few frames that some exporters put between a T-pose and the motion).
constexpr double kCutRelease = 1.0 / 3.0;
// The ratio test looks this far on either side of a step, seconds.
constexpr double kCutNeighbourhood = 0.05;
// ... and applies to steps at least this fast, body sizes per second.
constexpr double kCutRatioFloor = 2.0;

}  // namespace

std::vector<Segment> find_segments(const Motion& motion, const WorldPoses& poses, const CartoonSettings& settings) {
  const int n = motion.frame_count, pn = poses.point_count;
  if (n < 2 || !(settings.cut_speed > 0) || pn == 0) return {{0, std::max(n, 0)}};
  const double per_second = motion.frame_rate / body::body_size(motion.skeleton);
  // step[f]: the fastest point between frames f and f + 1, body sizes per second.
  std::vector<double> step(static_cast<size_t>(n - 1), 0.0);
  for (int f = 0; f + 1 < n; ++f) {
    for (int p = 0; p < pn; ++p) {
      step[f] = std::max(step[f], (poses.position(f + 1, p) - poses.position(f, p)).norm() * per_second);
    }
  }
  const int k = std::max(1, static_cast<int>(std::lround(kCutNeighbourhood * motion.frame_rate)));
  std::vector<std::uint8_t> cut(step.size(), 0);
  for (int f = 0; f + 1 < n; ++f) {
    double around = 0;
    for (int g = std::max(0, f - k); g <= std::min(n - 2, f + k); ++g) {
      if (g != f) around = std::max(around, step[g]);
    }
    cut[f] = step[f] > settings.cut_speed || (step[f] > kCutRatioFloor && step[f] > settings.cut_ratio * around);
  }
  // Hysteresis: a cut takes in the fast steps next to it.
  const double release = kCutRelease * settings.cut_speed;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i + 1 < n; ++i) {
      const int f = pass == 0 ? i : n - 2 - i;
      const int prev = pass == 0 ? f - 1 : f + 1;
      if (!cut[f] && prev >= 0 && prev + 1 < n && cut[prev] && step[f] > release) cut[f] = 1;
    }
  }
  std::vector<Segment> segments;
  int begin = 0;
  for (int f = 0; f + 1 < n; ++f) {
    if (!cut[f]) continue;
    segments.push_back({begin, f + 1});
    begin = f + 1;
  }
  segments.push_back({begin, n});
  return segments;
}

namespace detail {

namespace {

// The joint's own ellipsoid of motion (see bound_added).
struct RangeEllipsoid {
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();  // columns a_i
  Vec3 half = Vec3::Zero();      // e_i
  double along(const Vec3& u) const { return (axes.transpose() * u).cwiseProduct(half).norm(); }
};

RangeEllipsoid ellipsoid_of(const std::vector<Vec3>& cloud) {
  const int n = static_cast<int>(cloud.size());
  Vec3 centre = Vec3::Zero();
  for (const Vec3& x : cloud) centre += x / n;
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (const Vec3& x : cloud) cov += (x - centre) * (x - centre).transpose();
  RangeEllipsoid e;
  e.axes = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(cov).eigenvectors();
  for (const Vec3& x : cloud) e.half = e.half.cwiseMax((e.axes.transpose() * (x - centre)).cwiseAbs());
  return e;
}

// The range cloud of a rotation track: the log maps r about the mean, re-expressed as twist about
// their principal axis a (unwrapped in time, so a joint that turns round and round has the twist
// range it turned through) plus the swing off it (which never wraps). For a joint that does not
// turn far this is r itself to first order; for a turning hips it keeps the tilt range small,
// where the log map of a large turn would smear a small tilt over the whole turn.
std::vector<Vec3> rotation_cloud(std::span<const double> logmap, int n) {
  std::vector<Vec3> r(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) r[f] = Vec3(logmap[f * 3], logmap[f * 3 + 1], logmap[f * 3 + 2]);
  const Vec3 axis = ellipsoid_of(r).axes.col(2);  // eigenvalues ascending: the largest last
  std::vector<Vec3> cloud(static_cast<size_t>(n));
  double prev = 0;
  for (int f = 0; f < n; ++f) {
    const Quat q = quat_exp(r[f]);
    const double along = q.vec().dot(axis);
    double twist = 2.0 * std::atan2(along, q.w());
    if (f > 0) twist += 2.0 * kPi * std::round((prev - twist) / (2.0 * kPi));
    prev = twist;
    const Quat swing = q * quat_exp(-twist * axis);
    cloud[f] = twist * axis + quat_log(swing);
  }
  return cloud;
}

}  // namespace

void bound_added(std::span<const double> logmap, std::span<Vec3> added, double share, double sigma, int offset,
                 JointBound& report, bool rotation) {
  const int n = static_cast<int>(added.size());
  std::vector<Vec3> cloud;
  if (rotation) {
    cloud = rotation_cloud(logmap, n);
  } else {
    for (int f = 0; f < n; ++f) cloud.emplace_back(logmap[f * 3], logmap[f * 3 + 1], logmap[f * 3 + 2]);
  }
  const RangeEllipsoid ellipsoid = ellipsoid_of(cloud);
  std::vector<double> gain(static_cast<size_t>(n), 1.0);
  double worst = 0;  // largest |added| / limit
  int worst_frame = 0;
  double worst_range = 0;
  for (int f = 0; f < n; ++f) {
    const double size = added[f].norm();
    if (!(size > 0)) continue;
    // The added rotation seen from the mean frame: exp(r) exp(added) = exp(R(exp r) added) exp(r).
    const Vec3 r(logmap[f * 3], logmap[f * 3 + 1], logmap[f * 3 + 2]);
    const Vec3 u = added[f] / size;
    const double range = ellipsoid.along(rotation ? Vec3(quat_exp(r) * u) : u);
    const double limit = share * range;
    const double ratio = limit > 0 ? size / limit : 1e300;
    if (ratio > worst) {
      worst = ratio;
      worst_frame = f;
      worst_range = range;
    }
    if (ratio > 1) gain[f] = 1 / ratio;
  }
  if (!(worst > 1)) return;
  // Min filter, then a box of the same radius: every box average includes only minima over
  // windows that contain the frame itself, so the smoothed gain never exceeds the frame's own.
  const int rad = std::max(1, static_cast<int>(std::lround(sigma)));
  std::vector<double> low(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) {
    low[f] = *std::min_element(gain.begin() + std::max(0, f - rad), gain.begin() + std::min(n, f + rad + 1));
  }
  for (int f = 0; f < n; ++f) {
    const int a = std::max(0, f - rad), b = std::min(n - 1, f + rad);
    double sum = 0;
    for (int g = a; g <= b; ++g) sum += low[g];
    const double smooth = std::min(sum / (b - a + 1), gain[f]);
    added[f] *= smooth;
    // The frames where the bound reduced the effect (by more than rounding).
    if (!(smooth < 1.0 - 1e-9)) continue;
    if (!report.frames.empty() && report.frames.back().end == offset + f) ++report.frames.back().end;
    else report.frames.push_back({offset + f, offset + f + 1});
  }
  const double old_ratio = report.bound > 0 ? report.requested / report.bound : (report.requested > 0 ? 1e300 : 0);
  if (worst > old_ratio) {
    report.range = worst_range;
    report.bound = share * worst_range;
    report.requested = worst * share * worst_range;
    report.requested_frame = offset + worst_frame;
  }
}

BoundReport bound_report(const JointBound& bound, int joint, bool translation) {
  BoundReport r;
  r.joint = joint;
  r.translation = translation;
  r.frames = bound.frames;
  r.range = bound.range;
  r.bound = bound.bound;
  r.requested = bound.requested;
  r.requested_frame = bound.requested_frame;
  return r;
}

}  // namespace detail

}  // namespace koma::cartoon
