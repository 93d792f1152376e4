// Test-only glTF checker, written independently of src/io (nlohmann-json + Eigen, no tinygltf):
// loads .gltf/.glb with .bin or data: URIs, validates the structure, and evaluates node world
// transforms at any time, so koma's reader and writer are checked against a second implementation.
#pragma once

#include <Eigen/Geometry>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace koma::test {

struct GltfDoc {
  nlohmann::json json;
  std::vector<std::vector<unsigned char>> buffers;

  /// Accessor `i` as doubles (count x components); float / normalised integer components.
  std::vector<double> accessor(int i) const;
  int count(int i) const { return json["accessors"][i]["count"].get<int>(); }
  /// Local matrix of node `n` with the animated paths of animation `anim` sampled at time t
  /// (anim < 0: rest). LINEAR slerp/lerp, STEP, CUBICSPLINE.
  Eigen::Matrix4d local(int n, int anim, double t) const;
  /// World matrix of node `n` (walking parents up to the scene root).
  Eigen::Matrix4d world(int n, int anim, double t) const;
  int parent(int n) const;
};

/// Loads a document; throws std::runtime_error on malformed containers.
GltfDoc load_gltf(const std::filesystem::path& path);

/// Structural problems of a document (empty = valid): buffer lengths vs. data, bufferView ranges,
/// accessor ranges, min/max present and exact on animation input accessors, increasing key
/// times, sampler output counts, node/sampler/accessor indices, skin inverse bind matrix counts.
std::vector<std::string> validate_gltf(const GltfDoc& doc);

}  // namespace koma::test
