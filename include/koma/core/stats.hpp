// Summary numbers of a motion, as `koma info` shows them.
#pragma once

#include <cmath>
#include <vector>

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
  double rest_height = 0;  ///< rest-pose height (highest minus lowest point, offsets as declared)
  double height = 0;       ///< the figure's size as it moves: figure_size() (metres)
  int path_joint = 0;      ///< the joint whose path root_travel measures: path_joint()
  Vec3 box_min = Vec3::Zero();  ///< bounding box of every point over every frame
  Vec3 box_max = Vec3::Zero();
  double root_travel = 0;  ///< length of path_joint's path over the take
};

/// Computes the stats (one forward-kinematics pass).
MotionStats motion_stats(const Motion& motion);

/// The size of the figure as it moves, in the motion's length unit: the median, over up to 64
/// evenly spaced frames, of the largest side of the bounding box of every point (joints and end
/// sites) but the root joint. Pose-robust: a standing, walking or T-posed human measures about
/// their height (arm span ~ height), and a first frame that crouches or lies does not decide it.
/// The root is left out because some exporters (Bandai-Namco) keep a dummy root on the floor at
/// the origin while the hips carry the translation metres away. A 1-point skeleton measures 0.
double figure_size(const Motion& motion);

/// The joint whose path is the character's path: the root, unless the root is a dummy (its
/// rotation and translation never change over the take) with exactly one child joint; then that
/// child, and so on down (Bandai-Namco's `joint_Root` at the origin -> `Hips`).
int path_joint(const Motion& motion);

/// The q-quantile (q in [0, 1]) of `values`, interpolated linearly between order statistics (as
/// numpy's default): robust ends of a distribution (5th / 95th percentile) instead of min / max,
/// which one glitch decides. `values` must be non-empty; it is taken by value and reordered.
double quantile(std::vector<double> values, double q);

}  // namespace koma
