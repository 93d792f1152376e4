#include "koma/core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "koma/core/error.hpp"

namespace koma {

double metres_per_unit(LengthUnit unit) noexcept {
  switch (unit) {
    case LengthUnit::metre: return 1.0;
    case LengthUnit::centimetre: return 0.01;
    case LengthUnit::millimetre: return 0.001;
    case LengthUnit::inch: return 0.0254;
    case LengthUnit::foot: return 0.3048;
    case LengthUnit::cmu: return 0.0254 / 0.45;
  }
  return 1.0;
}

std::string_view to_string(LengthUnit unit) noexcept { return kLengthUnitNames.name(unit); }


std::optional<LengthUnit> parse_length_unit(std::string_view text) noexcept {
  return kLengthUnitNames.parse(text);
}

LengthUnit length_unit_named(std::string_view text, std::string_view field) {
  if (auto u = parse_length_unit(text)) return *u;
  throw Error(ErrorCode::invalid_settings, std::string(field),
              fmt::format("unknown unit '{}'; expected {}", text, kLengthUnitNames.names()));
}

FileUnit parse_file_unit(std::string_view text, std::string_view field) {
  FileUnit out;
  if (auto u = parse_length_unit(text)) {
    out.unit = *u;
    return out;
  }
  double v = NAN;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= 0) {
    throw Error(ErrorCode::invalid_settings, std::string(field),
                fmt::format("'{}' is not a unit; expected {} or a number of metres per file unit "
                            "(0.0254 for inches, 0.056 for CMU files)", text, kLengthUnitNames.names()));
  }
  out.scale = v;
  return out;
}

UnitGuess guess_length_unit(double size) {
  UnitGuess g;
  g.size = size;
  if (!std::isfinite(size) || size <= 0) {
    g.height = size;
    g.rule = fmt::format("the figure has no size ({:g} file units); read as metres", size);
    return g;
  }
  // Candidates from the largest unit down; the nearest to the typical height on a log scale wins.
  constexpr std::array<LengthUnit, 5> kCandidates{LengthUnit::metre, LengthUnit::cmu, LengthUnit::inch,
                                                  LengthUnit::centimetre, LengthUnit::millimetre};
  double best = INFINITY;
  for (LengthUnit u : kCandidates) {
    const double d = std::abs(std::log(size * metres_per_unit(u) / kHumanTypicalHeight));
    if (d < best) {
      best = d;
      g.unit = u;
    }
  }
  g.height = size * metres_per_unit(g.unit);
  g.human_sized = g.height >= kHumanMinHeight && g.height <= kHumanMaxHeight;
  const std::string name = g.unit == LengthUnit::cmu ? "CMU units (1/0.45 in)" : std::string(to_string(g.unit));
  g.rule = fmt::format("the figure is {:.4g} file units tall; read as {} that makes {:.2f} m, the reading "
                       "nearest a {:.1f}-{:.1f} m person",
                       size, name, g.height, kHumanMinHeight, kHumanMaxHeight);
  return g;
}

}  // namespace koma
