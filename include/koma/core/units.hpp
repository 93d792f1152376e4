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
#include <string>
#include <string_view>

#include "koma/core/enum_names.hpp"

namespace koma {

/// A length unit of a file. The value is not meaningful; use metres_per_unit().
///   cmu: the unit of the CMU motion-capture releases (the cgspeed BVH conversion, Xia 2015,
///   Truebones and other CMU-skeleton files): 1/0.45 inch = 0.05644 m.
enum class LengthUnit : std::uint8_t { metre, centimetre, millimetre, inch, foot, cmu };

/// Metres in one `unit` (centimetre -> 0.01).
double metres_per_unit(LengthUnit unit) noexcept;
/// The units' names ("cm"), then the spelled-out aliases parse accepts, in any case.
inline constexpr EnumNames<LengthUnit, 22> kLengthUnitNames{
    {{{LengthUnit::metre, "m"},
      {LengthUnit::centimetre, "cm"},
      {LengthUnit::millimetre, "mm"},
      {LengthUnit::inch, "in"},
      {LengthUnit::foot, "ft"},
      {LengthUnit::cmu, "cmu"},
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

/// Short name: "m", "cm", "mm", "in", "ft", "cmu".
std::string_view to_string(LengthUnit unit) noexcept;
/// Parses "m", "metre(s)", "meter(s)", "cm", "mm", "in", "inch(es)", "ft", "foot", "feet", "cmu"
/// (case-insensitive); nullopt for anything else.
std::optional<LengthUnit> parse_length_unit(std::string_view text) noexcept;
/// parse_length_unit(), or throws Error(invalid_settings, field) "unknown unit 'X'; expected m, cm,
/// mm, in, ft or cmu" (`field`: the setting's name as the caller's users know it).
LengthUnit length_unit_named(std::string_view text, std::string_view field = "unit");

/// A file's length unit as a user writes it: a unit name, or a number of metres per file unit.
struct FileUnit {
  std::optional<LengthUnit> unit;  ///< The named unit; nullopt when given as a number.
  double scale = 0.0;              ///< Metres per file unit when given as a number (> 0); else 0.
};
/// The one parser of a user's length unit (CLI --unit, Python unit=, batch settings): a unit name
/// (parse_length_unit) or a finite number > 0 of metres per file unit ("0.056"). Throws
/// Error(invalid_settings, field) "'X' is not a unit; expected m, cm, mm, in, ft or cmu or a
/// number of metres per file unit (...)" for anything else.
FileUnit parse_file_unit(std::string_view text, std::string_view field = "unit");

/// Height band of a grown-up human performer, metres: a figure read inside it needs no warning.
inline constexpr double kHumanMinHeight = 1.4;
inline constexpr double kHumanMaxHeight = 2.1;
/// The height unit detection aims at, metres (the geometric middle of the band, about 1.71 m).
inline constexpr double kHumanTypicalHeight = 1.7146;

/// How a file's length unit was chosen from the size of its figure (guess_length_unit()).
struct UnitGuess {
  LengthUnit unit = LengthUnit::metre;  ///< The unit chosen.
  double size = 0;                      ///< The figure's size in file units, as measured.
  double height = 0;                    ///< size in metres when read in `unit`.
  bool human_sized = false;             ///< height within [kHumanMinHeight, kHumanMaxHeight].
  std::string rule;                     ///< One sentence naming the rule and the reading, for reports.
};

/// The unit that makes a figure of `size` file units the most human-sized: of metre, CMU unit,
/// inch, centimetre and millimetre, the one whose reading is nearest kHumanTypicalHeight on a log
/// scale. Adjacent candidates differ by at least 2.2x while the human band spans 1.5x, so at most
/// one reading lies in the band; the result for each size:
///   size < 7.2: metre;  7.2-45: CMU unit (cgspeed CMU, Xia, Truebones, 24-27 units tall);
///   45-108: inch;  108-542: centimetre;  >= 542: millimetre.
/// Feet are never guessed (no exporter writes them; a 5-unit figure is a 5 m giant in metres).
/// A size that is not finite or not > 0 reads as metre, not human-sized.
UnitGuess guess_length_unit(double size);

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kDegToRad = kPi / 180.0;
inline constexpr double kRadToDeg = 180.0 / kPi;

}  // namespace koma
