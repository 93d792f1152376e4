// The one child-process runner: streams, exit status, errors, and no process or log left behind.
// run_isolated (issue 45): whatever the work does in its child process (returns, throws, crashes,
// allocates past its limit, spins), the caller gets an answer and goes on.
#include "koma/core/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "koma/core/error.hpp"

namespace koma {
namespace {

namespace fs = std::filesystem;

std::string read_all(ChildProcess& child) {
  std::string out;
  std::byte buf[64];
  for (std::size_t n; (n = child.read_full(buf)) > 0;) out.append(reinterpret_cast<const char*>(buf), n);
  return out;
}

ChildSpec sh(const std::string& script) {
  ChildSpec spec;
  spec.args = {"/bin/sh", "-c", script};
  return spec;
}

TEST(ChildProcess, WritesStdinAndReadsStdout) {
  ChildSpec spec = sh("tr a-z A-Z");
  spec.write_stdin = true;
  spec.read_stdout = true;
  ChildProcess child(std::move(spec));
  const std::string text = "koma child";
  ASSERT_FALSE(child.write_all(std::as_bytes(std::span(text))));
  EXPECT_FALSE(child.write_all({}));  // nothing to send is not an error
  child.close_stdin();                // the end of tr's input
  EXPECT_EQ(read_all(child), "KOMA CHILD");
  EXPECT_EQ(child.wait(), 0);
}

TEST(ChildProcess, KillEndsAWaitingChild) {
  ChildSpec spec = sh("cat");
  spec.write_stdin = true;
  ChildProcess child(std::move(spec));
  child.kill();  // cat waits for input that never comes
  EXPECT_EQ(child.wait(), -1);
}

TEST(ChildProcess, ExitStatusAndLog) {
  ChildProcess child(sh("echo to-stdout; echo to-stderr >&2; exit 3"));
  EXPECT_EQ(child.wait(), 3);
  EXPECT_EQ(child.wait(), 3);  // asking again gives the same answer
  // stdout was not read: it goes to the log with stderr.
  EXPECT_EQ(child.log_text(), "to-stdout\nto-stderr\n");
}

TEST(ChildProcess, ReadStdoutKeepsItOutOfTheLog) {
  ChildSpec spec = sh("echo out; echo err >&2");
  spec.read_stdout = true;
  ChildProcess child(std::move(spec));
  EXPECT_EQ(read_all(child), "out\n");
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(child.log_text(), "err\n");
}

TEST(ChildProcess, StdinIsEmptyUnlessWritten) {
  ChildSpec spec = sh("wc -c");
  spec.read_stdout = true;
  ChildProcess child(std::move(spec));
  const std::string out = read_all(child);
  EXPECT_EQ(std::stoi(out), 0) << out;
  EXPECT_EQ(child.wait(), 0);
}

TEST(ChildProcess, WritingToAChildThatExitedIsAnErrorNotASignal) {
  ChildSpec spec = sh("exit 0");
  spec.write_stdin = true;
  ChildProcess child(std::move(spec));
  // More than any socket buffer: the child exits without reading, so a send must fail with EPIPE
  // (or a reset) instead of raising SIGPIPE in the test process.
  const std::vector<std::byte> big(64 << 20);
  const std::error_code ec = child.write_all(big);
  ASSERT_TRUE(ec);
  EXPECT_TRUE(ec.value() == EPIPE || ec.value() == ECONNRESET) << ec.message();
  EXPECT_EQ(child.wait(), 0);
}

TEST(ChildProcess, MissingProgramIsAnIoErrorWithTheHint) {
  ChildSpec spec;
  spec.args = {"koma-no-such-program-x7"};
  spec.install_hint = "install it (Debian: apt-get install x7)";
  try {
    ChildProcess child(std::move(spec));
    FAIL() << "started a program that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_EQ(e.context(), "koma-no-such-program-x7");
    EXPECT_NE(e.message().find("cannot run koma-no-such-program-x7 ("), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("; install it (Debian: apt-get install x7)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ChildProcess(ChildSpec{}), Error);  // no program at all
}

TEST(ChildProcess, DestroyingARunningChildKillsItAndRemovesTheLog) {
  pid_t pid = -1;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ChildSpec spec = sh("echo $$; exec sleep 100");
    spec.read_stdout = true;
    ChildProcess child(std::move(spec));
    std::byte buf[32];
    const std::size_t n = child.read_full(std::span(buf).first(1));
    ASSERT_EQ(n, 1u);
    std::string digits(reinterpret_cast<const char*>(buf), n);
    for (std::byte b; child.read_full(std::span(&b, 1)) == 1 && b != std::byte{'\n'};) digits += static_cast<char>(b);
    pid = std::stoi(digits);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0) << "the child is still running";
  EXPECT_EQ(errno, ESRCH);
}

TEST(ChildProcess, GivenLogIsUsedAndRemoved) {
  const fs::path log = fs::temp_directory_path() / "koma_child_process_test.log";
  {
    ChildSpec spec = sh("echo hello >&2");
    spec.log = log;
    ChildProcess child(std::move(spec));
    EXPECT_EQ(child.wait(), 0);
    EXPECT_TRUE(fs::exists(log));
    EXPECT_EQ(child.log_text(), "hello\n");
  }
  EXPECT_FALSE(fs::exists(log));
}

TEST(ChildProcess, ProgramAvailable) {
  EXPECT_TRUE(program_available("sh"));
  EXPECT_TRUE(program_available("/bin/sh"));
  EXPECT_FALSE(program_available("koma-no-such-program-x7"));
}

using End = IsolatedOutcome::End;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

TEST(RunIsolated, ReturnsTheBytesOfTheWork) {
  const std::string big(3'000'000, 'k');  // more than a pipe holds: the caller must drain it
  const IsolatedOutcome r = run_isolated([&] { return big + std::string(1, '\0') + "end"; });
  EXPECT_EQ(r.end, End::returned);
  EXPECT_EQ(r.bytes.size(), big.size() + 4);
  EXPECT_EQ(r.bytes.substr(r.bytes.size() - 3), "end");
}

TEST(RunIsolated, AnErrorComesBackUnchanged) {
  try {
    run_isolated([]() -> std::string { throw Error(ErrorCode::bad_data, "walk.fbx: byte 12", "no frames"); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "walk.fbx: byte 12");
    EXPECT_EQ(e.message(), "no frames");
  }
}

TEST(RunIsolated, ACrashEndsOnlyTheChild) {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) {
    const IsolatedOutcome r = run_isolated([sig]() -> std::string {
      std::raise(sig);
      return "survived";
    });
    EXPECT_EQ(r.end, End::signal) << sig;
    EXPECT_EQ(r.signal, sig);
    EXPECT_NE(r.detail.find("SIG"), std::string::npos) << r.detail;
  }
}

TEST(RunIsolated, WhatTheChildSaysIsKeptNotPrinted) {
  // A parser's last words before it aborts (assimp: "ai_assert failure in ...") come back with the
  // outcome, for the caller to quote; they do not reach koma's stderr raw. Past 16 KiB, the end.
  testing::internal::CaptureStderr();
  const IsolatedOutcome r = run_isolated([]() -> std::string {
    const std::string filler(40000, 'x');
    std::fputs(filler.c_str(), stderr);
    std::fputs("\nai_assert failure in Converter.cpp(12): out_idx != nullptr\n", stderr);
    std::fflush(stderr);
    std::abort();
  });
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.end, End::signal);
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_EQ(r.said.size(), 16384u);
  EXPECT_NE(r.said.find("ai_assert failure in Converter.cpp(12): out_idx != nullptr\n"), std::string::npos);
  EXPECT_EQ(printed.find("ai_assert"), std::string::npos) << printed;
  const IsolatedOutcome quiet = run_isolated([] { return std::string("ok"); });
  EXPECT_TRUE(quiet.said.empty());
}

TEST(RunIsolated, OtherExceptionsAreReported) {
  const IsolatedOutcome r = run_isolated([]() -> std::string {
    const std::vector<int> none;
    return std::to_string(none.at(3));
  });
  EXPECT_EQ(r.end, End::exception);
  EXPECT_NE(r.detail.find("range"), std::string::npos) << r.detail;
}

TEST(RunIsolated, MemoryPastTheLimitIsRefused) {
  if (kAsan) GTEST_SKIP() << "ASan reports a failed allocation itself instead of throwing std::bad_alloc";
  IsolationLimits limits;
  limits.memory_bytes = std::uint64_t{64} << 20;
  const IsolatedOutcome r = run_isolated(
      [] {
        std::vector<char> v(std::size_t{1} << 30, 1);  // 1 GiB, touched
        return std::string(1, v[12345]);
      },
      limits);
  EXPECT_EQ(r.end, End::out_of_memory);
  // Within the limit the same work succeeds.
  const IsolatedOutcome ok = run_isolated(
      [] {
        std::vector<char> v(std::size_t{16} << 20, 1);
        return std::string(1, v[12345]);
      },
      limits);
  EXPECT_EQ(ok.end, End::returned);
}

TEST(RunIsolated, CpuAndWallClockLimits) {
  IsolationLimits limits;
  limits.cpu_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  const IsolatedOutcome spin = run_isolated(
      []() -> std::string {
        volatile unsigned long x = 0;
        for (;;) x = x + 1;
      },
      limits);
  EXPECT_EQ(spin.end, End::cpu_limit);
  limits.cpu_seconds = 100;
  limits.wall_seconds = 0.5;
  const IsolatedOutcome sleepy = run_isolated(
      []() -> std::string {
        for (;;) ::pause();
      },
      limits);
  EXPECT_EQ(sleepy.end, End::wall_limit);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

}  // namespace
}  // namespace koma
