// The one file in koma that starts processes (tests/arch `arch.child_process` holds it to that).
#include "koma/core/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

extern char** environ;

namespace koma {

namespace fs = std::filesystem;

namespace {

constexpr int kChildSlots = 64;
std::atomic<pid_t> g_children[kChildSlots];

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Opens the log: the given path (created or truncated), or a new temporary file in /tmp.
int open_log(ChildSpec& spec) {
  if (spec.log.empty()) {
    std::string name = "/tmp/koma-" + fs::path(spec.args.front()).filename().string() + "-XXXXXX";
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) spec.log = name;
    return fd;
  }
  return ::open(spec.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

// The pipes a spec asks for: {child's stdin end, our stdin end, our stdout end, child's stdout end}.
struct Pipes {
  int child_in = -1, in = -1, out = -1, child_out = -1;
  void close_all() noexcept {
    for (int* fd : {&child_in, &in, &out, &child_out}) close_fd(*fd);
  }
};

// Creates the pipes (close-on-exec: a child started by another thread at the same time inherits
// none of them); returns the errno of a failure, 0 on success.
int make_pipes(const ChildSpec& spec, Pipes& p) {
  if (spec.write_stdin) {
    // A socket pair rather than a pipe: send(MSG_NOSIGNAL) reports a child that exited as EPIPE.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return errno;
    p.in = sv[0];
    p.child_in = sv[1];
    int buf = 4 << 20;  // large send buffer: fewer wake-ups per 1280x720x4 frame
    ::setsockopt(p.in, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    ::shutdown(p.in, SHUT_RD);
  }
  if (spec.read_stdout) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
    p.out = fds[0];
    p.child_out = fds[1];
  }
  return 0;
}

}  // namespace

ChildProcess::ChildProcess(ChildSpec spec) : spec_(std::move(spec)) {
  if (spec_.args.empty() || spec_.args.front().empty()) {
    throw Error(ErrorCode::invalid_settings, "child process", "no program to run");
  }
  const std::string& program = spec_.args.front();
  const int log_fd = open_log(spec_);
  if (log_fd < 0) {
    throw Error(ErrorCode::io, program, fmt::format("cannot create a file for {}'s messages: {}", program,
                                                     std::strerror(errno)));
  }
  log_slot_ = register_temp(spec_.log);
  Pipes pipes;
  if (const int err = make_pipes(spec_, pipes); err != 0) {
    pipes.close_all();
    ::close(log_fd);
    throw Error(ErrorCode::io, program, fmt::format("cannot create a pipe: {}", std::strerror(err)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (spec_.write_stdin) posix_spawn_file_actions_adddup2(&fa, pipes.child_in, 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, spec_.read_stdout ? pipes.child_out : log_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
  std::vector<char*> argv;
  for (std::string& a : spec_.args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close_fd(pipes.child_in);
  close_fd(pipes.child_out);
  ::close(log_fd);
  in_fd_ = pipes.in;
  out_fd_ = pipes.out;
  if (rc != 0) {
    close_fd(in_fd_);
    close_fd(out_fd_);
    throw Error(ErrorCode::io, program,
                fmt::format("cannot run {} ({}){}{}", program, std::strerror(rc),
                            spec_.install_hint.empty() ? "" : "; ", spec_.install_hint));
  }
  pid_ = pid;
  slot_ = register_child(pid);
}

ChildProcess::~ChildProcess() {
  kill();
  unregister_temp(log_slot_);
  std::error_code ec;
  if (!spec_.log.empty()) fs::remove(spec_.log, ec);
}

std::error_code ChildProcess::write_all(std::span<const std::byte> bytes) noexcept {
  const std::byte* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::send(in_fd_, data, left, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::error_code(errno, std::system_category());
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  return {};
}

void ChildProcess::close_stdin() noexcept { close_fd(in_fd_); }

std::size_t ChildProcess::read_full(std::span<std::byte> out) noexcept {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = ::read(out_fd_, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

int ChildProcess::wait() noexcept {
  close_fd(in_fd_);
  close_fd(out_fd_);
  if (pid_ <= 0) return status_;
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  unregister_child(slot_);
  slot_ = -1;
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return status_;
}

void ChildProcess::kill() noexcept {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  wait();
}

std::string ChildProcess::log_text() const {
  std::ifstream in(spec_.log, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool program_available(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path dir = end > start ? fs::path(dirs.substr(start, end - start)) : fs::path(".");
    const std::string candidate = (dir / program).string();
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate, ec)) return true;
    start = end + 1;
  }
  return false;
}

int register_child(pid_t pid) noexcept {
  for (int i = 0; i < kChildSlots; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;
}

void unregister_child(int slot) noexcept {
  if (slot >= 0 && slot < kChildSlots) g_children[slot].store(0);
}

void kill_children_now() noexcept {
  for (auto& c : g_children) {
    if (const pid_t pid = c.load(); pid > 0) ::kill(pid, SIGKILL);
  }
}

void remove_tree_now(const char* path) noexcept {
  const pid_t pid = ::fork();
  if (pid == 0) {
    char rm[] = "rm", rf[] = "-rf";
    char* argv[] = {rm, rf, const_cast<char*>(path), nullptr};
    ::execv("/bin/rm", argv);
    ::_exit(127);
  }
  if (pid > 0) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
}

// ---- Isolated work (run_isolated) ----

namespace {

// The child's report: one tag byte, then the payload.
constexpr char kReturned = 'R';   // + the bytes
constexpr char kError = 'E';      // + code byte, 8-byte context length, context, message
constexpr char kNoMemory = 'M';   // nothing more
constexpr char kException = 'X';  // + what()

std::string u64(std::uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

// Writes everything or gives up (the parent is gone); the child then ends anyway.
void write_fully(int fd, const std::string& bytes) noexcept {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Bytes of address space the process maps now (VmSize), so the child's limit is relative to it:
// an interpreter or a sanitizer may map far more than a file needs.
std::uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// The child, from fork to _exit. Only the calling thread exists here: nothing may wait for
// another thread (no thread pool), and nothing of koma's state is torn down (_exit).
[[noreturn]] void child_main(int fd, int err, pid_t parent, std::uint64_t address_space, const IsolationLimits& limits,
                             const std::function<std::string()>& work) noexcept {
  // What a parser writes to stderr (assimp's "ai_assert failure in ..." before it aborts) goes to
  // `err`, for the parent to put in its error or pass on; nothing reaches the terminal raw.
  if (err >= 0) ::dup2(err, STDERR_FILENO);
  for (int sig : {SIGINT, SIGTERM, SIGALRM, SIGXCPU, SIGPIPE, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
    std::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // koma gone (even by SIGKILL): the child goes too
  if (::getppid() != parent) ::_exit(125);
  // No descriptor of koma's but stdin, stdout, stderr and the report pipe.
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd - 1), 0);
  ::close_range(static_cast<unsigned>(fd + 1), ~0U, 0);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const rlimit as{address_space, address_space};
  ::setrlimit(RLIMIT_AS, &as);
  const auto cpu = static_cast<rlim_t>(std::ceil(std::max(1.0, limits.cpu_seconds)));
  const rlimit cpu_limit{cpu, cpu + 1};
  ::setrlimit(RLIMIT_CPU, &cpu_limit);
  std::string report;
  try {
    const std::string bytes = work();
    write_fully(fd, std::string(1, kReturned));
    write_fully(fd, bytes);
    ::close(fd);
    ::_exit(0);
  } catch (const Error& e) {
    report = std::string(1, kError) + static_cast<char>(e.code()) + u64(e.context().size()) + e.context() +
             e.message();
  } catch (const std::bad_alloc&) {
    report.assign(1, kNoMemory);  // assign() needs no allocation beyond the string's buffer
  } catch (const std::exception& e) {
    try {
      report = kException + std::string(e.what());
    } catch (...) {
      report.assign(1, kNoMemory);
    }
  } catch (...) {
    report = std::string(1, kException) + "an exception that is not a std::exception";
  }
  write_fully(fd, report);
  ::close(fd);
  ::_exit(0);
}

// Reads the child's report until it closes the pipe; false when the wall-clock limit passed first.
bool read_report(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return true;  // cannot wait: treat as closed, the status says the rest
    if (r <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The outcome from the child's exit status, its CPU time and its report.
IsolatedOutcome outcome_of(int status, const rusage& usage, const IsolationLimits& limits, std::string report) {
  IsolatedOutcome out;
  if (WIFSIGNALED(status)) {
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    const int sig = WTERMSIG(status);
    if (sig == SIGXCPU || (sig == SIGKILL && cpu >= std::ceil(std::max(1.0, limits.cpu_seconds)) - 0.05)) {
      out.end = IsolatedOutcome::End::cpu_limit;
      return out;
    }
    out.end = IsolatedOutcome::End::signal;
    out.signal = sig;
    out.detail = describe_signal(sig);
    return out;
  }
  if (report.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // Ended without a report: _exit or exit from inside a library, or std::terminate's abort
    // caught as an exit by a sanitizer.
    out.end = IsolatedOutcome::End::exception;
    out.detail = fmt::format("the child process exited with status {} and no answer",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return out;
  }
  const char tag = report.front();
  if (tag == kReturned) {
    out.bytes = report.substr(1);
  } else if (tag == kNoMemory) {
    out.end = IsolatedOutcome::End::out_of_memory;
  } else if (tag == kError && report.size() >= 10) {
    std::uint64_t n = 0;
    std::memcpy(&n, report.data() + 2, 8);
    if (n > report.size() - 10) n = report.size() - 10;
    throw Error(static_cast<ErrorCode>(report[1]), report.substr(10, n), report.substr(10 + n));
  } else {
    out.end = IsolatedOutcome::End::exception;
    out.detail = report.substr(1);
  }
  return out;
}

// The child's stderr: an anonymous file (no pipe to drain while waiting; a parser that writes
// megabytes cannot block on it), of which the parent reads the last kStderrKept bytes.
constexpr size_t kStderrKept = 16384;
struct ChildStderr {
  int fd = ::memfd_create("koma-child-stderr", MFD_CLOEXEC);  // -1 (then stderr is inherited) if it fails
  ChildStderr() = default;
  ChildStderr(const ChildStderr&) = delete;
  ChildStderr& operator=(const ChildStderr&) = delete;
  ~ChildStderr() {
    if (fd >= 0) ::close(fd);
  }
  std::string text() const {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) return {};
    const auto size = static_cast<size_t>(st.st_size);
    const size_t n = std::min(size, kStderrKept);
    std::string out(n, '\0');
    const ssize_t got = ::pread(fd, out.data(), n, static_cast<off_t>(size - n));
    out.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return out;
  }
};

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

}  // namespace

std::string describe_signal(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  const char* text = ::sigdescr_np(signal);
  return fmt::format("SIG{} ({})", abbrev ? abbrev : std::to_string(signal).c_str(),
                     text ? text : "unknown signal");
}

IsolatedOutcome run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits) {
  Pipe pipe;
  if (::pipe2(pipe.fd, O_CLOEXEC) != 0)
    throw Error(ErrorCode::io, "", fmt::format("cannot make a pipe for a child process: {}", std::strerror(errno)));
  const std::uint64_t address_space = mapped_bytes() + limits.memory_bytes;
  const pid_t parent = ::getpid();
  const ChildStderr err;
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrorCode::io, "", fmt::format("cannot start a child process: {}", std::strerror(errno)));
  if (pid == 0) child_main(pipe.fd[1], err.fd, parent, address_space, limits, work);
  const int slot = register_child(pid);  // killed with koma on a hard exit
  ::close(pipe.fd[1]);
  pipe.fd[1] = -1;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(std::max(0.001, limits.wall_seconds) * 1000));
  std::string report;
  const bool in_time = read_report(pipe.fd[0], deadline, report);
  if (!in_time) ::kill(pid, SIGKILL);
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  unregister_child(slot);
  std::string said = err.text();
  // A sanitizer's report from the child (asan builds) is for the developer: shown whole, as before.
  if (said.find("Sanitizer") != std::string::npos) write_fully(STDERR_FILENO, said);
  IsolatedOutcome out;
  if (!in_time) {
    out.end = IsolatedOutcome::End::wall_limit;
  } else {
    out = outcome_of(status, usage, limits, std::move(report));
  }
  out.said = std::move(said);
  return out;
}

}  // namespace koma
