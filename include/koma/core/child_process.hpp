// Child processes: the one place in koma that starts another process: another program (ffmpeg,
// ffprobe, the signal-safe `rm -rf` of the temporary-file table), or a forked copy of koma doing
// isolated work (run_isolated, below).
//
// A ChildProcess is a program started with its standard streams wired to what the caller asked
// for: stdin from /dev/null or a socket the caller writes (a child that exits early is reported as
// an error code, never as a SIGPIPE that kills koma), stdout into a pipe the caller reads or into
// the log, stderr always into the log (a file, removed when the ChildProcess ends). Every running
// child is in the table that remove_temp_files_now() kills on a hard exit (Ctrl-C, SIGTERM), and
// destroying a ChildProcess whose child is still running kills it (SIGKILL) and reaps it, so an
// exception never leaves a process behind.
//
// Isolated work (run_isolated): a function run in a forked copy of koma under memory and time
// limits, so that a third-party parser that crashes, aborts, recurses without end or allocates
// what a hostile file claims takes only the copy down. The copy does the work and nothing else:
// the default action for SIGINT and SIGTERM (Ctrl-C ends it with koma), no core dump, no file
// descriptor of koma's but stderr, killed when koma ends; it hands back bytes through a pipe and
// leaves with _exit (no atexit handlers, no static destructors, no flushing of koma's buffers).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace koma {

/// What to start and how its standard streams are connected.
struct ChildSpec {
  /// The command line; args[0] is the program: a path (with a '/'), or a name looked up on PATH.
  std::vector<std::string> args;
  /// true: write_all() feeds the child's stdin (a Unix socket); false (default): stdin is /dev/null.
  bool write_stdin = false;
  /// true: read_full() returns the child's stdout (a pipe); false (default): stdout goes to the log.
  bool read_stdout = false;
  /// Where stderr (and stdout unless read_stdout) is captured; created or truncated, removed when
  /// the ChildProcess ends. Empty (default): a new temporary file in /tmp.
  std::filesystem::path log;
  /// Appended to the error when the program cannot be started, e.g. "install ffmpeg (Debian:
  /// apt-get install ffmpeg)"; empty: nothing.
  std::string install_hint;
};

/// A running child process (see the file comment). Not copyable or movable: it owns the process.
class ChildProcess {
 public:
  /// Starts spec.args. Throws Error(invalid_settings) when args is empty, Error(io) naming the
  /// program when a pipe or the log cannot be made or the program cannot be started
  /// ("cannot run P (No such file or directory); <install_hint>").
  explicit ChildProcess(ChildSpec spec);
  /// Kills (SIGKILL) and reaps a child that is still running; removes the log.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Sends every byte to the child's stdin (spec.write_stdin). Returns an empty code, or the
  /// system error (broken pipe, connection reset) when the child stopped reading; the child then
  /// still has to be reaped with wait().
  [[nodiscard]] std::error_code write_all(std::span<const std::byte> bytes) noexcept;
  /// Closes koma's end of the child's stdin: the child reads the end of its input.
  void close_stdin() noexcept;
  /// Reads exactly `size` bytes of the child's stdout (spec.read_stdout) into `out`; returns the
  /// count read, less than `size` only at the end of the stream.
  std::size_t read_full(std::span<std::byte> out) noexcept;
  /// Closes koma's ends of the pipes and waits for the child to end. Returns its exit status,
  /// or -1 when it was ended by a signal. Calling it again returns the same status.
  int wait() noexcept;
  /// Kills (SIGKILL) and reaps the child if it is still running.
  void kill() noexcept;
  /// Everything the child wrote to its log so far (stderr, and stdout unless it was read).
  std::string log_text() const;
  /// The program, args[0], for messages.
  const std::string& program() const noexcept { return spec_.args.front(); }

