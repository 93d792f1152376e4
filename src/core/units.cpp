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

std::string_view to_string(LengthUnit unit) noexcept { return kLengthUnitNames.name(unit); }


std::optional<LengthUnit> parse_length_unit(std::string_view text) noexcept {
  return kLengthUnitNames.parse(text);
}


}  // namespace koma
