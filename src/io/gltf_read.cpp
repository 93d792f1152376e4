// glTF 2.0 reader: one skin + one animation -> dense Motion (see koma/io/gltf.hpp).
#include <fmt/format.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <set>

#include "asset_files.hpp"
#include "gltf_scene.hpp"
#include "isolated_read.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/checked.hpp"
#include "koma/core/error.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/core/quat_sign.hpp"
#include "koma/core/text.hpp"
#include "koma/io/gltf.hpp"

namespace koma::io {

namespace gltf_detail {

Trs node_trs(const tinygltf::Node& node) {
  Trs trs;
  if (node.matrix.size() == 16) {
    Eigen::Matrix4d m;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) m(r, c) = node.matrix[static_cast<size_t>(c * 4 + r)];
    trs.translation = m.block<3, 1>(0, 3);
    Eigen::Matrix3d rs = m.block<3, 3>(0, 0);
    for (int c = 0; c < 3; ++c) trs.scale[c] = rs.col(c).norm();
    if (rs.determinant() < 0) trs.scale.x() = -trs.scale.x();
    Eigen::Matrix3d r = rs;
    for (int c = 0; c < 3; ++c) r.col(c) /= (trs.scale[c] != 0.0 ? trs.scale[c] : 1.0);
    // Closest rotation (polar decomposition) in case of rounding or shear.
    Eigen::JacobiSVD<Eigen::Matrix3d> svd(r, Eigen::ComputeFullU | Eigen::ComputeFullV);
    trs.rotation = Quat(Eigen::Matrix3d(svd.matrixU() * svd.matrixV().transpose())).normalized();
    return trs;
  }
  if (node.translation.size() == 3)
    trs.translation = Vec3(node.translation[0], node.translation[1], node.translation[2]);
  if (node.rotation.size() == 4) {
    trs.rotation = Quat(node.rotation[3], node.rotation[0], node.rotation[1], node.rotation[2]);
    if (trs.rotation.norm() > 1e-12)
      trs.rotation.normalize();
    else
      trs.rotation = Quat::Identity();
  }
  if (node.scale.size() == 3) trs.scale = Vec3(node.scale[0], node.scale[1], node.scale[2]);
  return trs;
}

}  // namespace gltf_detail

