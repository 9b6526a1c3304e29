#include "core/utf8.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace agentstream {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
}

TEST(Utf8Test, RejectsIllFormedSequences) {
  EXPECT_FALSE(IsValidUtf8("\xC5"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(Utf8Test, SanitizeReplacesEachBadByte) {
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("ok"), "ok");
}

TEST(Utf8Test, BoundCutsOnACharacterBoundary) {
  // "é" is two bytes; a 3-byte bound over "aéé" must not split the second é.
  BoundedText out = BoundUtf8("a\xC3\xA9\xC3\xA9", 4);
  EXPECT_EQ(out.text, "a\xC3\xA9");
  EXPECT_TRUE(out.truncated);
  BoundedText fits = BoundUtf8("short", 64);
  EXPECT_EQ(fits.text, "short");
  EXPECT_FALSE(fits.truncated);
}

TEST(Utf8Test, DefaultBoundIs64KiB) {
  std::string big(100 * 1024, 'x');
  BoundedText out = BoundUtf8(big);
  EXPECT_EQ(out.text.size(), 64u * 1024u);
  EXPECT_TRUE(out.truncated);
}

RC_GTEST_PROP(Utf8Property, SanitizedAndBoundedTextIsValid,
              (const std::string& bytes, unsigned bound)) {
  const std::size_t max = bound % 64;
  const std::string clean = SanitizeUtf8(bytes);
  RC_ASSERT(IsValidUtf8(clean));
  BoundedText out = BoundUtf8(bytes, max);
  RC_ASSERT(IsValidUtf8(out.text));
  RC_ASSERT(out.text.size() <= max);
  RC_ASSERT(out.truncated == (clean.size() > max));
  RC_ASSERT(clean.compare(0, out.text.size(), out.text) == 0);
}

}  // namespace
}  // namespace agentstream
