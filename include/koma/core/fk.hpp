// Forward kinematics: world (model-space) positions and rotations of every joint and end site.
#pragma once

#include <span>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma {

/// World transforms of a whole motion. Points are the joints (0 .. J-1) followed by the end sites
/// (J .. J+E-1), as Skeleton::point_name() names them. Layout [frames x points] and
/// [frames x joints]. Positions in metres; an end site's rotation is its parent joint's.
struct WorldPoses {
  int frame_count = 0;
  int point_count = 0;
  int joint_count = 0;
  std::vector<Vec3> positions;  ///< frame_count * point_count world positions.
  std::vector<Quat> rotations;  ///< frame_count * joint_count world rotations.

  const Vec3& position(int f, int p) const { return positions[static_cast<size_t>(f) * point_count + p]; }
  std::span<const Vec3> frame_positions(int f) const {
    return {positions.data() + static_cast<size_t>(f) * point_count, static_cast<size_t>(point_count)};
  }
};

/// World poses of every frame. Lossless. One forward loop per frame (parents precede children).
WorldPoses forward_kinematics(const Motion& motion);

/// Allocation-free form for one frame of local transforms: writes point_count() world positions
/// and joint_count() world rotations. `scales` may be empty; when given, each joint's scale scales
/// the offsets of everything below it (glTF's world = parent * T * R * S, as every glTF viewer
/// shows a squash-and-stretch output), and world rotations stay the rotation chain alone. Throws
/// nothing; sizes are asserted.
void forward_kinematics(const Skeleton& skeleton, std::span<const Quat> local_rotations,
                        std::span<const Vec3> local_translations, std::span<const Vec3> scales,
                        std::span<Vec3> world_positions, std::span<Quat> world_rotations);

}  // namespace koma