namespace {

using gltf_detail::Trs;

// What messages call the parsers the child process runs.
constexpr std::string_view kParser = "tinygltf (the glTF parser)";

// Largest external buffer or image file an asset may name (glTF's own limit on a GLB is 4 GiB).
constexpr std::uint64_t kMaxExternalBytes = std::uint64_t{1} << 31;

std::string lower_ext(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// What tinygltf's callbacks need while one asset loads: where its files may come from, the first
// refusal (a URI outside the folder), rethrown once tinygltf returns (its own message would only
// say "not found"), and the images that do not decode (left out, with a warning).
struct LoadContext {
  asset_detail::AssetFolder folder;
  std::string prefix;                 // folder.dir + "/": the candidates tinygltf builds from a URI
  std::exception_ptr refusal;         // the first refusal (Error(bad_file)) a callback caught
  std::exception_ptr missing;         // the first URI that names no file (Error(io))
  std::map<int, std::string> undecodable;  // image index -> why it does not decode (check_image)
  std::map<std::string, std::filesystem::path> resolved;  // candidate -> checked file
  std::uint64_t max_bytes = 0;        // largest external file accepted
};

// tinygltf tries "<dir>/<uri>", then "./<uri>" (the working directory): only the first is an
// asset file; the second is never looked at.
bool confined_exists(const std::string& candidate, void* user) {
  auto* ctx = static_cast<LoadContext*>(user);
  if (candidate.rfind(ctx->prefix, 0) != 0) return false;
  const std::string uri = candidate.substr(ctx->prefix.size());
  try {
    ctx->resolved[candidate] = asset_detail::resolve_uri(ctx->folder, uri);
    return true;
  } catch (const Error& e) {
    // A file that is not there is an error for a buffer and a warning for an image (tinygltf's
    // choice, kept); a refused URI is always an error.
    std::exception_ptr& slot = e.code() == ErrorCode::io ? ctx->missing : ctx->refusal;
    if (!slot) slot = std::current_exception();
    return false;
  }
}

std::string no_expansion(const std::string& path, void*) { return path; }

bool confined_read(std::vector<unsigned char>* out, std::string* err, const std::string& candidate, void* user) {
  auto* ctx = static_cast<LoadContext*>(user);
  try {
    const auto it = ctx->resolved.find(candidate);
    if (it == ctx->resolved.end()) return false;  // never reached: tinygltf asks confined_exists first
    const std::string bytes =
        asset_detail::read_confined(it->second, ctx->folder, candidate.substr(ctx->prefix.size()), ctx->max_bytes);
    out->assign(bytes.begin(), bytes.end());
    return true;
  } catch (const Error& e) {
    if (!ctx->refusal) ctx->refusal = std::current_exception();
    if (err) *err += e.what();
    return false;
  }
}

bool no_write(std::string*, const std::string&, const std::vector<unsigned char>&, void*) { return false; }

// Every image is checked (a PNG or JPEG that decodes, within kMaxImagePixels) before koma keeps
// its encoded bytes to carry into an output; koma never uses the pixels. One that does not decode
// is noted, keeps no bytes, and is left out of the model once it has loaded (drop_images).
bool checked_image_bytes(tinygltf::Image* image, const int index, std::string*, std::string*, int,
                         int, const unsigned char* bytes, int size, void* user) {
  auto* ctx = static_cast<LoadContext*>(user);
  // An image in a bufferView is checked once koma has checked the view's range (check_views):
  // tinygltf hands over the view's bytes without checking them against its buffer.
  if (image->bufferView >= 0) return true;
  try {
    const std::string where =
        image->uri.empty() ? fmt::format("image {}", index)
                           : fmt::format("image {} (uri '{}')", index, printable(image->uri));
    const std::string mime = asset_detail::check_image(bytes, static_cast<size_t>(std::max(size, 0)),
                                                       fmt::format("{}: {}", ctx->folder.asset, where));
    image->image.assign(bytes, bytes + size);
    if (image->mimeType.empty()) image->mimeType = mime;
    image->as_is = true;
    return true;
  } catch (const Error& e) {
    ctx->undecodable.emplace(index, e.what());
    image->image.clear();
    image->as_is = false;
    return true;
  }
}

void check_views(tinygltf::Model& model, const std::string& file,
                 std::map<int, std::string>& undecodable);
void drop_images(tinygltf::Model& model, const std::map<int, std::string>& undecodable,
                 std::vector<std::string>* warnings);

// Deepest nesting of JSON arrays and objects koma lets tinygltf parse (it recurses once per level
// of `extras` and `extensions`; a real glTF nests fewer than 10).
constexpr int kMaxJsonDepth = 64;

// The JSON text of a .gltf, or the JSON chunk of a .glb (its length checked against the file).
std::string_view json_text(std::string_view bytes, bool binary, const std::string& file) {
  if (!binary) return bytes;
  std::uint32_t length = 0, type = 0;
  if (bytes.size() >= 20) {
    std::memcpy(&length, bytes.data() + 12, 4);
    std::memcpy(&type, bytes.data() + 16, 4);
  }
  if (bytes.size() < 20 || type != 0x4E4F534Au || length > bytes.size() - 20)
    throw Error(ErrorCode::bad_file, file,
                fmt::format("GLB: the JSON chunk (bytes 12..20: length {}, type 0x{:08x}) does not fit the file's {} "
                            "bytes",
                            length, type, bytes.size()));
  return bytes.substr(20, length);
}

// Nesting depth of JSON text, outside strings; throws past kMaxJsonDepth naming the byte.
void check_json_depth(std::string_view json, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw Error(ErrorCode::bad_file, fmt::format("{}: byte {}", file, i),
                    fmt::format("JSON arrays and objects nest more than {} deep (in `extras` or `extensions`?); a "
                                "glTF file nests fewer than 10",
                                kMaxJsonDepth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

tinygltf::Model load_model(const std::filesystem::path& path, const std::filesystem::path& asset_root,
                           std::vector<std::string>* warnings) {
  require_input_file(path);
  const std::string bytes = read_file(path);
  LoadContext ctx;
  ctx.folder = asset_detail::asset_folder(path, asset_root);
  const std::string dir = ctx.folder.dir.string();
  ctx.prefix = dir.back() == '/' ? dir : dir + "/";
  ctx.max_bytes = kMaxExternalBytes;
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&checked_image_bytes, &ctx);
  // External buffers and images are files too: confined to the asset's folder, never a folder, a
  // FIFO or a device (no hang, no huge allocation), never the working directory.
  tinygltf::FsCallbacks fs{};
  fs.FileExists = &confined_exists;
  fs.ExpandFilePath = &no_expansion;
  fs.ReadWholeFile = &confined_read;
  fs.WriteWholeFile = &no_write;
  fs.user_data = &ctx;
  loader.SetFsCallbacks(fs);
  tinygltf::Model model;
  std::string err, warn;
  // Trust the magic rather than the extension.
  const bool binary = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
  check_json_depth(json_text(bytes, binary, path.string()), path.string());
  if (bytes.size() > UINT32_MAX)
    throw Error(ErrorCode::bad_file, path.string(), fmt::format("{} bytes: larger than glTF allows", bytes.size()));
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  bool ok = false;
  try {
    ok = binary ? loader.LoadBinaryFromMemory(&model, &err, &warn, data, static_cast<unsigned>(bytes.size()), dir)
                : loader.LoadASCIIFromString(&model, &err, &warn, bytes.data(), static_cast<unsigned>(bytes.size()),
                                             dir);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // e.g. a GLB whose buffer 0 is 0 bytes long: vector::at
    throw Error(ErrorCode::bad_file, path.string(),
                fmt::format("not a valid glTF 2.0 file; tinygltf failed on it: {}", printable(e.what())));
  }
  if (ctx.refusal) std::rethrow_exception(ctx.refusal);
  auto trim = [](std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    std::replace(s.begin(), s.end(), '\n', ';');
    return printable(s);
  };
  if (!ok) {
    if (ctx.missing) std::rethrow_exception(ctx.missing);
    const std::string message = trim(err.empty() ? warn : err);
    const bool missing = message.find("not found") != std::string::npos ||
                         message.find("Failed to load external") != std::string::npos ||
                         message.find("Failed to open") != std::string::npos;
    throw Error(missing ? ErrorCode::io : ErrorCode::bad_file, path.string(),
                message.empty() ? std::string("not a valid glTF 2.0 file") : message);
  }
  if (warnings && !warn.empty())
    warnings->push_back(fmt::format("{}: {}", path.string(), trim(warn)));
  check_views(model, path.string(), ctx.undecodable);
  drop_images(model, ctx.undecodable, warnings);
  return model;
}

// Reads accessor `index` as doubles (count x components), checking every range on the way.
struct AccessorData {
  std::vector<double> values;
  int count = 0;
  int components = 0;
};

int components_of(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR:
      return 1;
    case TINYGLTF_TYPE_VEC2:
      return 2;
    case TINYGLTF_TYPE_VEC3:
      return 3;
    case TINYGLTF_TYPE_VEC4:
      return 4;
    case TINYGLTF_TYPE_MAT2:
      return 4;
    case TINYGLTF_TYPE_MAT3:
      return 9;
    case TINYGLTF_TYPE_MAT4:
      return 16;
    default:
      return 0;
  }
}

int component_size(int type) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
      return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT:
      return 2;
    case TINYGLTF_COMPONENT_TYPE_INT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT:
      return 4;
    case TINYGLTF_COMPONENT_TYPE_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

// Every bufferView lies inside its buffer and every accessor inside its bufferView, whatever uses
// it (the writer copies a character's views into its output: a view past its buffer's end would
// copy whatever memory follows); every image in a bufferView is checked
// (asset_detail::check_image), and one that does not decode is added to `undecodable`.
void check_views(tinygltf::Model& model, const std::string& file,
                 std::map<int, std::string>& undecodable) {
  const auto fail = [&](const std::string& where, const std::string& message) {
    throw Error(ErrorCode::bad_file, fmt::format("{}: {}", file, where), message);
  };
  // Each view is named with its first user, so the message leads to what needed it.
  std::vector<std::string> user(model.bufferViews.size());
  const auto use = [&](int v, std::string who) {
    if (v >= 0 && static_cast<size_t>(v) < user.size() && user[static_cast<size_t>(v)].empty())
      user[static_cast<size_t>(v)] = fmt::format(" (of {})", who);
  };
  for (size_t a = 0; a < model.accessors.size(); ++a) use(model.accessors[a].bufferView, fmt::format("accessor {}", a));
  for (size_t i = 0; i < model.images.size(); ++i) use(model.images[i].bufferView, fmt::format("image {}", i));
  for (size_t v = 0; v < model.bufferViews.size(); ++v) {
    const tinygltf::BufferView& view = model.bufferViews[v];
    if (view.buffer < 0 || static_cast<size_t>(view.buffer) >= model.buffers.size())
      fail(fmt::format("bufferView {}{}", v, user[v]), fmt::format("names buffer {}, which does not exist (the file has {})",
                                                        view.buffer, model.buffers.size()));
    const size_t size = model.buffers[static_cast<size_t>(view.buffer)].data.size();
    if (!checked::range_fits(view.byteOffset, view.byteLength, size))
      fail(fmt::format("bufferView {}{}", v, user[v]),
           fmt::format("byteOffset {} + byteLength {} runs past the end of buffer {} ({} bytes)", view.byteOffset,
                       view.byteLength, view.buffer, size));
  }
  const auto view_length = [&](int v, const std::string& where) -> size_t {
    if (v < 0 || static_cast<size_t>(v) >= model.bufferViews.size())
      fail(where, fmt::format("bufferView {} does not exist (the file has {})", v, model.bufferViews.size()));
    return model.bufferViews[static_cast<size_t>(v)].byteLength;
  };
  for (size_t a = 0; a < model.accessors.size(); ++a) {
    const tinygltf::Accessor& acc = model.accessors[a];
    const std::string where = fmt::format("accessor {}", a);
    const size_t elem = static_cast<size_t>(component_size(acc.componentType)) *
                        static_cast<size_t>(components_of(acc.type));
    if (elem == 0) fail(where, fmt::format("componentType {} with type {} is not a glTF element", acc.componentType, acc.type));
    if (acc.bufferView < 0) continue;
    const size_t length = view_length(acc.bufferView, where);
    const size_t stride = model.bufferViews[static_cast<size_t>(acc.bufferView)].byteStride;
    if (!checked::strided_fits(acc.byteOffset, std::max(stride, elem), acc.count, elem, length))
      fail(where, fmt::format("count {} of {}-byte elements from byteOffset {} runs past the end of bufferView {} "
                              "({} bytes)",
                              acc.count, elem, acc.byteOffset, acc.bufferView, length));
  }
  for (size_t i = 0; i < model.images.size(); ++i) {
    tinygltf::Image& image = model.images[i];
    if (image.bufferView < 0) continue;
    const std::string where = fmt::format("image {}", i);
    view_length(image.bufferView, where);
    const tinygltf::BufferView& view = model.bufferViews[static_cast<size_t>(image.bufferView)];
    const auto& data = model.buffers[static_cast<size_t>(view.buffer)].data;
    try {
      const std::string mime = asset_detail::check_image(
          data.data() + view.byteOffset, view.byteLength, fmt::format("{}: {}", file, where));
      if (image.mimeType.empty()) image.mimeType = mime;
    } catch (const Error& e) {
      undecodable.emplace(static_cast<int>(i), e.what());
    }
  }
}

// Clears the texture slots of every material that name a texture in `lost`; returns whether the
// base colour texture was one of them.
bool clear_lost_textures(tinygltf::Material& m, const std::vector<char>& lost) {
  const auto clear = [&](int& index) {
    const bool gone =
        index >= 0 && static_cast<size_t>(index) < lost.size() && lost[static_cast<size_t>(index)];
    if (gone) index = -1;
    return gone;
  };
  clear(m.pbrMetallicRoughness.metallicRoughnessTexture.index);
  clear(m.normalTexture.index);
  clear(m.occlusionTexture.index);
  clear(m.emissiveTexture.index);
  return clear(m.pbrMetallicRoughness.baseColorTexture.index);
}

// Leaves the images that do not decode out of the model, with a warning each (issue 38's bad
// input): neither their bytes nor their URI reach an output, and a texture left without an image
// is dropped from every material slot, so its material draws (and is written) in its base colour.
// The other images keep their order; textures (and their EXT_texture_webp-style `source`
// extensions) are renumbered to match.
void drop_images(tinygltf::Model& model, const std::map<int, std::string>& undecodable,
                 std::vector<std::string>* warnings) {
  if (undecodable.empty()) return;
  std::vector<int> renumber(model.images.size(), -1);
  std::vector<tinygltf::Image> kept;
  for (size_t i = 0; i < model.images.size(); ++i) {
    if (undecodable.count(static_cast<int>(i)) > 0) continue;
    renumber[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(model.images[i]));
  }
  model.images = std::move(kept);
  const auto image = [&](int i) {
    return i >= 0 && static_cast<size_t>(i) < renumber.size() ? renumber[static_cast<size_t>(i)]
                                                              : -1;
  };
  std::vector<char> lost(model.textures.size(), 0);
  std::vector<int> was(model.textures.size(), -1);  // each texture's image before
  for (size_t t = 0; t < model.textures.size(); ++t) {
    tinygltf::Texture& tex = model.textures[t];
    was[t] = tex.source;
    bool had = tex.source >= 0;
    tex.source = image(tex.source);
    bool has = tex.source >= 0;
    for (auto& [name, ext] : tex.extensions) {
      if (!ext.IsObject() || !ext.Has("source") || !ext.Get("source").IsInt()) continue;
      tinygltf::Value::Object object = ext.Get<tinygltf::Value::Object>();
      const int source = image(object["source"].Get<int>());
      had = true;
      if (source >= 0) {
        object["source"] = tinygltf::Value(source);
        has = true;
      } else {
        object.erase("source");
      }
      ext = tinygltf::Value(std::move(object));
    }
    lost[t] = had && !has;
    // A texture with nothing left would be written as `null`, which no reader takes: say why.
    if (lost[t] && tex.extras.Type() == tinygltf::NULL_TYPE)
      tex.extras = tinygltf::Value(tinygltf::Value::Object{
          {"koma", tinygltf::Value(std::string("its image did not decode and was left out"))}});
  }
  std::map<int, std::vector<std::string>> plain;  // image -> materials now in their base colour
  for (size_t m = 0; m < model.materials.size(); ++m) {
    tinygltf::Material& mat = model.materials[m];
    const int base = mat.pbrMetallicRoughness.baseColorTexture.index;
    if (clear_lost_textures(mat, lost))
      plain[was[static_cast<size_t>(base)]].push_back(
          mat.name.empty() ? fmt::format("material {}", m)
                           : fmt::format("'{}'", printable(mat.name)));
  }
  if (warnings == nullptr) return;
  for (const auto& [index, why] : undecodable) {
    const auto it = plain.find(index);
    const std::vector<std::string> none;
    const std::vector<std::string>& names = it == plain.end() ? none : it->second;
    std::string materials;
    for (const std::string& name : names) materials += (materials.empty() ? "" : ", ") + name;
    warnings->push_back(fmt::format(
        "{}; the image is left out of the character and of every output{}", why,
        names.empty() ? std::string()
                      : fmt::format(": material{} {} keep{} {} base colour", names.size() > 1 ? "s" : "",
                                    materials, names.size() > 1 ? "" : "s", names.size() > 1 ? "their" : "its")));
  }
}

double read_component(const unsigned char* p, int type, bool normalized) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      std::int8_t v;
      std::memcpy(&v, p, 1);
      return normalized ? std::max(v / 127.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
      return normalized ? p[0] / 255.0 : p[0];
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? std::max(v / 32767.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? v / 65535.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_INT: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case TINYGLTF_COMPONENT_TYPE_FLOAT: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

class Reader {
 public:
  Reader(const tinygltf::Model& model, std::string file, std::uint64_t file_bytes)
      : model_(model), file_(std::move(file)), file_bytes_(file_bytes) {}

  /// The file's bytes with its buffers' (what its counts and durations must be plausible for).
  std::uint64_t file_bytes() const { return file_bytes_; }

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw Error(ErrorCode::bad_file, fmt::format("{}: {}", file_, where), message);
  }

  // Byte range [offset, offset + length) of bufferView `v`, checked against its buffer.
  const unsigned char* view_bytes(int v, const std::string& where, size_t* length,
                                  int* stride) const {
    if (v < 0 || v >= static_cast<int>(model_.bufferViews.size()))
      fail(where, fmt::format("bufferView {} does not exist (the file has {})", v,
                              model_.bufferViews.size()));
    const tinygltf::BufferView& view = model_.bufferViews[static_cast<size_t>(v)];
    if (view.buffer < 0 || view.buffer >= static_cast<int>(model_.buffers.size()))
      fail(where,
           fmt::format("bufferView {} names buffer {}, which does not exist", v, view.buffer));
    const auto& data = model_.buffers[static_cast<size_t>(view.buffer)].data;
    if (!checked::range_fits(view.byteOffset, view.byteLength, data.size()))
      fail(where,
           fmt::format("bufferView {} (bytes {}..{}) runs past the end of buffer {} ({} bytes)", v,
                       view.byteOffset, checked::add(view.byteOffset, view.byteLength).value_or(UINT64_MAX), view.buffer,
                       data.size()));
    *length = view.byteLength;
    *stride = static_cast<int>(view.byteStride);
    return data.data() + view.byteOffset;
  }

  AccessorData accessor(int index, const std::vector<int>& types, const std::string& role) const {
    const std::string where = fmt::format("accessor {}", index);
    if (index < 0 || index >= static_cast<int>(model_.accessors.size()))
      fail(where, fmt::format("{}: accessor {} does not exist (the file has {})", role, index,
                              model_.accessors.size()));
    const tinygltf::Accessor& a = model_.accessors[static_cast<size_t>(index)];
    if (std::find(types.begin(), types.end(), a.type) == types.end())
      fail(where, fmt::format("{}: wrong accessor type {}", role, a.type));
    AccessorData out;
    out.count = static_cast<int>(a.count);
    out.components = components_of(a.type);
    const int csize = component_size(a.componentType);
    if (csize == 0) fail(where, fmt::format("{}: unknown componentType {}", role, a.componentType));
    if (a.count > (size_t{1} << 28))
      fail(where, fmt::format("{}: implausible count {}", role, a.count));
    // An accessor with a bufferView fits it (check_views); one without is all zeros (plus sparse
    // values), as long as the file's size makes plausible.
    if (a.bufferView < 0 && a.count * static_cast<size_t>(out.components) > sample_budget(file_bytes_))
      fail(where, fmt::format("{}: count {} with no bufferView (all zeros) is more than a file of {} bytes can make "
                              "plausible ({} values)",
                              role, a.count, file_bytes_, sample_budget(file_bytes_)));
    const size_t elem = static_cast<size_t>(csize) * static_cast<size_t>(out.components);
    out.values.assign(a.count * static_cast<size_t>(out.components), 0.0);
    if (a.bufferView >= 0) {
      size_t length = 0;
      int stride = 0;
      const unsigned char* bytes = view_bytes(a.bufferView, where, &length, &stride);
      const size_t step = stride > 0 ? static_cast<size_t>(stride) : elem;
      if (step < elem)
        fail(where, fmt::format("{}: bufferView {} byteStride {} is smaller than one element ({} bytes)",
                                role, a.bufferView, step, elem));
      if (!checked::strided_fits(a.byteOffset, step, a.count, elem, length))
        fail(where,
             fmt::format("{}: {} elements of {} bytes from byte {} (stride {}) need {} bytes, "
                         "but bufferView {} has {}",
                         role, a.count, elem, a.byteOffset, step,
                         checked::strided_end(a.byteOffset, step, a.count, elem).value_or(UINT64_MAX),
                         a.bufferView, length));
      for (size_t i = 0; i < a.count; ++i)
        for (int c = 0; c < out.components; ++c)
          out.values[i * static_cast<size_t>(out.components) + static_cast<size_t>(c)] =
              read_component(bytes + a.byteOffset + i * step + static_cast<size_t>(c * csize),
                             a.componentType, a.normalized);
    }
    if (a.sparse.isSparse) {
      const size_t n = static_cast<size_t>(a.sparse.count);
      size_t ilen = 0, vlen = 0;
      int istride = 0, vstride = 0;
      const unsigned char* ib =
          view_bytes(a.sparse.indices.bufferView, where + " sparse indices", &ilen, &istride);
      const unsigned char* vb =
          view_bytes(a.sparse.values.bufferView, where + " sparse values", &vlen, &vstride);
      const int isize = component_size(a.sparse.indices.componentType);
      if (isize == 0 || isize > 4) fail(where, role + ": bad sparse index componentType");
      const size_t ioff = static_cast<size_t>(a.sparse.indices.byteOffset);
      const size_t voff = static_cast<size_t>(a.sparse.values.byteOffset);
      if (n > a.count || !checked::strided_fits(ioff, static_cast<size_t>(isize), n, static_cast<size_t>(isize), ilen) ||
          !checked::strided_fits(voff, elem, n, elem, vlen))
        fail(where, role + ": sparse indices or values run past their bufferView");
      for (size_t k = 0; k < n; ++k) {
        const auto i = static_cast<size_t>(read_component(
            ib + ioff + k * static_cast<size_t>(isize), a.sparse.indices.componentType, false));
        if (i >= a.count)
          fail(where,
               fmt::format("{}: sparse index {} is out of range (count {})", role, i, a.count));
        for (int c = 0; c < out.components; ++c)
          out.values[i * static_cast<size_t>(out.components) + static_cast<size_t>(c)] =
              read_component(vb + voff + k * elem + static_cast<size_t>(c * csize), a.componentType,
                             a.normalized);
      }
    }
    for (double v : out.values)
      if (!std::isfinite(v)) fail(where, role + ": holds a value that is not finite");
    return out;
  }

 private:
  const tinygltf::Model& model_;
  std::string file_;
  std::uint64_t file_bytes_ = 0;
};

// The file's bytes and every buffer's.
std::uint64_t asset_bytes(const std::filesystem::path& path, const tinygltf::Model& model) {
  std::error_code ec;
  std::uint64_t total = std::filesystem::file_size(path, ec);
  if (ec) total = 0;
  for (const auto& b : model.buffers) total += b.data.size();
  return total;
}

}  // namespace

namespace gltf_detail {

std::vector<double> read_accessor(const tinygltf::Model& model, int index, const std::vector<int>& types,
                                  const std::string& role, const std::string& file, int* count, int* components) {
  AccessorData data = Reader(model, file, asset_bytes(file, model)).accessor(index, types, role);
  *count = data.count;
  *components = data.components;
  return std::move(data.values);
}

}  // namespace gltf_detail

namespace {

enum class Path : std::uint8_t { translation, rotation, scale };

// One sampler, read and checked: key times, and values (3 or 4 per key; x3 for CUBICSPLINE).
struct Track {
  std::vector<double> times;
  std::vector<double> values;
  int width = 3;  // 3 for translation/scale, 4 for rotation (x, y, z, w)
  enum class Interp : std::uint8_t { linear, step, cubic } interp = Interp::linear;

  int key_at_or_before(double t) const {
    const auto it = std::upper_bound(times.begin(), times.end(), t);
    return static_cast<int>(it - times.begin()) - 1;
  }
  const double* value(int key, int part) const {  // part: 0 in-tangent, 1 value, 2 out-tangent
    const int stride = interp == Interp::cubic ? 3 : 1;
    const int slot = interp == Interp::cubic ? key * stride + part : key;
    return values.data() + static_cast<size_t>(slot) * static_cast<size_t>(width);
  }

  // Value at time t (seconds); `slack` absorbs float rounding of key times (STEP picks a key that
  // lies within slack after t).
  std::vector<double> sample(double t, double slack) const {
    std::vector<double> out(static_cast<size_t>(width));
    const int n = static_cast<int>(times.size());
    int k = key_at_or_before(t + slack);
    auto copy = [&](const double* p) { std::copy(p, p + width, out.begin()); };
    if (k < 0) {
      copy(value(0, 1));
    } else if (k >= n - 1 || interp == Interp::step) {
      copy(value(std::min(k, n - 1), 1));
    } else {
      const double t0 = times[static_cast<size_t>(k)], t1 = times[static_cast<size_t>(k + 1)];
      const double dt = t1 - t0;
      const double u = std::clamp((t - t0) / dt, 0.0, 1.0);
      if (interp == Interp::linear) {
        const double* a = value(k, 1);
        const double* b = value(k + 1, 1);
        if (width == 4) {
          const Quat qa(a[3], a[0], a[1], a[2]), qb(b[3], b[0], b[1], b[2]);
          const Quat q = qa.normalized().slerp(u, qb.normalized());
          out = {q.x(), q.y(), q.z(), q.w()};
        } else {
          for (int c = 0; c < width; ++c) out[static_cast<size_t>(c)] = (1 - u) * a[c] + u * b[c];
        }
      } else {
        // Cubic Hermite spline (glTF 2.0 spec, appendix C): tangents are scaled by the key spacing.
        const double* p0 = value(k, 1);
        const double* m0 = value(k, 2);
        const double* p1 = value(k + 1, 1);
        const double* m1 = value(k + 1, 0);
        const double u2 = u * u, u3 = u2 * u;
        const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2,
                     h11 = u3 - u2;
        for (int c = 0; c < width; ++c)
          out[static_cast<size_t>(c)] =
              h00 * p0[c] + h10 * dt * m0[c] + h01 * p1[c] + h11 * dt * m1[c];
      }
    }
    return out;
  }
};

const tinygltf::Value* extra(const tinygltf::Value& extras, const char* key) {
  if (!extras.IsObject() || !extras.Has(key)) return nullptr;
  return &extras.Get(key);
}

double number_of(const tinygltf::Value& v) {
  return v.IsInt() ? v.Get<int>() : v.IsNumber() ? v.GetNumberAsDouble() : 0.0;
}

// Snaps a measured rate to a nearby common one (integer or NTSC) so 1/24 stored as float reads
// as 24.
double snap_rate(double rate) {
  for (double base : {std::round(rate), std::round(rate * 1.001) / 1.001}) {
    if (base > 0 && std::abs(rate - base) <= 1e-4 * base) return base;
  }
  return rate;
}

// Sorted distinct key times (times closer than 1e-7 s are one).
std::vector<double> distinct_times(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end(),
                          [](double a, double b) { return std::abs(a - b) < 1e-7; }),
              times.end());
  return times;
}

// The rate of the common time grid of all key times, or 0 when they have none. Candidate frame
// spacings are the smallest key gap divided by 1..8; a subdivided spacing is accepted only up to
// 60 fps (a finer grid would bloat a hand-keyed clip, the mode rate below serves it better).
double grid_rate(const std::vector<double>& times) {
  if (times.size() < 2) return 0.0;
  double gap = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i < times.size(); ++i) gap = std::min(gap, times[i] - times[i - 1]);
  const double t0 = times.front();
  const double span = times.back() - t0;
  const double float_eps =
      4.0 * std::numeric_limits<float>::epsilon() * std::max(std::abs(t0), std::abs(times.back()));
  for (int m = 1; m <= 8; ++m) {
    // Refine the spacing over the whole span (a single float gap is only accurate to ~1e-7 s).
    const double steps = std::round(span / (gap / m));
    if (steps < 1) continue;
    const double dt = span / steps;
    if (m > 1 && 1.0 / dt > 60.0 + 1e-6) break;
    const double tol = 1e-3 * dt + float_eps;
    bool fits = true;
    for (double t : times) {
      const double k = (t - t0) / dt;
      if (std::abs(k - std::round(k)) * dt > tol) {
        fits = false;
        break;
      }
    }
    if (fits) return snap_rate(1.0 / dt);
  }
  return 0.0;
}

// The rate of the most frequent key gap when at least half the gaps share it, else 0.
double mode_rate(const std::vector<double>& times) {
  if (times.size() < 3) return 0.0;
  std::vector<double> gaps;
  for (size_t i = 1; i < times.size(); ++i) gaps.push_back(times[i] - times[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  size_t best = 0, best_count = 0;
  for (size_t i = 0, j = 0; i < gaps.size(); i = j) {
    while (j < gaps.size() && gaps[j] - gaps[i] <= 1e-4 * gaps[i] + 1e-6) ++j;
    if (j - i > best_count) {
      best_count = j - i;
      best = i;
    }
  }
  if (2 * best_count < gaps.size()) return 0.0;
  return snap_rate(1.0 / gaps[best + best_count / 2]);
}

int find_animation(const tinygltf::Model& model, const std::string& wanted,
                   const std::string& file) {
  if (model.animations.empty())
    throw Error(ErrorCode::bad_file, file,
                "no animation: the file holds no animations (koma needs a skin and an animation)");
  if (wanted.empty()) return 0;
  std::vector<std::string> names;
  for (const auto& a : model.animations) names.push_back(a.name);
  return choose_animation(names, wanted, file);
}

}  // namespace

namespace {
bool keep_bytes_unchecked(tinygltf::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int,
                          void*) {
  return true;  // scene_glb() puts every image in a bufferView; the writer copies the view
}
bool no_file(const std::string&, void*) { return false; }
bool no_read(std::vector<unsigned char>*, std::string*, const std::string&, void*) { return false; }
}  // namespace

tinygltf::Model gltf_detail::load_scene_glb(const std::string& glb, const std::string& file) {
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&keep_bytes_unchecked, nullptr);
  tinygltf::FsCallbacks fs{&no_file, &no_expansion, &no_read, &no_write, nullptr};
  loader.SetFsCallbacks(fs);
  tinygltf::Model model;
  std::string err, warn;
  if (glb.size() > UINT32_MAX ||
      !loader.LoadBinaryFromMemory(&model, &err, &warn, reinterpret_cast<const unsigned char*>(glb.data()),
                                   static_cast<unsigned>(glb.size()), ""))
    throw Error(ErrorCode::bad_file, file,
                fmt::format("the character sent back by the reader's child process does not load: {}", printable(err)));
  return model;
}

bool is_gltf_file(const std::filesystem::path& path) {
  const std::string ext = lower_ext(path);
  return ext == ".gltf" || ext == ".glb";
}

namespace {

std::vector<GltfAnimationInfo> list_in_process(const std::filesystem::path& path,
                                               const std::filesystem::path& asset_root) {
  const tinygltf::Model model = load_model(path, asset_root, nullptr);
  const Reader reader(model, path.string(), asset_bytes(path, model));
  std::vector<GltfAnimationInfo> out;
  for (size_t i = 0; i < model.animations.size(); ++i) {
    const auto& anim = model.animations[i];
    GltfAnimationInfo info;
    info.index = static_cast<int>(i);
    info.name = anim.name;
    info.channel_count = static_cast<int>(anim.channels.size());
    info.start = std::numeric_limits<double>::infinity();
    info.end = -info.start;
    for (size_t s = 0; s < anim.samplers.size(); ++s) {
      const auto& sampler = anim.samplers[s];
      const AccessorData in = reader.accessor(sampler.input, {TINYGLTF_TYPE_SCALAR},
                                              fmt::format("animation {} sampler {} input", i, s));
      info.max_keys = std::max(info.max_keys, in.count);
      if (in.count > 0) {
        info.start = std::min(info.start, in.values.front());
        info.end = std::max(info.end, in.values.back());
      }
      const std::string interp = sampler.interpolation.empty() ? "LINEAR" : sampler.interpolation;
      if (std::find(info.interpolations.begin(), info.interpolations.end(), interp) ==
          info.interpolations.end())
        info.interpolations.push_back(interp);
    }
    if (info.max_keys == 0) info.start = info.end = 0.0;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<GltfAnimationInfo> list_gltf_animations(const std::filesystem::path& path,
                                                    const std::filesystem::path& asset_root) {
  if (isolation_detail::in_process()) return list_in_process(path, asset_root);
  const std::string bytes = isolation_detail::run_reader(
      path, kParser, [&] { return isolation_detail::pack(list_in_process(path, asset_root)); });
  return isolation_detail::unpack_gltf_infos(bytes, path.string());
}

namespace {

// The steps of read_gltf(), in order: node tree, animation channels, skin, skeleton nodes,
// skeleton order (joints, end sites, names), the transform above the skeleton, rest layout,
// tracks, time grid, sampling, channel layout.

// Node tree: parents from children lists (-1 for a scene root).
std::vector<int> node_parents(const tinygltf::Model& model, const Reader& reader) {
  const int node_count = static_cast<int>(model.nodes.size());
  std::vector<int> parent(static_cast<size_t>(node_count), -1);
  for (int n = 0; n < node_count; ++n) {
    for (int c : model.nodes[static_cast<size_t>(n)].children) {
      if (c < 0 || c >= node_count)
        reader.fail(fmt::format("node {}", n), fmt::format("child {} does not exist", c));
      if (parent[static_cast<size_t>(c)] != -1 || c == n)
        reader.fail(fmt::format("node {}", c),
                    "has more than one parent (the nodes are not a tree)");
      parent[static_cast<size_t>(c)] = n;
    }
  }
  return parent;
}

// n, parent(n), ..., scene root.
std::vector<int> chain_to_root(const std::vector<int>& parent, int n, const Reader& reader) {
  std::vector<int> chain;
  while (n >= 0) {
    if (chain.size() > parent.size()) reader.fail(fmt::format("node {}", n), "is part of a cycle");
    chain.push_back(n);
    n = parent[static_cast<size_t>(n)];
  }
  return chain;
}

// Channels of the animation, checked.
void check_channels(const tinygltf::Animation& anim, const std::string& anim_label, int node_count,
                    const Reader& reader) {
  for (size_t c = 0; c < anim.channels.size(); ++c) {
    const auto& ch = anim.channels[c];
    if (ch.sampler < 0 || ch.sampler >= static_cast<int>(anim.samplers.size()))
      reader.fail(anim_label,
                  fmt::format("channel {} names sampler {}, which does not exist", c, ch.sampler));
    if (ch.target_node < 0 || ch.target_node >= node_count)
      reader.fail(anim_label, fmt::format("channel {} targets node {}, which does not exist", c,
                                          ch.target_node));
  }
}

// The skin whose joints the animation drives most (the first on a tie), checked.
int choose_skin(const tinygltf::Model& model, const tinygltf::Animation& anim, const Reader& reader) {
  const int node_count = static_cast<int>(model.nodes.size());
  int skin_index = 0, best = -1;
  for (size_t s = 0; s < model.skins.size(); ++s) {
    const auto& joints = model.skins[s].joints;
    int hits = 0;
    for (const auto& ch : anim.channels)
      hits += static_cast<int>(std::count(joints.begin(), joints.end(), ch.target_node));
    if (hits > best) {
      best = hits;
      skin_index = static_cast<int>(s);
    }
  }
  const tinygltf::Skin& skin = model.skins[static_cast<size_t>(skin_index)];
  const std::string skin_label = fmt::format("skin {}", skin_index);
  if (skin.joints.empty()) reader.fail(skin_label, "has no joints");
  for (int j : skin.joints)
    if (j < 0 || j >= node_count)
      reader.fail(skin_label, fmt::format("joint node {} does not exist", j));
  if (skin.inverseBindMatrices >= 0) {
    const AccessorData ibm = reader.accessor(skin.inverseBindMatrices, {TINYGLTF_TYPE_MAT4},
                                             skin_label + " inverseBindMatrices");
    if (ibm.count < static_cast<int>(skin.joints.size()))
      reader.fail(fmt::format("accessor {}", skin.inverseBindMatrices),
                  fmt::format("{} inverseBindMatrices: {} matrices for {} joints", skin_label,
                              ibm.count, skin.joints.size()));
  }
  return skin_index;
}

// Skeleton nodes: the joints and every node between them and their lowest common ancestor (the
// skeleton's root node).
struct SkeletonNodes {
  int root = -1;
  std::vector<char> member;  // per node: 1 when in the skeleton
};

SkeletonNodes skeleton_nodes(const tinygltf::Skin& skin, int skin_index, const std::vector<int>& parent,
                             const Reader& reader) {
  std::vector<int> common = chain_to_root(parent, skin.joints.front(), reader);
  std::reverse(common.begin(), common.end());  // root .. joint
  for (int j : skin.joints) {
    std::vector<int> chain = chain_to_root(parent, j, reader);
    std::reverse(chain.begin(), chain.end());
    size_t k = 0;
    while (k < common.size() && k < chain.size() && common[k] == chain[k]) ++k;
    if (k == 0)
      reader.fail(fmt::format("node {}", j),
                  fmt::format("skin {} joint shares no ancestor with joint node {}: the joints "
                              "are not one hierarchy",
                              skin_index, skin.joints.front()));
    common.resize(k);
  }
  SkeletonNodes out;
  out.root = common.back();
  out.member.assign(parent.size(), 0);
  for (int j : skin.joints)
    for (int n = j; n >= 0 && !out.member[static_cast<size_t>(n)];
         n = parent[static_cast<size_t>(n)]) {
      out.member[static_cast<size_t>(n)] = 1;
      if (n == out.root) break;
    }
  return out;
}

// The skeleton's joints in parent-before-child order, by depth-first traversal from the root, and
// the end sites met on the way (leaves outside the skeleton that carry nothing and are not
// animated).
struct SkeletonOrder {
  std::vector<int> nodes;                      // node of each joint
  std::vector<int> parents;                    // parent joint of each joint (-1: root)
  std::vector<int> joint_of;                   // per node: its joint, or -1
  std::vector<std::pair<int, int>> end_nodes;  // (node, parent joint)
};

SkeletonOrder skeleton_order(const tinygltf::Model& model, const SkeletonNodes& skeleton,
                             const std::vector<char>& animated) {
  SkeletonOrder order;
  order.joint_of.assign(model.nodes.size(), -1);
  std::vector<std::pair<int, int>> stack{{skeleton.root, -1}};
  while (!stack.empty()) {
    const auto [n, p] = stack.back();
    stack.pop_back();
    order.joint_of[static_cast<size_t>(n)] = static_cast<int>(order.nodes.size());
    order.nodes.push_back(n);
    order.parents.push_back(p);
    const auto& children = model.nodes[static_cast<size_t>(n)].children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      if (skeleton.member[static_cast<size_t>(*it)])
        stack.emplace_back(*it, order.joint_of[static_cast<size_t>(n)]);
    }
    for (int c : children) {
      const auto& cn = model.nodes[static_cast<size_t>(c)];
      if (!skeleton.member[static_cast<size_t>(c)] && cn.mesh < 0 && cn.camera < 0 && cn.skin < 0 &&
          cn.children.empty() && !animated[static_cast<size_t>(c)])
        order.end_nodes.emplace_back(c, order.joint_of[static_cast<size_t>(n)]);
    }
  }
  return order;
}

// Names: the node's, else "node<i>"; made unique.
std::vector<std::string> joint_names(const tinygltf::Model& model, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  std::set<std::string> used;
  for (int n : nodes) {
    // Invalid UTF-8 replaced, control characters made '_': every output format can hold the name.
    std::string name = valid_utf8(model.nodes[static_cast<size_t>(n)].name);
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '_';
    if (name.empty()) name = fmt::format("node{}", n);
    if (used.count(name)) name = fmt::format("{}_{}", name, n);
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

// Static transform above the skeleton, baked into the root: a rotation, a translation and one
// (mean) scale, stored in the scene.
void bake_ancestors(const tinygltf::Model& model, const std::vector<int>& parent, int root_node,
                    const std::vector<char>& animated, const std::string& file, const Reader& reader,
                    GltfScene& scene, std::vector<std::string>& warnings) {
  Eigen::Affine3d above = Eigen::Affine3d::Identity();
  std::vector<int> chain = chain_to_root(parent, root_node, reader);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (*it == root_node) break;
    if (animated[static_cast<size_t>(*it)])
      warnings.push_back(fmt::format(
          "{}: node {} above the skeleton is animated; its animation is ignored", file, *it));
    const Trs t = gltf_detail::node_trs(model.nodes[static_cast<size_t>(*it)]);
    above = above * Eigen::Translation3d(t.translation) * t.rotation * Eigen::Scaling(t.scale);
  }
  const Eigen::Matrix3d rs = above.linear();
  double s = std::cbrt(std::abs(rs.determinant()));
  if (!(s > 1e-12))
    reader.fail(fmt::format("node {}", parent[static_cast<size_t>(root_node)]), "has a zero scale");
  Eigen::Vector3d axis_scales(rs.col(0).norm(), rs.col(1).norm(), rs.col(2).norm());
  if ((axis_scales.array() - s).abs().maxCoeff() > 1e-6 * s)
    warnings.push_back(
        fmt::format("{}: the nodes above the skeleton scale unevenly ({:g} {:g} {:g}); koma uses "
                    "their mean {:g}",
                    file, axis_scales.x(), axis_scales.y(), axis_scales.z(), s));
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(rs / s, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d r = svd.matrixU() * svd.matrixV().transpose();
  if (r.determinant() < 0) reader.fail("nodes above the skeleton", "mirror the skeleton (negative scale)");
  scene.ancestor_rotation = Quat(r).normalized();
  scene.ancestor_translation = above.translation();
  scene.ancestor_scale = s;
}

// The animation's tracks on the skeleton's joints, read and checked, with every key time.
struct Tracks {
  std::map<std::pair<int, Path>, Track> by_joint;  // (joint, path) -> track
  std::vector<double> all_times;                   // every key time of every track, seconds
  int ignored = 0;                                 // channels outside the skeleton or on morph weights
};

// One channel's sampler as a track: interpolation, increasing key times, value count and nonzero
// rotations checked.
Track read_track(const tinygltf::Animation& anim, const tinygltf::AnimationChannel& ch, Path path_kind,
                 const std::string& anim_label, const Reader& reader) {
  const auto& sampler = anim.samplers[static_cast<size_t>(ch.sampler)];
  const std::string role = fmt::format("{} sampler {} ({} of node {})", anim_label, ch.sampler,
                                       ch.target_path, ch.target_node);
  Track track;
  track.width = path_kind == Path::rotation ? 4 : 3;
  if (sampler.interpolation.empty() || sampler.interpolation == "LINEAR")
    track.interp = Track::Interp::linear;
  else if (sampler.interpolation == "STEP")
    track.interp = Track::Interp::step;
  else if (sampler.interpolation == "CUBICSPLINE")
    track.interp = Track::Interp::cubic;
  else
    reader.fail(anim_label, fmt::format("sampler {} has unknown interpolation '{}'", ch.sampler,
                                        sampler.interpolation));
  const AccessorData in = reader.accessor(sampler.input, {TINYGLTF_TYPE_SCALAR}, role + " input");
  const AccessorData out = reader.accessor(
      sampler.output, {path_kind == Path::rotation ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_VEC3},
      role + " output");
  if (in.count < 1)
    reader.fail(fmt::format("accessor {}", sampler.input), role + " input: no key times");
  for (int k = 1; k < in.count; ++k) {
    if (!(in.values[static_cast<size_t>(k)] > in.values[static_cast<size_t>(k - 1)]))
      reader.fail(
          fmt::format("accessor {}", sampler.input),
          fmt::format(
              "{} input: key times must increase, but key {} at {:g} s follows key {} at {:g} s",
              role, k, in.values[static_cast<size_t>(k)], k - 1,
              in.values[static_cast<size_t>(k - 1)]));
  }
  const int expected = in.count * (track.interp == Track::Interp::cubic ? 3 : 1);
  if (out.count != expected)
    reader.fail(fmt::format("accessor {}", sampler.output),
                fmt::format("{} output: {} values for {} key times (expected {})", role,
                            out.count, in.count, expected));
  if (path_kind == Path::rotation) {
    for (int k = 0; k < out.count; ++k) {
      const double* q = out.values.data() + static_cast<size_t>(k) * 4;
      const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      const bool tangent = track.interp == Track::Interp::cubic && k % 3 != 1;
      if (!tangent && norm < 1e-6)
        reader.fail(fmt::format("accessor {}", sampler.output),
                    fmt::format("{} output: rotation {} is zero", role, k));
    }
  }
  track.times = in.values;
  track.values = out.values;
  return track;
}

Tracks read_tracks(const tinygltf::Animation& anim, const std::string& anim_label,
                   const std::vector<int>& joint_of, const Reader& reader) {
  Tracks tracks;
  for (const auto& ch : anim.channels) {
    Path path_kind;
    if (ch.target_path == "translation")
      path_kind = Path::translation;
    else if (ch.target_path == "rotation")
      path_kind = Path::rotation;
    else if (ch.target_path == "scale")
      path_kind = Path::scale;
    else {
      ++tracks.ignored;  // morph weights, pointer extensions
      continue;
    }
    const int j = joint_of[static_cast<size_t>(ch.target_node)];
    if (j < 0) {
      ++tracks.ignored;
      continue;
    }
    Track track = read_track(anim, ch, path_kind, anim_label, reader);
    tracks.all_times.insert(tracks.all_times.end(), track.times.begin(), track.times.end());
    tracks.by_joint[{j, path_kind}] = std::move(track);
  }
  return tracks;
}

// The frames the motion samples: frame f is at start + f / rate seconds.
struct TimeGrid {
  double rate = 0.0;   // fps
  double start = 0.0;  // seconds
  int frames = 0;
};

// Time grid: the caller's rate, else koma's extras (rate and frame count), else the grid the key
// times lie on, else the rate of most key gaps (with a warning); 30 fps for a single key time.
TimeGrid time_grid(const std::vector<double>& all_times, const tinygltf::Animation& anim,
                   const GltfReadOptions& options, const std::string& file,
                   const std::string& anim_label, const Reader& reader,
                   std::vector<std::string>& warnings) {
  const double t_min = *std::min_element(all_times.begin(), all_times.end());
  const double t_max = *std::max_element(all_times.begin(), all_times.end());
  const tinygltf::Value* rate_extra = extra(anim.extras, gltf_detail::kFrameRateExtra);
  const tinygltf::Value* count_extra = extra(anim.extras, gltf_detail::kFrameCountExtra);
  TimeGrid grid;
  double& rate = grid.rate;
  rate = options.frame_rate;
  grid.start = t_min;
  if (rate <= 0 && rate_extra && number_of(*rate_extra) > 0) {
    rate = number_of(*rate_extra);
    grid.start = 0.0;
    if (count_extra && number_of(*count_extra) >= 1) {
      const auto frames = checked::whole(number_of(*count_extra), 1, kMaxFrames);
      if (!frames)
        reader.fail(anim_label, fmt::format("extras {} = {:g} is not a whole number of frames from 1 to {}",
                                            gltf_detail::kFrameCountExtra, number_of(*count_extra), kMaxFrames));
      grid.frames = static_cast<int>(*frames);
    }
  }
  const std::vector<double> key_times = distinct_times(all_times);
  if (rate <= 0) rate = grid_rate(key_times);
  if (rate <= 0 && t_max > t_min) {
    rate = mode_rate(key_times);
    if (rate <= 0) rate = 30.0;
    warnings.push_back(
        fmt::format("{}: {}: key times lie on no uniform grid; sampled at {:g} fps{} "
                    "(another rate: the reader's frame_rate option)",
                    file, anim_label, rate, rate == 30.0 ? "" : ", the rate of most key gaps"));
  }
  if (rate <= 0) rate = 30.0;  // a single key time: one frame
  if (!valid_frame_rate(rate))
    reader.fail(anim_label, fmt::format("frame rate {:g} fps is outside {:g} to {:g} fps", rate, kMinFrameRate,
                                        kMaxFrameRate));
  // Frames up to and including the last key time (a float key time may lie a hair past its frame).
  if (grid.frames == 0) {
    const auto frames = checked::ceil_within((t_max - grid.start) * rate - 1e-3, 0, kMaxFrames - 1);
    if (!frames)
      reader.fail(anim_label, fmt::format("{:g} s at {:g} fps is more than koma's limit of {} frames",
                                          t_max - grid.start, rate, kMaxFrames));
    grid.frames = static_cast<int>(*frames) + 1;
  }
  return grid;
}

// Sample: every joint's tracks (else its rest transform) at every frame of the grid, the root
// through the transform above the skeleton, rotations sign-continuous; scales only when a joint
// has a scale track or a non-unit rest scale (warning when they stray from 1).
void sample_tracks(const Tracks& tracks, const std::vector<Trs>& rest, const TimeGrid& grid,
                   const GltfScene& scene, const std::vector<int>& nodes, const std::string& file,
                   const std::string& anim_label, const Reader& reader, Motion& m,
                   std::vector<std::string>& warnings) {
  const int joints = static_cast<int>(nodes.size());
  const int frames = grid.frames;
  const double rate = grid.rate;
  const double slack = 1e-3 / rate;
  const Quat& ar = scene.ancestor_rotation;
  const Vec3& at = scene.ancestor_translation;
  const double as = scene.ancestor_scale;
  check_sample_budget(frames, joints, reader.file_bytes(), fmt::format("{}: {}", file, anim_label),
                      fmt::format("keys from {:g} s to {:g} s at {:g} fps", grid.start,
                                  grid.start + (frames - 1) / rate, rate));
  m.frame_rate = rate;
  m.frame_count = frames;
  m.rotations.resize(static_cast<size_t>(frames) * static_cast<size_t>(joints));
  m.translations.resize(m.rotations.size());
  bool any_scale = false;
  for (int j = 0; j < joints; ++j) {
    const Trs& r = rest[static_cast<size_t>(j)];
    if (tracks.by_joint.count({j, Path::scale}) || (r.scale - Vec3::Ones()).cwiseAbs().maxCoeff() > 0)
      any_scale = true;
  }
  if (any_scale) m.scales.assign(m.rotations.size(), Vec3::Ones());
  double worst_scale = 0.0;
  std::string worst_scale_joint;
  for (int j = 0; j < joints; ++j) {
    const Trs& r = rest[static_cast<size_t>(j)];
    const auto tt = tracks.by_joint.find({j, Path::translation});
    const auto tr = tracks.by_joint.find({j, Path::rotation});
    const auto ts = tracks.by_joint.find({j, Path::scale});
    const auto none = tracks.by_joint.end();
    for (int f = 0; f < frames; ++f) {
      const double t = grid.start + f / rate;
      Vec3 pos = r.translation;
      Quat rot = r.rotation;
      Vec3 scl = r.scale;
      if (tt != none) {
        const auto v = tt->second.sample(t, slack);
        pos = Vec3(v[0], v[1], v[2]);
      }
      if (tr != none) {
        const auto v = tr->second.sample(t, slack);
        rot = Quat(v[3], v[0], v[1], v[2]);
        const double norm = rot.norm();
        if (!(norm > 1e-9))
          reader.fail(anim_label, fmt::format("rotation of node {} is zero at {:g} s",
                                              nodes[static_cast<size_t>(j)], t));
        rot.coeffs() /= norm;
      }
      if (ts != none) {
        const auto v = ts->second.sample(t, slack);
        scl = Vec3(v[0], v[1], v[2]);
      }
      const size_t i =
          static_cast<size_t>(f) * static_cast<size_t>(joints) + static_cast<size_t>(j);
      if (j == 0) {
        m.translations[i] = at + as * (ar * pos);
        m.rotations[i] = (ar * rot).normalized();
      } else {
        m.translations[i] = as * pos;
        m.rotations[i] = rot;
      }
      if (any_scale) {
        m.scales[i] = scl;
        const double dev = (scl - Vec3::Ones()).cwiseAbs().maxCoeff();
        if (dev > worst_scale) {
          worst_scale = dev;
          worst_scale_joint = m.skeleton.names[static_cast<size_t>(j)];
        }
      }
    }
    // Sign-continuous quaternions (q and -q are one rotation), so per-component filters see no
    // jumps.
    make_sign_continuous(std::span<Quat>(m.rotations).subspan(static_cast<size_t>(j)),
                         static_cast<size_t>(joints));
  }
  if (worst_scale > 1e-4)
    warnings.push_back(
        fmt::format("{}: joint {} is scaled by up to {:.3g} away from 1; the scale is kept (it scales the "
                    "joints below, as in glTF) but a BVH output cannot store it",
                    file, worst_scale_joint, worst_scale));
}

// Channel layout: from koma's extras when present, else 6 on the root, ZXY elsewhere, plus
// positions on joints whose translation is animated. A joint without position channels keeps its
// rest offset (Motion invariant); a file that declares none but still moves the joint gets them.
void channel_layout(const tinygltf::Model& model, const std::vector<int>& nodes, const Tracks& tracks,
                    Motion& m) {
  Skeleton& sk = m.skeleton;
  const int joints = static_cast<int>(nodes.size());
  for (int j = 0; j < joints; ++j) {
    const auto& node = model.nodes[static_cast<size_t>(nodes[static_cast<size_t>(j)])];
    std::vector<Channel> channels;
    if (const tinygltf::Value* v = extra(node.extras, gltf_detail::kChannelsExtra);
        v && v->IsString()) {
      const std::string text = v->Get<std::string>();
      size_t pos = 0;
      while (pos < text.size()) {
        const size_t end = std::min(text.find(' ', pos), text.size());
        const std::string word = text.substr(pos, end - pos);
        for (int c = 0; c < 6; ++c)
          if (word == to_string(static_cast<Channel>(c)))
            channels.push_back(static_cast<Channel>(c));
        pos = end + 1;
      }
    }
    const bool moves = j == 0 || tracks.by_joint.count({j, Path::translation});
    if (channels.empty() || (moves && !std::any_of(channels.begin(), channels.end(),
                                                   [](Channel c) { return !is_rotation(c); }))) {
      channels.clear();
      if (moves) channels = {Channel::Xposition, Channel::Yposition, Channel::Zposition};
      channels.insert(channels.end(), {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation});
    }
    sk.channels.push_back(std::move(channels));
  }
  for (int j = 0; j < joints; ++j) {
    if (sk.has_position_channels(j)) continue;
    for (int f = 0; f < m.frame_count; ++f) {
      const size_t i =
          static_cast<size_t>(f) * static_cast<size_t>(joints) + static_cast<size_t>(j);
      m.translations[i] = sk.offsets[static_cast<size_t>(j)];
    }
  }
}

}  // namespace

namespace {

ReadResult read_in_process(const std::filesystem::path& path, const GltfReadOptions& options) {
  const std::string file = path.string();
  ReadResult result;
  auto scene = std::make_shared<GltfScene>();
  scene->model = load_model(path, options.asset_root, &result.warnings);
  const tinygltf::Model& model = scene->model;
  const Reader reader(model, file, asset_bytes(path, model));
  const int node_count = static_cast<int>(model.nodes.size());

  const int anim_index = find_animation(model, options.animation, file);
  const tinygltf::Animation& anim = model.animations[static_cast<size_t>(anim_index)];
  if (model.skins.empty()) {
    // A rigid rig (nodes animated directly, no skin): the nodes the animation drives, with the
    // nodes between them, are the skeleton. The scene keeps this skin when it is written again.
    tinygltf::Skin rig;
    rig.name = "koma: animated nodes";
    for (const auto& ch : anim.channels)
      if (ch.target_node >= 0 && ch.target_node < node_count) rig.joints.push_back(ch.target_node);
    std::sort(rig.joints.begin(), rig.joints.end());
    rig.joints.erase(std::unique(rig.joints.begin(), rig.joints.end()), rig.joints.end());
    if (rig.joints.empty())
      throw Error(ErrorCode::bad_file, file,
                  "no skin and no animated node: koma reads the joint hierarchy of a skin, or the nodes an "
                  "animation drives");
    result.warnings.push_back(fmt::format("{}: no skin: the {} node(s) the animation drives are read as the "
                                          "skeleton (a rigid rig; no skinned character)",
                                          file, rig.joints.size()));
    scene->model.skins.push_back(std::move(rig));
  }
  const std::string anim_label = anim.name.empty()
                                     ? fmt::format("animation {}", anim_index)
                                     : fmt::format("animation {} '{}'", anim_index, anim.name);
  if (anim.channels.empty()) reader.fail(anim_label, "has no channels");

  const std::vector<int> parent = node_parents(model, reader);
  check_channels(anim, anim_label, node_count, reader);
  const int skin_index = choose_skin(model, anim, reader);
  const SkeletonNodes skeleton =
      skeleton_nodes(model.skins[static_cast<size_t>(skin_index)], skin_index, parent, reader);

  // Nodes driven by the animation (to tell end sites from animated leaves).
  std::vector<char> animated(static_cast<size_t>(node_count), 0);
  for (const auto& ch : anim.channels) animated[static_cast<size_t>(ch.target_node)] = 1;

  SkeletonOrder order = skeleton_order(model, skeleton, animated);
  const std::vector<int>& nodes = order.nodes;
  const int joints = static_cast<int>(nodes.size());
  Skeleton& sk = result.motion.skeleton;
  sk.parents = std::move(order.parents);
  sk.names = joint_names(model, nodes);
  bake_ancestors(model, parent, skeleton.root, animated, file, reader, *scene, result.warnings);
  const Quat& ar = scene->ancestor_rotation;
  const Vec3& at = scene->ancestor_translation;
  const double as = scene->ancestor_scale;

  // Rest layout.
  std::vector<Trs> rest(static_cast<size_t>(joints));
  for (int j = 0; j < joints; ++j) {
    rest[static_cast<size_t>(j)] =
        gltf_detail::node_trs(model.nodes[static_cast<size_t>(nodes[static_cast<size_t>(j)])]);
    const Vec3& t = rest[static_cast<size_t>(j)].translation;
    sk.offsets.push_back(j == 0 ? Vec3(at + as * (ar * t)) : Vec3(as * t));
  }
  for (const auto& [n, p] : order.end_nodes)
    sk.end_sites.push_back(
        {p, as * gltf_detail::node_trs(model.nodes[static_cast<size_t>(n)]).translation});

  const Tracks tracks = read_tracks(anim, anim_label, order.joint_of, reader);
  if (tracks.ignored > 0)
    result.warnings.push_back(fmt::format(
        "{}: {}: {} channel(s) on nodes outside the skeleton or on morph weights ignored", file,
        anim_label, tracks.ignored));
  if (tracks.by_joint.empty())
    reader.fail(anim_label, fmt::format("has no channel on the joints of skin {}", skin_index));

  const TimeGrid grid = time_grid(tracks.all_times, anim, options, file, anim_label, reader, result.warnings);
  Motion& m = result.motion;
  sample_tracks(tracks, rest, grid, *scene, nodes, file, anim_label, reader, m, result.warnings);
  channel_layout(model, nodes, tracks, m);
  if (const tinygltf::Value* v = extra(anim.extras, gltf_detail::kSourceUnitExtra);
      v && v->IsString()) {
    if (auto unit = parse_length_unit(v->Get<std::string>())) m.source_unit = *unit;
  }

  // The clip's name reaches every output: valid UTF-8, no control characters (as joint names).
  m.name = anim.name.empty() ? clip_name_from_path(path) : valid_utf8(anim.name);
  for (char& c : m.name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '_';
  scene->joint_nodes = nodes;
  scene->joint_names = sk.names;
  m.validate();
  if (const double size = sk.rest_extent(); size > 20.0)
    result.warnings.push_back(
        fmt::format("{}: the skeleton is {:.1f} m across; glTF lengths are metres, so the "
                    "exporter probably wrote another unit (centimetres?)",
                    file, size));
  result.gltf_scene = std::move(scene);
  return result;
}

}  // namespace

ReadResult read_gltf(const std::filesystem::path& path, const GltfReadOptions& options) {
  if (!(options.frame_rate >= 0.0) || !std::isfinite(options.frame_rate))
    throw Error(ErrorCode::invalid_settings, "frame_rate",
                fmt::format("{} is not a frame rate", options.frame_rate));
  if (isolation_detail::in_process()) return read_in_process(path, options);
  const std::string bytes = isolation_detail::run_reader(
      path, kParser, [&] { return isolation_detail::pack(read_in_process(path, options)); });
  return isolation_detail::unpack(bytes, path.string());
}

}  // namespace koma::io
