#include "koma/core/error.hpp"

#include <fmt/format.h>

namespace koma {

std::string_view to_string(ErrorCode code) noexcept { return kErrorCodeNames.name(code); }


namespace {
std::string compose(const std::string& context, const std::string& message) {
  return context.empty() ? message : context + ": " + message;
}
}  // namespace

Error::Error(ErrorCode code, std::string context, std::string message)
    : std::runtime_error(compose(context, message)),
      code_(code),
      context_(std::move(context)),
      message_(std::move(message)) {}

namespace detail {
void assert_fail(const char* expr, const char* file, int line) {
  throw std::logic_error(fmt::format("koma internal error: {}:{}: assertion '{}' failed (please report)",
                                     file, line, expr));
}
}  // namespace detail

}  // namespace koma
