// Summary numbers of a motion, as `koma info` shows them.
#pragma once

#include <cmath>

#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"

namespace koma {

/// What a user wants to know about a motion at a glance. Lengths in metres.
struct MotionStats {
  int joints = 0;
  int end_sites = 0;
  int channels = 0;
  int frames = 0;
  double frame_rate = 0;
  double duration = 0;     ///< seconds, (frames - 1) / rate
  double rest_height = 0;  ///< rest-pose height (highest minus lowest point)
  Vec3 box_min = Vec3::Zero();  ///< bounding box of every point over every frame
  Vec3 box_max = Vec3::Zero();
  double root_travel = 0;  ///< length of the root's path
};

/// Computes the stats (one forward-kinematics pass).
MotionStats motion_stats(const Motion& motion);

}  // namespace koma
