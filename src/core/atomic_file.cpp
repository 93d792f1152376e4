#include "koma/core/atomic_file.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"

namespace koma {

namespace fs = std::filesystem;

namespace {
// The temporary paths of live AtomicFiles, for remove_temp_files_now() in a signal handler: a
// fixed table of C strings (no allocation or locking when the handler reads it).
constexpr int kTempSlots = 256;
std::atomic<char*> g_temps[kTempSlots];
}  // namespace

int register_temp(const fs::path& path) {
  char* copy = ::strdup(path.c_str());
  if (!copy) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    char* expected = nullptr;
    if (g_temps[i].compare_exchange_strong(expected, copy)) return i;
  }
  std::free(copy);  // more than kTempSlots outputs at once: this one is only removed by unwinding
  return -1;
}

void unregister_temp(int slot) noexcept {
  if (slot < 0 || slot >= kTempSlots) return;
  std::free(g_temps[slot].exchange(nullptr));
}

void remove_temp_files_now() noexcept {
  kill_children_now();
  for (auto& t : g_temps) {
    const char* path = t.load();
    if (!path || ::unlink(path) == 0 || errno == ENOENT) continue;
    if (::rmdir(path) != 0 && errno == ENOTEMPTY) remove_tree_now(path);
  }
}

void require_output_path(const fs::path& destination) {
  fs::path dir = destination.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(ErrorCode::io, destination.string(),
                fmt::format("cannot write: directory '{}' does not exist", dir.string()));
  }
  if (fs::is_directory(destination, ec)) {
    throw Error(ErrorCode::io, destination.string(), "cannot write: it is a directory");
  }
}

AtomicFile::AtomicFile(fs::path destination) : destination_(std::move(destination)) {
  require_output_path(destination_);
  const fs::path dir = destination_.parent_path().empty() ? fs::path(".") : destination_.parent_path();
  // Unique per process and object; hidden so file browsers and globs skip it.
  std::random_device rd;
  temp_ = dir / fmt::format(".{}.koma-{}-{:08x}.tmp", destination_.filename().string(), ::getpid(), rd());
  slot_ = register_temp(temp_);
}

AtomicFile::~AtomicFile() {
  unregister_temp(slot_);
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
  unregister_temp(slot_);
  slot_ = -1;
}

OutputBatch::~OutputBatch() {
  for (const Staged& s : staged_) {
    unregister_temp(s.slot);
    if (!committed_) {
      std::error_code ec;
      fs::remove_all(s.temp, ec);
    }
  }
}

fs::path OutputBatch::stage(const fs::path& destination) {
  require_output_path(destination);
  const fs::path dir = destination.parent_path().empty() ? fs::path(".") : destination.parent_path();
  std::random_device rd;
  Staged s;
  s.destination = destination;
  s.temp = dir / fmt::format(".{}.koma-{}-{:08x}.tmp{}", destination.filename().string(), ::getpid(), rd(),
                             destination.extension().string());
  s.slot = register_temp(s.temp);
  staged_.push_back(s);
  return staged_.back().temp;
}

Error OutputBatch::named(const Error& e) const {
  std::string context = e.context(), message = e.message();
  for (const Staged& s : staged_) {
    const std::string from = s.temp.string(), to = s.destination.string();
    for (std::string* text : {&context, &message}) {
      for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size()))
        text->replace(at, from.size(), to);
    }
  }
  return Error(e.code(), context, message);
}

void OutputBatch::commit() {
  struct Done {
    fs::path destination, backup;
  };
  std::vector<Done> done;
  auto roll_back = [&] {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      std::error_code ec;
      if (it->backup.empty()) fs::remove(it->destination, ec);
      else fs::rename(it->backup, it->destination, ec);
    }
  };
  for (const Staged& s : staged_) {
    std::error_code ec;
    if (!fs::exists(s.temp, ec)) {
      roll_back();
      throw Error(ErrorCode::io, s.destination.string(), "cannot write: its content was not produced");
    }
    // The previous file stays reachable under a hard link until every output is in place.
    fs::path backup;
    if (fs::exists(s.destination, ec)) {
      backup = s.temp;
      backup += ".old";
      fs::create_hard_link(s.destination, backup, ec);
      if (ec) backup.clear();
    }
    fs::rename(s.temp, s.destination, ec);
    if (ec) {
      if (!backup.empty()) fs::remove(backup, ec);
      roll_back();
      throw Error(ErrorCode::io, s.destination.string(), fmt::format("cannot write: {}", ec.message()));
    }
    done.push_back({s.destination, backup});
  }
  for (const Done& d : done) {
    std::error_code ec;
    if (!d.backup.empty()) fs::remove(d.backup, ec);
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

void require_input_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw Error(ErrorCode::io, path.string(),
                errno == ENOENT ? std::string("cannot open: no such file") : fmt::format("cannot open: {}", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) throw Error(ErrorCode::io, path.string(), "is a directory; expected a file");
  if (!S_ISREG(st.st_mode)) {
    throw Error(ErrorCode::io, path.string(),
                "is not a regular file (a FIFO, device or socket); save the stream to a file first");
  }
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  require_input_file(path);
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
  require_input_file(path);
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
