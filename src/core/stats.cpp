#include "koma/core/stats.hpp"

#include <algorithm>
#include <vector>

namespace koma {

namespace {

// True if joint j's local rotation and translation are the same on every frame.
bool is_static(const Motion& m, int j) {
  const Quat& q0 = m.rotation(0, j);
  const Vec3& t0 = m.translation(0, j);
  for (int f = 1; f < m.frame_count; ++f) {
    if (m.rotation(f, j).coeffs() != q0.coeffs() || m.translation(f, j) != t0) return false;
  }
  return true;
}

}  // namespace

int path_joint(const Motion& motion) {
  const Skeleton& sk = motion.skeleton;
  int j = 0;
  while (j < sk.joint_count() && is_static(motion, j)) {
    int only_child = -1, children = 0;
    for (int c = j + 1; c < sk.joint_count(); ++c) {
      if (sk.parents[c] == j) {
        ++children;
        only_child = c;
      }
    }
    if (children != 1) break;
    j = only_child;
  }
  return j;
}

double figure_size(const Motion& motion) {
  const Skeleton& sk = motion.skeleton;
  const int points = sk.point_count();
  if (points < 2 || motion.frame_count < 1) return 0.0;
  const int samples = std::min(motion.frame_count, 64);
  std::vector<Vec3> pos(static_cast<size_t>(points));
  std::vector<Quat> rot(static_cast<size_t>(sk.joint_count()));
  std::vector<double> sizes;
  sizes.reserve(static_cast<size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    const int f = samples > 1 ? static_cast<int>(static_cast<long long>(s) * (motion.frame_count - 1) / (samples - 1)) : 0;
    forward_kinematics(sk, motion.frame_rotations(f), motion.frame_translations(f), {}, pos, rot);
    Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
    for (int p = 1; p < points; ++p) {
      lo = lo.cwiseMin(pos[static_cast<size_t>(p)]);
      hi = hi.cwiseMax(pos[static_cast<size_t>(p)]);
    }
    sizes.push_back((hi - lo).maxCoeff());
  }
  auto mid = sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() / 2);
  std::nth_element(sizes.begin(), mid, sizes.end());
  return *mid;
}

MotionStats motion_stats(const Motion& motion) {
  MotionStats s;
  s.joints = motion.joint_count();
  s.end_sites = motion.skeleton.end_site_count();
  s.channels = motion.skeleton.channel_count();
  s.frames = motion.frame_count;
  s.frame_rate = motion.frame_rate;
  s.duration = motion.duration();
  s.rest_height = motion.skeleton.rest_height();
  s.height = figure_size(motion);
  s.path_joint = path_joint(motion);
  const WorldPoses poses = forward_kinematics(motion);
  s.box_min = Vec3::Constant(INFINITY);
  s.box_max = Vec3::Constant(-INFINITY);
  for (const Vec3& p : poses.positions) {
    s.box_min = s.box_min.cwiseMin(p);
    s.box_max = s.box_max.cwiseMax(p);
  }
  for (int f = 1; f < motion.frame_count; ++f) {
    s.root_travel += (poses.position(f, s.path_joint) - poses.position(f - 1, s.path_joint)).norm();
  }
  return s;
}

double quantile(std::vector<double> values, double q) {
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::ptrdiff_t>(pos);
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double a = values[static_cast<size_t>(lo)];
  if (static_cast<size_t>(lo) + 1 >= values.size()) return a;
  const double b = *std::min_element(values.begin() + lo + 1, values.end());  // the next order statistic
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

}  // namespace koma