 private:
  ChildSpec spec_;
  pid_t pid_ = -1;
  int in_fd_ = -1;   // our end of the child's stdin (a socket)
  int out_fd_ = -1;  // our end of the child's stdout (a pipe)
  int status_ = -1;  // wait()'s answer once the child is reaped
  int slot_ = -1;    // pid_ in the table of children killed on a hard exit
  int log_slot_ = -1;  // the log in the table of temporary files removed on a hard exit
};

/// True when `program` can be started: a path (with a '/') that is executable, or a name found as
/// an executable file (not a folder) in a folder of PATH ("/usr/local/bin:/usr/bin:/bin" when
/// PATH is unset).
bool program_available(const std::string& program);

/// The table of running children behind remove_temp_files_now(): register_child returns a slot
/// (or -1 when the table is full), unregister_child frees it once the child is reaped.
/// ChildProcess and run_isolated register their children; nothing else needs to.
int register_child(pid_t pid) noexcept;
void unregister_child(int slot) noexcept;
/// Sends SIGKILL to every registered child. Async-signal-safe.
void kill_children_now() noexcept;
/// Removes a folder and everything in it by running `/bin/rm -rf PATH` and waiting for it, with
/// async-signal-safe calls only (fork, execv, waitpid), for a signal handler.
void remove_tree_now(const char* path) noexcept;

/// Limits on isolated work.
struct IsolationLimits {
  /// Address space the child may map beyond what the process maps when it starts, bytes
  /// (RLIMIT_AS). Default 1 GiB.
  std::uint64_t memory_bytes = std::uint64_t{1} << 30;
  /// CPU time, seconds (RLIMIT_CPU). Default 120 s.
  double cpu_seconds = 120.0;
  /// Wall-clock time, seconds; the child is killed (SIGKILL) when it is over. Default 600 s.
  double wall_seconds = 600.0;
};

/// How isolated work ended.
struct IsolatedOutcome {
  enum class End : std::uint8_t {
    returned,       ///< the work returned `bytes`
    out_of_memory,  ///< it threw std::bad_alloc (it met limits.memory_bytes)
    exception,      ///< it threw another exception, not koma::Error; `detail` is its what()
    signal,         ///< a signal ended it (a crash: SIGSEGV, SIGABRT, SIGBUS, ...; or SIGINT / SIGTERM)
    cpu_limit,      ///< it used limits.cpu_seconds of CPU time
    wall_limit,     ///< it ran limits.wall_seconds and was killed
  };
  End end = End::returned;
  std::string bytes;   ///< returned: what the work returned
  int signal = 0;      ///< signal: the signal's number
  std::string detail;  ///< exception: its text; signal: the signal's name and description
  /// What the child wrote to stderr (its last 16 KiB), however it ended: a parser's last words
  /// before it aborted, for the caller to quote (it is not printed). A sanitizer's report (asan
  /// builds) is also written to koma's stderr whole.
  std::string said;
};

/// Runs `work` in a forked child under `limits` and reports how it ended. A koma::Error thrown by
/// `work` is thrown again in the caller, with its code, context and message. Throws Error(io) when
/// no child can be made (no pipe, no fork). `work` must not start threads or use a thread pool
/// (the child has only the calling thread), and must not need the Python interpreter.
IsolatedOutcome run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits = {});

/// Whether a fork from a process whose other threads allocate memory leaves the child a working
/// allocator. glibc's malloc takes its locks across fork(); the ASan runtime of clang 14 (Debian 12)
/// does not: a thread that holds a size-class lock while another thread forks leaves that lock held
/// forever in the child, whose first allocation from that class then waits until the wall limit
/// (seen in CI as `koma batch --jobs 2` over FBX files stuck for 492 s). Callers that fork from
/// several threads at once (the batch runner) run one item at a time where this is false.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kForkSafeAllocator = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kForkSafeAllocator = false;
#else
inline constexpr bool kForkSafeAllocator = true;
#endif
#else
inline constexpr bool kForkSafeAllocator = true;
#endif

/// "SIGSEGV (invalid memory reference)" for a signal number.
std::string describe_signal(int signal);

}  // namespace koma
