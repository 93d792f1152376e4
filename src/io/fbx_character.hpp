// Private to src/io (assimp stays out of every public header): the skinned character of an FBX
// file as the glTF document the writer puts a new animation onto (io::GltfScene).
#pragma once

#include <assimp/scene.h>

#include <memory>
#include <string>
#include <vector>

#include "gltf_scene.hpp"
#include "koma/core/skeleton.hpp"

namespace koma::io::fbx_detail {

/// An assimp matrix (row-major a1..d4) as Eigen's.
inline Eigen::Matrix4d to_eigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d e;
  e << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3, m.d4;
  return e;
}

/// The meshes of `scene` skinned to (or parented under) the skeleton's joints, as a glTF document:
/// the joints as nodes (named and ordered as `skeleton`, joint j = node j), end sites as leaf
/// nodes, one mesh node whose primitives are the FBX meshes (positions and normals in koma's Y-up
/// metres through `file_to_koma`, UV set 0, the four largest weights per vertex, each material's
/// base colour), and one skin whose inverse bind matrices are the bones' FBX bind poses in koma's
/// frame. `joints` are the skeleton's nodes (joint j = joints[j]). Null when no mesh belongs to
/// the skeleton. Meshes that neither deform with the skeleton nor hang below one of its joints
/// are left out with a warning naming them; a file's textures are not carried (base colours are).
std::shared_ptr<const GltfScene> fbx_character(const aiScene& scene, const std::vector<const aiNode*>& joints,
                                               const Skeleton& skeleton, const Eigen::Matrix4d& file_to_koma,
                                               std::vector<std::string>& warnings, const std::string& file);

}  // namespace koma::io::fbx_detail
