#include "koma/core/stats.hpp"

namespace koma {

MotionStats motion_stats(const Motion& motion) {
  MotionStats s;
  s.joints = motion.joint_count();
  s.end_sites = motion.skeleton.end_site_count();
  s.channels = motion.skeleton.channel_count();
  s.frames = motion.frame_count;
  s.frame_rate = motion.frame_rate;
  s.duration = motion.duration();
  s.rest_height = motion.skeleton.rest_height();
  const WorldPoses poses = forward_kinematics(motion);
  s.box_min = Vec3::Constant(INFINITY);
  s.box_max = Vec3::Constant(-INFINITY);
  for (const Vec3& p : poses.positions) {
    s.box_min = s.box_min.cwiseMin(p);
    s.box_max = s.box_max.cwiseMax(p);
  }
  for (int f = 1; f < motion.frame_count; ++f) {
    s.root_travel += (poses.position(f, 0) - poses.position(f - 1, 0)).norm();
  }
  return s;
}

}  // namespace koma
