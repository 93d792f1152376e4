#include "asset_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <stb/stb_image.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "koma/core/error.hpp"
#include "koma/core/text.hpp"

namespace koma::io::asset_detail {

namespace fs = std::filesystem;

namespace {

// Whether `path` is `root` or lies below it (both absolute and normal).
bool within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

// "http:", "file:", "C:": RFC 3986 scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
bool has_scheme(const std::string& uri) {
  const size_t colon = uri.find(':');
  if (colon == std::string::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(uri[0]))) return false;
  return std::all_of(uri.begin(), uri.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

// Kernel interfaces that look like regular files: /proc, /sys and their kin.
bool kernel_file_system(long type) {
  switch (type) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
    case PSTOREFS_MAGIC:
    case EFIVARFS_MAGIC:
    case DEVPTS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

AssetFolder asset_folder(const fs::path& asset, const fs::path& asset_root) {
  std::error_code ec;
  AssetFolder out;
  out.asset = asset.string();
  const fs::path parent = asset.has_parent_path() ? asset.parent_path() : fs::path(".");
  out.dir = fs::canonical(parent, ec);
  if (ec) throw Error(ErrorCode::io, out.asset, fmt::format("cannot resolve its folder: {}", ec.message()));
  if (asset_root.empty()) {
    out.root = out.dir;
    return out;
  }
  out.root = fs::canonical(asset_root, ec);
  if (ec || !fs::is_directory(out.root, ec))
    throw Error(ErrorCode::io, "asset_root",
                fmt::format("'{}' is not an existing folder{}", printable(asset_root.string()),
                            ec ? fmt::format(" ({})", ec.message()) : std::string()));
  return out;
}

fs::path resolve_uri(const AssetFolder& folder, const std::string& uri) {
  const std::string& where = folder.asset;
  const std::string shown = printable(uri);
  const auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::bad_file, where,
                fmt::format("uri '{}' {}; koma reads an asset's files only from inside '{}' (`asset_root` names a "
                            "wider folder on purpose)",
                            shown, why, folder.root.string()));
  };
  if (uri.empty()) refuse("is empty");
  if (uri.find('\0') != std::string::npos) refuse("holds a NUL byte");
  if (has_scheme(uri))
    refuse(fmt::format("is a URL ('{}:'), not a relative file path: koma reads nothing over a network or by URL",
                       printable(uri.substr(0, uri.find(':')))));
  if (uri.front() == '/') refuse("is an absolute path");
  const fs::path candidate = (folder.dir / fs::path(uri)).lexically_normal();
  if (!within(candidate, folder.root))
    refuse(fmt::format("resolves to '{}', outside that folder", printable(candidate.string())));
  std::error_code ec;
  const fs::path real = fs::canonical(candidate, ec);
  if (ec)
    throw Error(ErrorCode::io, where,
                fmt::format("uri '{}': no file '{}' ({}); koma looks for it beside the asset only", shown,
                            printable(candidate.string()), ec.message()));
  if (!within(real, folder.root))
    refuse(fmt::format("goes through a symbolic link to '{}', outside that folder", printable(real.string())));
  return real;
}

std::string read_confined(const fs::path& file, const AssetFolder& folder, const std::string& uri,
                          std::uint64_t max_bytes) {
  const std::string where = fmt::format("{}: uri '{}'", folder.asset, printable(uri));
  const std::string shown = printable(file.string());
  Fd f;
  // O_NOFOLLOW: a symbolic link swapped in after resolve_uri() is refused, not followed.
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (f.fd < 0)
    throw Error(ErrorCode::io, where, fmt::format("cannot open '{}': {}", shown, std::strerror(errno)));
  struct stat st {};
  struct statfs sfs {};
  if (::fstat(f.fd, &st) != 0 || ::fstatfs(f.fd, &sfs) != 0)
    throw Error(ErrorCode::io, where, fmt::format("cannot inspect '{}': {}", shown, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorCode::bad_file, where,
                fmt::format("'{}' is not a regular file (a device, FIFO, socket or folder); koma reads none", shown));
  if (kernel_file_system(static_cast<long>(sfs.f_type)))
    throw Error(ErrorCode::bad_file, where,
                fmt::format("'{}' is a kernel interface file (/proc, /sys), not part of an asset", shown));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw Error(ErrorCode::bad_file, where,
                fmt::format("'{}' is {} bytes, more than the {} bytes it may hold", shown, st.st_size, max_bytes));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(f.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorCode::io, where, fmt::format("cannot read '{}': {}", shown, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

std::string check_image(const unsigned char* bytes, std::size_t size, const std::string& where) {
  const auto starts = [&](const char* magic, size_t n, size_t at = 0) {
    return size >= at + n && std::memcmp(bytes + at, magic, n) == 0;
  };
  const bool png = starts("\x89PNG\r\n\x1A\n", 8);
  const bool jpeg = starts("\xFF\xD8\xFF", 3);
  if (starts("RIFF", 4) && starts("WEBP", 4, 8)) return "image/webp";
  if (starts("\xABKTX 20\xBB\r\n\x1A\n", 12)) return "image/ktx2";
  if (!png && !jpeg) {
    std::string head;
    for (size_t i = 0; i < std::min<size_t>(size, 8); ++i) head += fmt::format("{}{:02x}", i ? " " : "", bytes[i]);
    throw Error(ErrorCode::bad_file, where,
                fmt::format("is not an image: {} bytes starting {}; koma carries PNG and JPEG images (and WebP, "
                            "KTX2 by signature) into its outputs, nothing else",
                            size, head.empty() ? "(none)" : head));
  }
  if (size > static_cast<std::size_t>(INT32_MAX))
    throw Error(ErrorCode::bad_file, where, fmt::format("image of {} bytes is too large", size));
  int w = 0, h = 0, comp = 0;
  const int len = static_cast<int>(size);
  if (!stbi_info_from_memory(bytes, len, &w, &h, &comp))
    throw Error(ErrorCode::bad_file, where,
                fmt::format("{} image header does not decode: {}", png ? "PNG" : "JPEG",
                            printable(stbi_failure_reason())));
  if (w <= 0 || h <= 0 || static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h) > kMaxImagePixels)
    throw Error(ErrorCode::bad_file, where,
                fmt::format("{} image of {} x {} pixels: koma decodes at most {} pixels", png ? "PNG" : "JPEG", w, h,
                            kMaxImagePixels));
  const std::unique_ptr<unsigned char, void (*)(void*)> pixels(stbi_load_from_memory(bytes, len, &w, &h, &comp, 0),
                                                               &stbi_image_free);
  if (!pixels)
    throw Error(ErrorCode::bad_file, where,
                fmt::format("{} image ({} x {}) does not decode: {}", png ? "PNG" : "JPEG", w, h,
                            printable(stbi_failure_reason())));
  return png ? "image/png" : "image/jpeg";
}

}  // namespace koma::io::asset_detail
