// Private to src/io: the other files an asset names (glTF buffer and image URIs), confined to the
// asset's folder or a wider root the caller names on purpose, and the check every image passes
// before koma carries it into an output.
//
// A URI is read only when, after percent-decoding, it is a relative path without a scheme (no
// http:, file:, C:), without a NUL, that resolves (`..` and symlinks followed) to a regular file
// inside the root, on an ordinary file system (not /proc, /sys or another kernel interface).
// Nothing is looked up in the working directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace koma::io::asset_detail {

/// Where an asset's external files may come from.
struct AssetFolder {
  std::filesystem::path dir;   ///< the asset's folder, absolute and canonical: URIs are relative to it
  std::filesystem::path root;  ///< URIs must resolve inside it: `dir`, or the canonical asset_root
  std::string asset;           ///< the asset as messages name it
};

/// The folder of `asset` and the root its URIs must stay in: `asset_root` when not empty (an
/// existing folder, else Error(io, "asset_root")), else the asset's own folder.
AssetFolder asset_folder(const std::filesystem::path& asset, const std::filesystem::path& asset_root);

/// The file a (percent-decoded) URI names, canonical. Throws Error(bad_file, asset) naming the URI
/// and why for a URI that is refused (absolute, with a scheme, with a NUL, escaping the root, a
/// symlink out of it), and Error(io, asset) for one that names no file.
std::filesystem::path resolve_uri(const AssetFolder& folder, const std::string& uri);

/// The bytes of a file resolve_uri() returned: a regular file on an ordinary file system, at most
/// `max_bytes` long, opened without following a symlink swapped in since. `uri` names it in
/// messages ("<asset>: uri '<uri>'"). Throws Error(bad_file)
/// for a device, FIFO, kernel file or a file over the limit, Error(io) when it cannot be read.
std::string read_confined(const std::filesystem::path& file, const AssetFolder& folder, const std::string& uri,
                          std::uint64_t max_bytes);

/// Largest image koma decodes and carries: 8192 x 8192 pixels (256 MiB as RGBA).
inline constexpr std::uint64_t kMaxImagePixels = std::uint64_t{8192} * 8192;

/// Checks an image before it may reach an output: a PNG or JPEG that stb_image decodes completely,
/// of at most kMaxImagePixels, whose header says so before anything is decoded; or a WebP or KTX2
/// image (glTF extensions koma cannot decode) whose signature is right. Returns its MIME type.
/// Throws Error(bad_file, where) naming what the bytes are instead.
std::string check_image(const unsigned char* bytes, std::size_t size, const std::string& where);

}  // namespace koma::io::asset_detail
