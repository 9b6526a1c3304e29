// VAPID keys and tokens: the text form round-trips, bad keys are refused, and the Authorization
// header's JWT verifies with OpenSSL against the public key it names, with the claims asked for.
#include "push/vapid.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <memory>
#include <string>

#include "push/testing/base64url.h"

namespace agentstream::push {
namespace {

using testing::FromB64;
using testing::ToB64;

constexpr std::int64_t kNow = 1'800'000'000;

// Whether `signature` (JOSE's r || s) is an ES256 signature of `message` by `point`, checked
// with OpenSSL's EVP_DigestVerify.
bool VerifyEs256(std::string_view point, std::string_view message, std::string_view signature) {
  if (signature.size() != 64) return false;
  OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
  OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(build);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  EVP_PKEY_fromdata_init(ctx);
  EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params);
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(
      sig, BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()), 32, nullptr),
      BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()) + 32, 32, nullptr));
  unsigned char* der = nullptr;
  const int der_size = i2d_ECDSA_SIG(sig, &der);
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  const bool ok =
      key != nullptr && EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(md, der, static_cast<std::size_t>(der_size),
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(md);
  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  EVP_PKEY_free(key);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(build);
  return ok;
}

struct Token {
  std::string header, claims, signature, signing_input, k;
};

Token Split(const std::string& authorization) {
  EXPECT_EQ(authorization.rfind("vapid t=", 0), 0U) << authorization;
  const std::size_t comma = authorization.find(", k=");
  EXPECT_NE(comma, std::string::npos) << authorization;
  const std::string jwt = authorization.substr(8, comma - 8);
  const std::size_t dot1 = jwt.find('.');
  const std::size_t dot2 = jwt.find('.', dot1 + 1);
  return {FromB64(jwt.substr(0, dot1)), FromB64(jwt.substr(dot1 + 1, dot2 - dot1 - 1)),
          FromB64(jwt.substr(dot2 + 1)), jwt.substr(0, dot2), authorization.substr(comma + 4)};
}

TEST(VapidKey, TheTextFormRoundTripsAndDerivesThePublicKey) {
  const VapidKey key = GenerateVapidKey().value();
  const std::string text = VapidKeyToText(key);
  EXPECT_EQ(text.size(), 43U);
  Result<VapidKey> back = VapidKeyFromText(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->private_scalar(), key.private_scalar());
  EXPECT_EQ(back->public_point(), key.public_point());
  EXPECT_TRUE(VapidKeyFromText(text + "=").ok());  // padding tolerated
  const std::string pub = FromB64(VapidPublicKey(key));
  ASSERT_EQ(pub.size(), 65U);
  EXPECT_EQ(pub[0], '\x04');
  EXPECT_EQ(pub, key.public_point());
  EXPECT_NE(GenerateVapidKey()->private_scalar(), key.private_scalar());
}

TEST(VapidKey, RefusesTextThatIsNotAP256PrivateKey) {
  const std::string order = FromB64("_____wAAAAD__________7zm-q2nF56E87nKwvxjJVE");  // n itself
  for (const std::string& text :
       {std::string(""), std::string("not base64!"), ToB64(std::string(31, '\x01')),
        ToB64(std::string(33, '\x01')), ToB64(std::string(32, '\0')), ToB64(order),
        ToB64(std::string(32, '\xff'))}) {
    Result<VapidKey> key = VapidKeyFromText(text);
    ASSERT_FALSE(key.ok()) << text;
    EXPECT_EQ(key.status().code(), ErrorCode::kInvalidArgument) << text;
  }
  std::string below = order;
  below[31] = static_cast<char>(below[31] - 1);  // n - 1, the largest valid scalar
  EXPECT_TRUE(VapidKeyFromText(ToB64(below)).ok());
}

TEST(VapidAuthorization, IsAnEs256JwtThatVerifiesWithTheNamedKey) {
  const VapidKey key = GenerateVapidKey().value();
  Result<std::string> header = VapidAuthorization(key, "https://push.example.net",
                                                  "mailto:ops@example.com", kNow + 43200, kNow);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const Token token = Split(*header);
  EXPECT_EQ(token.k, VapidPublicKey(key));
  EXPECT_EQ(boost::json::parse(token.header), boost::json::parse(R"({"typ":"JWT","alg":"ES256"})"));
  EXPECT_EQ(boost::json::parse(token.claims),
            boost::json::parse(R"({"aud":"https://push.example.net","exp":1800043200,)"
                               R"("sub":"mailto:ops@example.com"})"));
  EXPECT_TRUE(VerifyEs256(key.public_point(), token.signing_input, token.signature));

  // The check can fail: another key, or claims changed after signing.
  EXPECT_FALSE(
      VerifyEs256(GenerateVapidKey()->public_point(), token.signing_input, token.signature));
  std::string forged = token.signing_input;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(VerifyEs256(key.public_point(), forged, token.signature));
}

TEST(VapidAuthorization, TheExpiryIsWithin24Hours) {
  const VapidKey key = GenerateVapidKey().value();
  auto at = [&](std::int64_t exp) {
    return VapidAuthorization(key, "https://push.example.net", "mailto:a@b.c", exp, kNow);
  };
  EXPECT_TRUE(at(kNow + kMaxVapidLifetimeS).ok());
  EXPECT_TRUE(at(kNow + 1).ok());
  for (std::int64_t exp : {kNow + kMaxVapidLifetimeS + 1, kNow, kNow - 10}) {
    Result<std::string> header = at(exp);
    ASSERT_FALSE(header.ok()) << exp;
    EXPECT_EQ(header.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(VapidAuthorization(key, "", "mailto:a@b.c", kNow + 60, kNow).ok());
  EXPECT_FALSE(VapidAuthorization(key, "https://p", "", kNow + 60, kNow).ok());
}

TEST(VapidAuthorization, ClaimsAreJsonEscaped) {
  const VapidKey key = GenerateVapidKey().value();
  const std::string subject = "mailto:\"quoted\"\\@example.com";
  const Token token =
      Split(VapidAuthorization(key, "https://p.example", subject, kNow + 60, kNow).value());
  EXPECT_EQ(boost::json::parse(token.claims).at("sub").as_string(), subject);
}

}  // namespace
}  // namespace agentstream::push
