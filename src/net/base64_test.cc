#include "net/base64.h"

#include <gtest/gtest.h>

namespace agentstream::net {
namespace {

// RFC 4648, section 10.
TEST(Base64Test, TheRfcVectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(EncodeBase64(bytes), text);
    EXPECT_EQ(DecodeBase64(text), bytes);
  }
}

TEST(Base64Test, TheUrlSafeAlphabetHasNoPadding) {
  const std::string bytes("\xfb\xff\xbf", 3);
  EXPECT_EQ(EncodeBase64(bytes), "+/+/");
  EXPECT_EQ(EncodeBase64(bytes, Base64Alphabet::kUrlSafeNoPadding), "-_-_");
  EXPECT_EQ(EncodeBase64("f", Base64Alphabet::kUrlSafeNoPadding), "Zg");
  EXPECT_EQ(DecodeBase64("-_-_", Base64Alphabet::kUrlSafeNoPadding), bytes);
  EXPECT_EQ(DecodeBase64("Zg", Base64Alphabet::kUrlSafeNoPadding), "f");
}

TEST(Base64Test, WhatIsNotBase64IsRefused) {
  EXPECT_FALSE(DecodeBase64("Zm9v!"));
  EXPECT_FALSE(DecodeBase64("Zg="));                                      // short padding
  EXPECT_FALSE(DecodeBase64("Zg==", Base64Alphabet::kUrlSafeNoPadding));  // padding
  EXPECT_FALSE(DecodeBase64("+/+/", Base64Alphabet::kUrlSafeNoPadding));  // the other alphabet
  EXPECT_FALSE(DecodeBase64("Zh=="));                                     // trailing bits
}

}  // namespace
}  // namespace agentstream::net
