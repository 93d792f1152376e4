// The one parser of a user's length unit (core/units.hpp): names, numbers, and clear errors.
#include "koma/core/units.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"

namespace koma {
namespace {

TEST(Units, FileUnitIsANameOrMetresPerUnit) {
  const FileUnit cm = parse_file_unit("Centimetres");
  ASSERT_TRUE(cm.unit.has_value());
  EXPECT_EQ(*cm.unit, LengthUnit::centimetre);
  EXPECT_EQ(cm.scale, 0.0);
  const FileUnit n = parse_file_unit("0.056");
  EXPECT_FALSE(n.unit.has_value());
  EXPECT_EQ(n.scale, 0.056);
  EXPECT_EQ(*parse_file_unit("cmu").unit, LengthUnit::cmu);
}

TEST(Units, AnythingElseNamesTheFieldAndTheNames) {
  for (const char* bad : {"parsec", "-1", "0", "nan", "inf", "1e400", "0.5m", ""}) {
    try {
      parse_file_unit(bad, "--unit");
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_EQ(e.context(), "--unit");
      EXPECT_EQ(e.message(), std::string("'") + bad +
                                 "' is not a unit; expected m, cm, mm, in, ft or cmu or a number of metres per "
                                 "file unit (0.0254 for inches, 0.056 for CMU files)");
    }
  }
  EXPECT_EQ(length_unit_named("FEET"), LengthUnit::foot);
  try {
    length_unit_named("0.056");
    FAIL() << "a number is not a unit name";
  } catch (const Error& e) {
    EXPECT_EQ(e.context(), "unit");
    EXPECT_EQ(e.message(), "unknown unit '0.056'; expected m, cm, mm, in, ft or cmu");
  }
}

}  // namespace
}  // namespace koma
