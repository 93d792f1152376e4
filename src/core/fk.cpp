#include "koma/core/fk.hpp"

#include <vector>

#include "koma/core/error.hpp"

namespace koma {

namespace {

// With scales, glTF's node semantics (world = parent_world * T * R * S): a joint's scale scales the
// offsets of everything below it, so positions match what Blender, three.js and every other glTF
// viewer show for a squash-and-stretch output. World rotations stay the rotation chain alone.
void forward_kinematics_scaled(const Skeleton& skeleton, std::span<const Quat> local_rotations,
                               std::span<const Vec3> local_translations, std::span<const Vec3> scales,
                               std::span<Vec3> world_positions, std::span<Quat> world_rotations) {
  const int joints = skeleton.joint_count();
  std::vector<Eigen::Matrix3d> linear(static_cast<size_t>(joints));
  for (int j = 0; j < joints; ++j) {
    const int p = skeleton.parents[j];
    const Eigen::Matrix3d local = local_rotations[j].toRotationMatrix() * scales[j].asDiagonal();
    if (p < 0) {
      world_rotations[j] = local_rotations[j];
      world_positions[j] = local_translations[j];
      linear[j] = local;
    } else {
      world_rotations[j] = world_rotations[p] * local_rotations[j];
      world_positions[j] = world_positions[p] + linear[p] * local_translations[j];
      linear[j] = linear[p] * local;
    }
  }
  for (int e = 0; e < skeleton.end_site_count(); ++e) {
    const EndSite& site = skeleton.end_sites[e];
    world_positions[joints + e] = world_positions[site.parent] + linear[site.parent] * site.offset;
  }
}

}  // namespace

void forward_kinematics(const Skeleton& skeleton, std::span<const Quat> local_rotations,
                        std::span<const Vec3> local_translations, std::span<const Vec3> scales,
                        std::span<Vec3> world_positions, std::span<Quat> world_rotations) {
  const int joints = skeleton.joint_count();
  KOMA_ASSERT(static_cast<int>(local_rotations.size()) == joints);
  KOMA_ASSERT(static_cast<int>(local_translations.size()) == joints);
  KOMA_ASSERT(scales.empty() || static_cast<int>(scales.size()) == joints);
  KOMA_ASSERT(static_cast<int>(world_positions.size()) >= skeleton.point_count());
  KOMA_ASSERT(static_cast<int>(world_rotations.size()) >= joints);
  if (!scales.empty()) {
    forward_kinematics_scaled(skeleton, local_rotations, local_translations, scales, world_positions, world_rotations);
    return;
  }
  for (int j = 0; j < joints; ++j) {
    const int p = skeleton.parents[j];
    if (p < 0) {
      world_rotations[j] = local_rotations[j];
      world_positions[j] = local_translations[j];
    } else {
      world_rotations[j] = world_rotations[p] * local_rotations[j];
      world_positions[j] = world_positions[p] + world_rotations[p] * local_translations[j];
    }
  }
  for (int e = 0; e < skeleton.end_site_count(); ++e) {
    const EndSite& site = skeleton.end_sites[e];
    world_positions[joints + e] = world_positions[site.parent] + world_rotations[site.parent] * site.offset;
  }
}

WorldPoses forward_kinematics(const Motion& motion) {
  WorldPoses out;
  out.frame_count = motion.frame_count;
  out.point_count = motion.skeleton.point_count();
  out.joint_count = motion.joint_count();
  out.positions.resize(static_cast<size_t>(out.frame_count) * out.point_count);
  out.rotations.resize(static_cast<size_t>(out.frame_count) * out.joint_count);
  for (int f = 0; f < motion.frame_count; ++f) {
    std::span<const Vec3> scales;
    if (!motion.scales.empty()) {
      scales = {motion.scales.data() + static_cast<size_t>(f) * out.joint_count, static_cast<size_t>(out.joint_count)};
    }
    forward_kinematics(motion.skeleton, motion.frame_rotations(f), motion.frame_translations(f), scales,
                       {out.positions.data() + static_cast<size_t>(f) * out.point_count, static_cast<size_t>(out.point_count)},
                       {out.rotations.data() + static_cast<size_t>(f) * out.joint_count, static_cast<size_t>(out.joint_count)});
  }
  return out;
}

}  // namespace koma
