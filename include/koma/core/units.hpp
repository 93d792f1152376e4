// Units and conventions used everywhere inside koma.
//
//   length   metres          angle   radians         time   seconds (frame i is at i / frame_rate)
//   frame    right-handed, Y up (as BVH and glTF)
//   rotation Eigen::Quaterniond, unit length; memory order of its coefficients is x, y, z, w
//   Euler    intrinsic, in the order the channels are listed: BVH "Zrotation Xrotation Yrotation"
//            is R = Rz(z) * Rx(x) * Ry(y), and a child point p maps to the parent as R * p + t.
//
// Readers convert from a file's units at the boundary and record what the file used, so writers can
// convert back; algorithms never see anything but the units above.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "koma/core/enum_names.hpp"

namespace koma {

/// A length unit of a file. The value is not meaningful; use metres_per_unit().
enum class LengthUnit : std::uint8_t { metre, centimetre, millimetre, inch, foot };

/// Metres in one `unit` (centimetre -> 0.01).
double metres_per_unit(LengthUnit unit) noexcept;
/// The units' names ("cm"), then the spelled-out aliases parse accepts, in any case.
inline constexpr EnumNames<LengthUnit, 21> kLengthUnitNames{
    {{{LengthUnit::metre, "m"},
      {LengthUnit::centimetre, "cm"},
      {LengthUnit::millimetre, "mm"},
      {LengthUnit::inch, "in"},
      {LengthUnit::foot, "ft"},
      {LengthUnit::metre, "metre"},
      {LengthUnit::metre, "metres"},
      {LengthUnit::metre, "meter"},
      {LengthUnit::metre, "meters"},
      {LengthUnit::centimetre, "centimetre"},
      {LengthUnit::centimetre, "centimetres"},
      {LengthUnit::centimetre, "centimeter"},
      {LengthUnit::centimetre, "centimeters"},
      {LengthUnit::millimetre, "millimetre"},
      {LengthUnit::millimetre, "millimetres"},
      {LengthUnit::millimetre, "millimeter"},
      {LengthUnit::millimetre, "millimeters"},
      {LengthUnit::inch, "inch"},
      {LengthUnit::inch, "inches"},
      {LengthUnit::foot, "foot"},
      {LengthUnit::foot, "feet"}}},
    NameCase::ignore,
    "m"};

/// Short name: "m", "cm", "mm", "in", "ft".
std::string_view to_string(LengthUnit unit) noexcept;
/// Parses "m", "metre(s)", "meter(s)", "cm", "mm", "in", "inch(es)", "ft", "foot", "feet"
/// (case-insensitive); nullopt for anything else.
std::optional<LengthUnit> parse_length_unit(std::string_view text) noexcept;

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kDegToRad = kPi / 180.0;
inline constexpr double kRadToDeg = 180.0 / kPi;

}  // namespace koma
