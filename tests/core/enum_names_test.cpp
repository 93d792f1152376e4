#include "koma/core/enum_names.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/core/rotation.hpp"
#include "koma/core/skeleton.hpp"
#include "koma/core/units.hpp"

namespace koma {
namespace {

enum class Fruit : unsigned char { apple, pear, plum };
constexpr EnumNames<Fruit, 4> kFruitNames{
    {{{Fruit::apple, "apple"}, {Fruit::pear, "pear"}, {Fruit::plum, "plum"}, {Fruit::pear, "poire"}}}};

TEST(EnumNames, NameIsTheFirstEntryAndAliasesParse) {
  static_assert(kFruitNames.name(Fruit::pear) == "pear");
  static_assert(kFruitNames.parse("poire") == Fruit::pear);
  EXPECT_EQ(kFruitNames.name(static_cast<Fruit>(9)), "?");
  EXPECT_FALSE(kFruitNames.parse("Pear").has_value());  // exact by default
  EXPECT_FALSE(kFruitNames.parse("").has_value());
  EXPECT_EQ(kFruitNames.names(), "apple, pear or plum");  // aliases left out
  EXPECT_EQ(kFruitNames.names(" and "), "apple, pear and plum");
}

TEST(EnumNames, IgnoreCaseFoldsAsciiOnly) {
  constexpr EnumNames<Fruit, 1> names{{{{Fruit::apple, "apple"}}}, NameCase::ignore};
  EXPECT_EQ(names.parse("APPLE"), Fruit::apple);
  EXPECT_EQ(names.parse("aPpLe"), Fruit::apple);
  EXPECT_FALSE(names.parse("apples").has_value());
}

// Every entry of a table parses back to its value, and every value's name parses back to it.
template <class E, std::size_t N>
void expect_round_trip(const EnumNames<E, N>& table) {
  for (std::size_t i = 0; i < N; ++i) {
    const auto& e = table.entries[i];
    EXPECT_EQ(table.parse(e.name), e.value) << e.name;
    EXPECT_EQ(table.parse(table.name(e.value)), e.value) << e.name;
    if (table.is_name(i)) {
      EXPECT_EQ(table.name(e.value), e.name);
    }
  }
}

TEST(EnumNames, CoreTablesRoundTrip) {
  expect_round_trip(kErrorCodeNames);
  expect_round_trip(kChannelNames);
  expect_round_trip(kLengthUnitNames);
  expect_round_trip(kEulerOrderNames);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(parse_channel(to_string(static_cast<Channel>(c))), static_cast<Channel>(c));
  for (int u = 0; u < 6; ++u) {
    const auto unit = static_cast<LengthUnit>(u);
    EXPECT_EQ(parse_length_unit(to_string(unit)), unit);
  }
  for (int o = 0; o < 6; ++o) {
    const auto order = static_cast<EulerOrder>(o);
    EXPECT_EQ(parse_euler_order(to_string(order)), order);
  }
  for (int c = 1; c <= 5; ++c) EXPECT_NE(to_string(static_cast<ErrorCode>(c)), "unknown");
}

TEST(EnumNames, CoreWordsKeepTheirOldSpellings) {
  EXPECT_EQ(parse_length_unit("Centimeters"), LengthUnit::centimetre);
  EXPECT_EQ(parse_length_unit("FEET"), LengthUnit::foot);
  EXPECT_EQ(to_string(LengthUnit::inch), "in");
  EXPECT_EQ(parse_channel("xROTATION"), Channel::Xrotation);
  EXPECT_EQ(kLengthUnitNames.names(), "m, cm, mm, in, ft or cmu");
  EXPECT_EQ(parse_length_unit("CMU"), LengthUnit::cmu);
}

}  // namespace
}  // namespace koma
