#include "koma/core/error.hpp"

#include <fmt/format.h>

#include "koma/core/text.hpp"

namespace koma {

std::string_view to_string(ErrorCode code) noexcept { return kErrorCodeNames.name(code); }


namespace {
std::string compose(const std::string& context, const std::string& message) {
  return context.empty() ? message : context + ": " + message;
}
}  // namespace

// Context and message quote names and bytes from files: they are made valid UTF-8 here, once, so
// every boundary (a terminal, a JSON report, a Python str) can take them.
Error::Error(ErrorCode code, std::string context, std::string message)
    : std::runtime_error(compose(valid_utf8(context), valid_utf8(message))),
      code_(code),
      context_(valid_utf8(context)),
      message_(valid_utf8(message)) {}

namespace detail {
void assert_fail(const char* expr, const char* file, int line) {
  throw std::logic_error(fmt::format("koma internal error: {}:{}: assertion '{}' failed (please report)",
                                     file, line, expr));
}
}  // namespace detail

}  // namespace koma
