#include "core/ascii.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cctype>

namespace agentstream {
namespace {

TEST(AsciiTest, ChangesLettersOnly) {
  EXPECT_EQ(AsciiLowered("Content-Type: Application/JSON; Charset=UTF-8"),
            "content-type: application/json; charset=utf-8");
  EXPECT_EQ(AsciiUppered("sha256=abcDEF-09"), "SHA256=ABCDEF-09");
  // The bytes next to the letters' ranges, and UTF-8, are not letters.
  EXPECT_EQ(AsciiLowered("@[`{ \xC3\x89t\xC3\xA9"), "@[`{ \xC3\x89t\xC3\xA9");
  EXPECT_EQ(AsciiUppered("@[`{ \xC3\xA9"), "@[`{ \xC3\xA9");
}

TEST(AsciiTest, ComparesIgnoringCase) {
  EXPECT_TRUE(EqualsIgnoringAsciiCase("Stream-Next-Offset", "stream-next-OFFSET"));
  EXPECT_TRUE(EqualsIgnoringAsciiCase("", ""));
  EXPECT_FALSE(EqualsIgnoringAsciiCase("ETag", "ETags"));
  EXPECT_FALSE(EqualsIgnoringAsciiCase("a[", "A{"));  // '[' and '{' are 32 apart, not letters
  EXPECT_FALSE(EqualsIgnoringAsciiCase("\xC3\xA9", "\xC3\x89"));
  static_assert(EqualsIgnoringAsciiCase("Host", "hOST"));
}

// Over every byte, the same answers as the C library in the "C" locale, which the daemon never
// changes.
RC_GTEST_PROP(AsciiTest, AgreesWithTheCLocale, (const std::string& text)) {
  std::string lower = text;
  std::string upper = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  RC_ASSERT(AsciiLowered(text) == lower);
  RC_ASSERT(AsciiUppered(text) == upper);
  RC_ASSERT(EqualsIgnoringAsciiCase(text, upper));
}

TEST(AsciiTest, EveryByteAgreesWithTheCLocale) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_EQ(AsciiLower(c), static_cast<char>(std::tolower(b))) << b;
    EXPECT_EQ(AsciiUpper(c), static_cast<char>(std::toupper(b))) << b;
  }
}

}  // namespace
}  // namespace agentstream
