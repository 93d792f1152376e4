// koma::Error — the one exception type of the library — and KOMA_ASSERT for internal bugs.
//
// Recoverable problems (a bad file, bad data, mismatched inputs, invalid settings, I/O failures)
// throw koma::Error with a closed ErrorCode and a context string that tells the user where to look
// ("walk.bvh:132", "joint LeftFoot", "frame 40"). docs/errors.md maps each code to its meaning, its
// Python exception and the CLI exit code.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "koma/core/enum_names.hpp"

namespace koma {

/// The closed set of error kinds. The numeric values are stable: the CLI derives exit codes from them.
enum class ErrorCode : std::uint8_t {
  bad_file = 1,          ///< A file is malformed: syntax, truncation, unsupported content.
  bad_data = 2,          ///< Well-formed input holding unusable values: NaN, too few frames, no period.
  mismatch = 3,          ///< Inputs that must agree do not: skeletons, frame counts, reports.
  invalid_settings = 4,  ///< A setting is out of range or contradicts another.
  io = 5,                ///< The file system refused: cannot open, read, write or rename.
};

/// The codes' names.
inline constexpr EnumNames<ErrorCode, 5> kErrorCodeNames{{{{ErrorCode::bad_file, "bad_file"},
                                                          {ErrorCode::bad_data, "bad_data"},
                                                          {ErrorCode::mismatch, "mismatch"},
                                                          {ErrorCode::invalid_settings, "invalid_settings"},
                                                          {ErrorCode::io, "io"}}},
                                                        NameCase::exact,
                                                        "unknown"};

/// Short lower-case name of a code ("bad_file", ...), as printed by the CLI and used in JSON.
std::string_view to_string(ErrorCode code) noexcept;

/// The library's exception. what() is "<context>: <message>" (or just the message without context).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string context, std::string message);

  ErrorCode code() const noexcept { return code_; }
  /// Where: "file.bvh:12", "joint Hips", "frame 7", "--keys"; may be empty.
  const std::string& context() const noexcept { return context_; }
  /// What went wrong and what was expected.
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string context_;
  std::string message_;
};

namespace detail {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);
}  // namespace detail

}  // namespace koma

/// Internal precondition; always on (also in release builds). A failure is a koma bug, not bad input.
#define KOMA_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::koma::detail::assert_fail(#expr, __FILE__, __LINE__))
