#include "koma/io/motion_file.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "koma/core/error.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"

namespace koma::io {

namespace {
std::string extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}
}  // namespace

bool is_motion_file(const std::filesystem::path& path) {
  return extension(path) == ".bvh" || is_gltf_file(path) || is_fbx_file(path);
}

ReadResult read_motion(const std::filesystem::path& path, const ReadOptions& options) {
  const std::string ext = extension(path);
  if (ext == ".bvh") return read_bvh(path, BvhReadOptions{options.unit, options.scale});
  if (is_gltf_file(path)) return read_gltf(path, GltfReadOptions{options.animation, options.frame_rate, options.asset_root});
  if (is_fbx_file(path)) return read_fbx(path, FbxReadOptions{options.animation, options.frame_rate});
  throw Error(ErrorCode::bad_file, path.string(),
              fmt::format("cannot read '{}' files; koma reads .bvh, .gltf, .glb, .fbx", ext.empty() ? "extension-less" : ext));
}

void write_motion(const std::filesystem::path& path, const Motion& motion, const WriteOptions& options) {
  const std::string ext = extension(path);
  if (ext == ".bvh") return write_bvh(path, motion, BvhWriteOptions{options.unit});
  if (is_gltf_file(path)) return write_gltf(path, motion, GltfWriteOptions{options.step_keys, options.gltf_scene, options.animation_name});
  if (is_fbx_file(path))
    return write_fbx(path, motion,
                     FbxWriteOptions{options.step_keys, options.gltf_scene, options.animation_name, options.fbx_ascii,
                                     options.fbx_unit, options.fbx_up});
  throw Error(ErrorCode::bad_file, path.string(),
              fmt::format("cannot write '{}' files; koma writes .bvh, .gltf, .glb, .fbx", ext.empty() ? "extension-less" : ext));
}

}  // namespace koma::io
