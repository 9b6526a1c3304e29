// RFC 8291 message encryption: the RFC's worked example byte for byte, and round trips through
// the user agent's side with random keys and plaintexts.
#include "push/ece.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "push/testing/base64url.h"
#include "push/vapid.h"

namespace agentstream::push {
namespace {

using testing::FromB64;
using testing::ToB64;

// RFC 8291 section 5 (and appendix A): every input and the resulting body.
struct RfcExample {
  const std::string plaintext = FromB64("V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24");
  const std::string as_private = FromB64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw");
  const std::string as_public = FromB64(
      "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8");
  const std::string ua_private = FromB64("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94");
  const std::string ua_public = FromB64(
      "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4");
  const std::string salt = FromB64("DGv6ra1nlYgDCS1FRnbzlw");
  const std::string auth = FromB64("BTBZMqHH6r4Tts7J_aSIgg");
  const std::string body = FromB64(
      "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_"
      "c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6"
      "TlzAC8wEqKK6PBru3jl7A_"
      "yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulc"
      "y4a-fN");
};

TEST(Rfc8291, TheExampleIsReproducedByteForByte) {
  const RfcExample rfc;
  ASSERT_EQ(rfc.plaintext, "When I grow up, I want to be a watermelon");
  Result<std::string> body =
      EncryptPayloadWith(rfc.plaintext, rfc.ua_public, rfc.auth, rfc.as_private, rfc.salt);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(ToB64(*body), ToB64(rfc.body));
}

TEST(Rfc8291, TheExampleDecryptsWithTheUserAgentsKey) {
  const RfcExample rfc;
  Result<std::string> plaintext = DecryptPayload(rfc.body, rfc.ua_private, rfc.auth);
  ASSERT_TRUE(plaintext.ok()) << plaintext.status().ToString();
  EXPECT_EQ(*plaintext, rfc.plaintext);
}

TEST(Rfc8291, TheExamplesKeysArePairs) {
  const RfcExample rfc;
  for (const auto& [priv, pub] :
       {std::pair{rfc.as_private, rfc.as_public}, std::pair{rfc.ua_private, rfc.ua_public}}) {
    Result<VapidKey> key = VapidKeyFromText(ToB64(priv));
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(key->public_point(), pub);
  }
}

TEST(Rfc8291, AWrongAuthSecretOrKeyDoesNotDecrypt) {
  const RfcExample rfc;
  std::string auth = rfc.auth;
  auth[0] ^= 1;
  EXPECT_EQ(DecryptPayload(rfc.body, rfc.ua_private, auth).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(DecryptPayload(rfc.body, rfc.as_private, rfc.auth).ok());
}

TEST(EncryptPayload, EachCallHasAFreshKeyAndSalt) {
  const RfcExample rfc;
  Result<std::string> a = EncryptPayload("same", rfc.ua_public, rfc.auth);
  Result<std::string> b = EncryptPayload("same", rfc.ua_public, rfc.auth);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->substr(0, 16), b->substr(0, 16));                        // salt
  EXPECT_NE(a->substr(21, 65), b->substr(21, 65));                      // the sender's public key
  EXPECT_EQ(a->substr(16, 5), std::string("\x00\x00\x10\x00\x41", 5));  // rs 4096, idlen 65
  EXPECT_EQ(DecryptPayload(*a, rfc.ua_private, rfc.auth).value(), "same");
}

TEST(EncryptPayload, ThePlaintextBoundFillsOneRecordOf4096Bytes) {
  const RfcExample rfc;
  Result<std::string> full =
      EncryptPayload(std::string(kMaxPlaintextBytes, 'x'), rfc.ua_public, rfc.auth);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->size(), kRecordSize);
  Result<std::string> over =
      EncryptPayload(std::string(kMaxPlaintextBytes + 1, 'x'), rfc.ua_public, rfc.auth);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("3993"), std::string::npos);
}

TEST(EncryptPayload, RefusesKeysOfTheWrongSizeOrOffTheCurve) {
  const RfcExample rfc;
  EXPECT_FALSE(EncryptPayload("x", rfc.ua_public.substr(1), rfc.auth).ok());
  EXPECT_FALSE(EncryptPayload("x", rfc.ua_public, rfc.auth.substr(1)).ok());
  std::string off_curve = rfc.ua_public;
  off_curve[64] ^= 1;
  Result<std::string> body = EncryptPayload("x", off_curve, rfc.auth);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), ErrorCode::kInvalidArgument);
}

TEST(DecryptPayload, RefusesMalformedBodies) {
  const RfcExample rfc;
  for (const std::string& body : {std::string(), rfc.body.substr(0, 20), rfc.body.substr(0, 86),
                                  rfc.body.substr(0, 100), std::string(70000, 'a')}) {
    Result<std::string> out = DecryptPayload(body, rfc.ua_private, rfc.auth);
    ASSERT_FALSE(out.ok()) << body.size();
    EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument);
  }
}

// A user agent's key pair and auth secret, drawn fresh.
struct DrawnUserAgent {
  VapidKey key = GenerateVapidKey().value();
  std::string auth = *rc::gen::container<std::string>(16, rc::gen::arbitrary<char>());
};

RC_GTEST_PROP(EceProperty, EveryPlaintextRoundTrips, ()) {
  const DrawnUserAgent ua;
  const auto size = *rc::gen::inRange<std::size_t>(0, kMaxPlaintextBytes + 1);
  const auto plaintext = *rc::gen::container<std::string>(size, rc::gen::arbitrary<char>());
  Result<std::string> body = EncryptPayload(plaintext, ua.key.public_point(), ua.auth);
  RC_ASSERT(body.ok());
  RC_ASSERT(body->size() == kEceHeaderBytes + plaintext.size() + 1 + kEceTagBytes);
  Result<std::string> back = DecryptPayload(*body, ua.key.private_scalar(), ua.auth);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == plaintext);
}

RC_GTEST_PROP(EceProperty, AFlippedBitIsRefused, ()) {
  const DrawnUserAgent ua;
  const auto plaintext = *rc::gen::arbitrary<std::string>();
  RC_PRE(plaintext.size() <= kMaxPlaintextBytes);
  std::string body = EncryptPayload(plaintext, ua.key.public_point(), ua.auth).value();
  // Every byte but the record size, which RFC 8188 leaves unauthenticated (a larger one reads
  // the one record as before).
  const auto at = *rc::gen::suchThat(rc::gen::inRange<std::size_t>(0, body.size()),
                                     [](std::size_t i) { return i < 16 || i >= 20; });
  const auto bit = *rc::gen::inRange(0, 8);
  body[at] = static_cast<char>(body[at] ^ (1 << bit));
  RC_ASSERT(!DecryptPayload(body, ua.key.private_scalar(), ua.auth).ok());
}

}  // namespace
}  // namespace agentstream::push
