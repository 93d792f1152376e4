// valid_utf8 / printable: names from files made safe for every output (issue 45).
#include "koma/core/text.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"

namespace koma {
namespace {

TEST(Text, ValidUtf8IsKeptInvalidBytesAreReplaced) {
  EXPECT_EQ(valid_utf8("Hüfte 腰 🦴"), "Hüfte 腰 🦴");
  EXPECT_TRUE(is_valid_utf8("Hüfte 腰 🦴"));
  EXPECT_EQ(valid_utf8("\xff\xfe"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(valid_utf8("a\xC3"), "a\xEF\xBF\xBD");              // cut short
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80").find('\xF4'), std::string::npos);      // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xff"));
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_TRUE(is_valid_utf8(valid_utf8(one + "x" + one))) << b;
  }
}

TEST(Text, PrintableEscapesControlCharacters) {
  EXPECT_EQ(printable(std::string("Sp\0ine\n\t\x7f", 9)), "Sp\\x00ine\\n\\t\\x7F");
  EXPECT_EQ(printable("\xff"), "\xEF\xBF\xBD");
}

TEST(Text, ErrorsHoldValidUtf8) {
  const Error e(ErrorCode::bad_file, "bone\xff.fbx", "joint '\xfe'");
  EXPECT_TRUE(is_valid_utf8(e.what()));
  EXPECT_TRUE(is_valid_utf8(e.context()));
  EXPECT_TRUE(is_valid_utf8(e.message()));
}

}  // namespace
}  // namespace koma
