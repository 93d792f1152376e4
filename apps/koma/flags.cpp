#include "flags.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace koma::cli {

namespace {

// Settings field (as the library names it in errors) -> CLI flag.
constexpr std::array<std::pair<std::string_view, std::string_view>, 44> kFlags{{
    {"allow_ones", "--allow-ones"},
    {"asset_root", "--asset-root"},
    {"bound_share", "--bound"},
    {"camera", "--camera"},
    {"chart", "--chart"},
    {"chart_sheet", "--chart-sheet"},
    {"compare", "--compare"},
    {"spacing.gaps", "--chart-sheet"},
    {"spacing.on", "--on"},
    {"constraints.locked", "--lock"},
    {"cut_speed", "--cut-speed"},
    {"constraints.max_hold", "--max-hold"},
    {"constraints.min_hold", "--min-hold"},
    {"exact.method", "--exact-method"},
    {"fixed_period", "--period"},
    {"interpolation", "--interp"},
    {"jobs", "--jobs"},
    {"keep_feet", "--keep-feet"},
    {"keys", "--keys"},
    {"layers", "--layers"},
    {"like", "--like"},
    {"look", "--look"},
    {"max_error", "--max-error"},
    {"offset", "--offset"},
    {"on", "--on"},
    {"output_extension", "--to"},
    {"output_rate", "--fps"},
    {"range", "--range"},
    {"ratio", "--ratio"},
    {"roles", "--roles"},
    {"max_sigma_seconds", "--sigma-range"},
    {"min_sigma_seconds", "--sigma-range"},
    {"sigma_frames", "--sigma"},
    {"sigma_seconds", "--sigma"},
    {"size", "--size"},
    {"squash", "--squash"},
    {"then", "--then"},
    {"toon.ink", "--ink"},
    {"toon.line_width", "--line-width"},
    {"toon.smear", "--smear"},
    {"toon.smear_threshold", "--smear-threshold"},
    {"toon.tones", "--tones"},
    {"toon.transparent", "--transparent"},
    {"unit", "--unit"},
}};

}  // namespace

std::optional<std::string_view> flag_for_field(std::string_view field) {
  for (const auto& [name, flag] : kFlags) {
    if (name == field) return flag;
  }
  return std::nullopt;
}

std::string with_flags(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  size_t pos = 0;
  while (pos < message.size()) {
    const size_t open = message.find('`', pos);
    const size_t close = open == std::string_view::npos ? open : message.find('`', open + 1);
    if (close == std::string_view::npos) break;
    out.append(message.substr(pos, open - pos));
    const std::string_view field = message.substr(open + 1, close - open - 1);
    if (const auto flag = flag_for_field(field)) {
      out.append(*flag);
    } else {
      out.append(message.substr(open, close - open + 1));
    }
    pos = close + 1;
  }
  out.append(message.substr(std::min(pos, message.size())));
  return out;
}

std::string describe(const Error& error) {
  std::string context = error.context();
  if (error.code() == ErrorCode::invalid_settings) {
    if (const auto flag = flag_for_field(context)) context = std::string(*flag);
  }
  const std::string message = with_flags(error.message());
  return context.empty() ? message : context + ": " + message;
}

}  // namespace koma::cli
