#include "koma/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace koma {

double metres_per_unit(LengthUnit unit) noexcept {
  switch (unit) {
    case LengthUnit::metre: return 1.0;
    case LengthUnit::centimetre: return 0.01;
    case LengthUnit::millimetre: return 0.001;
    case LengthUnit::inch: return 0.0254;
    case LengthUnit::foot: return 0.3048;
  }
  return 1.0;
}

std::string_view to_string(LengthUnit unit) noexcept {
  switch (unit) {
    case LengthUnit::metre: return "m";
    case LengthUnit::centimetre: return "cm";
    case LengthUnit::millimetre: return "mm";
    case LengthUnit::inch: return "in";
    case LengthUnit::foot: return "ft";
  }
  return "m";
}

std::optional<LengthUnit> parse_length_unit(std::string_view text) noexcept {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "m" || s == "metre" || s == "metres" || s == "meter" || s == "meters") return LengthUnit::metre;
  if (s == "cm" || s == "centimetre" || s == "centimetres" || s == "centimeter" || s == "centimeters")
    return LengthUnit::centimetre;
  if (s == "mm" || s == "millimetre" || s == "millimetres" || s == "millimeter" || s == "millimeters")
    return LengthUnit::millimetre;
  if (s == "in" || s == "inch" || s == "inches") return LengthUnit::inch;
  if (s == "ft" || s == "foot" || s == "feet") return LengthUnit::foot;
  return std::nullopt;
}

}  // namespace koma
