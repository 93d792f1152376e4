// Posing a character: world transforms with scale, skinning matrices, held motions, and the
// choice between the file's mesh and the mannequin.
#include <fmt/format.h>

#include <Eigen/Geometry>
#include <algorithm>

#include "koma/core/error.hpp"
#include "koma/io/gltf.hpp"
#include "koma/toon/character.hpp"

namespace koma::toon {

void joint_transforms(const Motion& motion, int frame, std::span<Eigen::Matrix4d> out) {
  const int n = motion.joint_count();
  KOMA_ASSERT(static_cast<int>(out.size()) == n && frame >= 0 && frame < motion.frame_count);
  const auto rot = motion.frame_rotations(frame);
  const auto tra = motion.frame_translations(frame);
  const bool scaled = !motion.scales.empty();
  for (int j = 0; j < n; ++j) {
    Eigen::Matrix4d local = Eigen::Matrix4d::Identity();
    Eigen::Matrix3d r = rot[static_cast<size_t>(j)].toRotationMatrix();
    if (scaled) r = r * motion.scales[static_cast<size_t>(frame) * n + j].asDiagonal();
    local.topLeftCorner<3, 3>() = r;
    local.topRightCorner<3, 1>() = tra[static_cast<size_t>(j)];
    const int p = motion.skeleton.parents[static_cast<size_t>(j)];
    out[static_cast<size_t>(j)] = p < 0 ? local : Eigen::Matrix4d(out[static_cast<size_t>(p)] * local);
  }
}

void bone_matrices(const io::CharacterMesh& mesh, std::span<const Eigen::Matrix4d> joints, std::span<float> out) {
  KOMA_ASSERT(out.size() == mesh.bones.size() * 16);
  for (size_t b = 0; b < mesh.bones.size(); ++b) {
    const auto& bone = mesh.bones[b];
    KOMA_ASSERT(bone.joint >= 0 && static_cast<size_t>(bone.joint) < joints.size());
    const Eigen::Matrix4f m = (joints[static_cast<size_t>(bone.joint)] * bone.inverse_bind).cast<float>();
    std::copy(m.data(), m.data() + 16, out.begin() + static_cast<std::ptrdiff_t>(b * 16));
  }
}

Motion held_motion(const Motion& motion, std::span<const int> joint_layer,
                   const std::vector<std::vector<int>>& layer_keys) {
  const int n = motion.joint_count();
  if (static_cast<int>(joint_layer.size()) != n)
    throw Error(ErrorCode::mismatch, "held motion",
                fmt::format("{} joint layers for {} joints", joint_layer.size(), n));
  // Per layer and frame, the key frame shown.
  std::vector<std::vector<int>> shown(layer_keys.size(), std::vector<int>(static_cast<size_t>(motion.frame_count)));
  for (size_t l = 0; l < layer_keys.size(); ++l) {
    const auto& keys = layer_keys[l];
    if (keys.empty() || keys.front() != 0)
      throw Error(ErrorCode::mismatch, fmt::format("layer {}", l), "its keys must start at frame 0");
    for (size_t k = 1; k < keys.size(); ++k)
      if (keys[k] <= keys[k - 1] || keys[k] >= motion.frame_count)
        throw Error(ErrorCode::mismatch, fmt::format("layer {}", l),
                    fmt::format("key {} ({}) must increase and stay below {} frames", k, keys[k], motion.frame_count));
    size_t k = 0;
    for (int f = 0; f < motion.frame_count; ++f) {
      while (k + 1 < keys.size() && keys[k + 1] <= f) ++k;
      shown[l][static_cast<size_t>(f)] = keys[k];
    }
  }
  for (int l : joint_layer)
    if (l < 0 || l >= static_cast<int>(layer_keys.size()))
      throw Error(ErrorCode::mismatch, "held motion", fmt::format("layer {} does not exist", l));
  Motion out = motion;
  for (int f = 0; f < motion.frame_count; ++f)
    for (int j = 0; j < n; ++j) {
      const int src = shown[static_cast<size_t>(joint_layer[static_cast<size_t>(j)])][static_cast<size_t>(f)];
      const size_t to = static_cast<size_t>(f) * n + j, from = static_cast<size_t>(src) * n + j;
      out.rotations[to] = motion.rotations[from];
      out.translations[to] = motion.translations[from];
      if (!motion.scales.empty()) out.scales[to] = motion.scales[from];
    }
  return out;
}

ToonCharacter make_character(const Motion& motion, const std::shared_ptr<const io::GltfScene>& scene,
                             const std::string& file, const MannequinSettings& mannequin) {
  ToonCharacter c;
  if (scene) {
    io::CharacterMeshResult r = io::character_mesh(*scene, motion.joint_count(), file);
    c.warnings = std::move(r.warnings);
    if (r.mesh.triangle_count() == 0) {
      c.warnings.push_back(fmt::format("{}: the character has no triangles; drawing a generated body", file));
    } else if (!r.weighted) {
      c.warnings.push_back(
          fmt::format("{}: the character has bones but no vertex weights; drawing a generated body", file));
    } else {
      c.mesh = std::move(r.mesh);
      return c;
    }
  }
  c.mesh = make_mannequin(motion, mannequin);
  c.generated = true;
  return c;
}

}  // namespace koma::toon
