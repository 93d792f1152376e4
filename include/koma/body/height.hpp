// A figure's standing height from its bones, for unit detection and `koma info`: the leg bones
// (hip -> knee -> ankle) are in every humanoid rig and their length does not depend on the pose,
// on the head's end site (often zero) or on a dummy root.
#pragma once

#include <string>

#include "koma/core/motion.hpp"

namespace koma::body {

/// Thigh + shank (hip joint to ankle joint) as a fraction of standing height: Winter's
/// anthropometric segment table puts the hip joint at 0.530 H, the knee at 0.285 H and the ankle at
/// 0.039 H (D. A. Winter, Biomechanics and Motor Control of Human Movement, 4th ed., 2009, fig. 4.1).
inline constexpr double kLegFractionOfHeight = 0.530 - 0.039;

/// A height estimate and how it was made.
struct HeightEstimate {
  double height = 0;       ///< In the motion's length unit (file units before conversion).
  bool from_legs = false;  ///< true: from the leg bones; false: figure_size() (no legs found)
  std::string rule;        ///< "leg bones 82.2 units / 0.491" or "figure size (no legs found)"
};

/// The standing height: (thigh + shank) / kLegFractionOfHeight, with thigh and shank the rest
/// distances hip -> knee and knee -> ankle of the joints find_joint_roles() names, the mean of the
/// legs found. Without a leg (a creature, a prop, a partial rig): core's figure_size(), the median
/// largest side of the posed bounding box. Pure; throws nothing but allocation failures.
HeightEstimate estimate_height(const Motion& motion);

}  // namespace koma::body
