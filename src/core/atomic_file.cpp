#include "koma/core/atomic_file.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

#include "koma/core/error.hpp"

namespace koma {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(fs::path destination) : destination_(std::move(destination)) {
  fs::path dir = destination_.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(ErrorCode::io, destination_.string(),
                fmt::format("cannot write: directory '{}' does not exist", dir.string()));
  }
  if (fs::is_directory(destination_, ec)) {
    throw Error(ErrorCode::io, destination_.string(), "cannot write: it is a directory");
  }
  // Unique per process and object; hidden so file browsers and globs skip it.
  std::random_device rd;
  temp_ = dir / fmt::format(".{}.koma-{}-{:08x}.tmp", destination_.filename().string(), ::getpid(), rd());
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  fs::rename(temp_, destination_, ec);
  if (ec) {
    throw Error(ErrorCode::io, destination_.string(), fmt::format("cannot write: {}", ec.message()));
  }
  committed_ = true;
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  AtomicFile file(path);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    if (!out) throw Error(ErrorCode::io, path.string(), "cannot open for writing");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error(ErrorCode::io, path.string(), "write failed (disk full?)");
  }
  file.commit();
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(ErrorCode::io, path.string(), "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io, path.string(), "cannot open: no such file or no permission");
  // One allocation of the file's size and one read (a stream copy grows by doubling: a 750 MB
  // take was copied about twice over and page-faulted three times); then whatever is left if the
  // file grew meanwhile.
  std::string text;
  const auto size = fs::file_size(path, ec);
  if (!ec && size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorCode::io, path.string(), "read failed");
  if (!in.eof()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    if (in.bad()) throw Error(ErrorCode::io, path.string(), "read failed");
    text += std::move(rest).str();
  }
  return text;
}

FileBytes::FileBytes(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size_ = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p != MAP_FAILED) {
      map_ = p;
      ::madvise(map_, size_, MADV_SEQUENTIAL);
    }
  }
  if (fd >= 0) ::close(fd);
  if (!map_) {
    size_ = 0;
    copy_ = read_file(path);  // not mappable (a pipe, an empty file, no mmap): read it
  }
}

FileBytes::~FileBytes() {
  if (map_) ::munmap(map_, size_);
}

}  // namespace koma
