#include "push/crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>

#include <array>
#include <utility>

#include "net/base64.h"

namespace agentstream::push::internal {
namespace {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using GroupPtr = std::unique_ptr<EC_GROUP, Deleter<EC_GROUP_free>>;
using PointPtr = std::unique_ptr<EC_POINT, Deleter<EC_POINT_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_clear_free>>;
using BnCtxPtr = std::unique_ptr<BN_CTX, Deleter<BN_CTX_free>>;
using ParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD_free>>;
using ParamPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX_free>>;
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, Deleter<EVP_CIPHER_CTX_free>>;
using KdfPtr = std::unique_ptr<EVP_KDF, Deleter<EVP_KDF_free>>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, Deleter<EVP_KDF_CTX_free>>;
using SigPtr = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG_free>>;

constexpr const char* kGroupName = "prime256v1";
constexpr std::size_t kGcmNonceBytes = 12;
constexpr std::size_t kGcmTagBytes = 16;
constexpr std::size_t kAes128KeyBytes = 16;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

Status OpenSslFailed(std::string_view what) {
  return Error(ErrorCode::kInternal, "OpenSSL: " + std::string(what) + " failed");
}

GroupPtr P256Group() { return GroupPtr(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1)); }

// An EVP_PKEY of P-256 from OpenSSL parameters (`selection`: EVP_PKEY_KEYPAIR or
// EVP_PKEY_PUBLIC_KEY).
Result<PkeyPtr> KeyFromParams(const BIGNUM* scalar, std::string_view point, int selection) {
  ParamBldPtr build(OSSL_PARAM_BLD_new());
  if (!build ||
      OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, kGroupName, 0) !=
          1 ||
      OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1 ||
      (scalar != nullptr &&
       OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_PRIV_KEY, scalar) != 1)) {
    return OpenSslFailed("building key parameters");
  }
  ParamPtr params(OSSL_PARAM_BLD_to_param(build.get()));
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, selection, params.get()) != 1) {
    return OpenSslFailed("loading a P-256 key");
  }
  return PkeyPtr(key);
}

}  // namespace

void PkeyFree::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }

Result<P256Pair> P256FromScalar(std::string_view scalar) {
  if (scalar.size() != kScalarBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "a P-256 private key is 32 bytes, not " + std::to_string(scalar.size()));
  }
  GroupPtr group = P256Group();
  BnCtxPtr bn_ctx(BN_CTX_new());
  BnPtr d(BN_bin2bn(Bytes(scalar), static_cast<int>(scalar.size()), nullptr));
  if (!group || !bn_ctx || !d) return OpenSslFailed("reading a P-256 private key");
  if (BN_is_zero(d.get()) || BN_cmp(d.get(), EC_GROUP_get0_order(group.get())) >= 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "not a P-256 private key (zero, or not below the group order)");
  }
  PointPtr public_point(EC_POINT_new(group.get()));
  std::string point(kPointBytes, '\0');
  if (!public_point ||
      EC_POINT_mul(group.get(), public_point.get(), d.get(), nullptr, nullptr, bn_ctx.get()) != 1 ||
      EC_POINT_point2oct(group.get(), public_point.get(), POINT_CONVERSION_UNCOMPRESSED,
                         Bytes(point), point.size(), bn_ctx.get()) != kPointBytes) {
    return OpenSslFailed("deriving a P-256 public key");
  }
  AS_ASSIGN_OR_RETURN(PkeyPtr key, KeyFromParams(d.get(), point, EVP_PKEY_KEYPAIR));
  return P256Pair{std::move(key), std::move(point)};
}

Result<std::string> RandomBytes(std::size_t size) {
  std::string bytes(size, '\0');
  if (RAND_bytes(Bytes(bytes), static_cast<int>(bytes.size())) != 1) {
    return OpenSslFailed("the random generator");
  }
  return bytes;
}

Result<std::string> RandomP256Scalar() {
  for (int attempt = 0; attempt < 16; ++attempt) {  // each attempt fails with p < 2^-32
    AS_ASSIGN_OR_RETURN(std::string scalar, RandomBytes(kScalarBytes));
    if (P256FromScalar(scalar).ok()) return scalar;
  }
  return OpenSslFailed("drawing a P-256 private key");
}

bool IsOnP256(std::string_view point) {
  if (point.size() != kPointBytes || point[0] != '\x04') return false;
  GroupPtr group = P256Group();
  BnCtxPtr bn_ctx(BN_CTX_new());
  if (!group || !bn_ctx) return false;
  PointPtr p(EC_POINT_new(group.get()));
  return p &&
         EC_POINT_oct2point(group.get(), p.get(), Bytes(point), point.size(), bn_ctx.get()) == 1 &&
         EC_POINT_is_on_curve(group.get(), p.get(), bn_ctx.get()) == 1 &&
         EC_POINT_is_at_infinity(group.get(), p.get()) == 0;
}

Result<PkeyPtr> P256FromPoint(std::string_view point) {
  if (!IsOnP256(point)) {
    return Error(ErrorCode::kInvalidArgument,
                 "not an uncompressed P-256 point (65 bytes starting 0x04, on the curve)");
  }
  return KeyFromParams(nullptr, point, EVP_PKEY_PUBLIC_KEY);
}

Result<std::string> EcdhP256(EVP_PKEY* own, EVP_PKEY* peer) {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, own, nullptr));
  std::size_t length = 0;
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1 ||
      EVP_PKEY_derive_set_peer(ctx.get(), peer) != 1 ||
      EVP_PKEY_derive(ctx.get(), nullptr, &length) != 1 || length != kScalarBytes) {
    return OpenSslFailed("ECDH");
  }
  std::string secret(length, '\0');
  if (EVP_PKEY_derive(ctx.get(), Bytes(secret), &length) != 1 || length != kScalarBytes) {
    return OpenSslFailed("ECDH");
  }
  return secret;
}

Result<std::string> SignEs256(EVP_PKEY* key, std::string_view message) {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::size_t length = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length, Bytes(message), message.size()) != 1) {
    return OpenSslFailed("ES256 signing");
  }
  std::string der(length, '\0');
  if (EVP_DigestSign(ctx.get(), Bytes(der), &length, Bytes(message), message.size()) != 1) {
    return OpenSslFailed("ES256 signing");
  }
  const unsigned char* in = Bytes(der);
  SigPtr sig(d2i_ECDSA_SIG(nullptr, &in, static_cast<long>(length)));
  if (!sig) return OpenSslFailed("reading an ECDSA signature");
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string raw(2 * kScalarBytes, '\0');
  if (BN_bn2binpad(r, Bytes(raw), kScalarBytes) != kScalarBytes ||
      BN_bn2binpad(s, Bytes(raw) + kScalarBytes, kScalarBytes) != kScalarBytes) {
    return OpenSslFailed("writing an ES256 signature");
  }
  return raw;
}

Result<std::string> HkdfSha256(std::string_view salt, std::string_view ikm, std::string_view info,
                               std::size_t length) {
  KdfPtr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  KdfCtxPtr ctx(kdf ? EVP_KDF_CTX_new(kdf.get()) : nullptr);
  if (!ctx) return OpenSslFailed("HKDF");
  char digest[] = "SHA256";
  // OSSL_PARAM takes non-const pointers; OpenSSL only reads them.
  std::array<OSSL_PARAM, 5> params = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(ikm.data()),
                                        ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                        salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()),
                                        info.size()),
      OSSL_PARAM_construct_end(),
  };
  std::string out(length, '\0');
  if (EVP_KDF_derive(ctx.get(), Bytes(out), out.size(), params.data()) != 1) {
    return OpenSslFailed("HKDF");
  }
  return out;
}

Result<std::string> Aes128GcmSeal(std::string_view key, std::string_view nonce,
                                  std::string_view plaintext) {
  if (key.size() != kAes128KeyBytes || nonce.size() != kGcmNonceBytes) {
    return Error(ErrorCode::kInvalidArgument, "AES-128-GCM takes a 16-byte key, 12-byte nonce");
  }
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  std::string out(plaintext.size() + kGcmTagBytes, '\0');
  int n = 0;
  int tail = 0;
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), Bytes(out), &n, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), Bytes(out) + n, &tail) != 1 ||
      static_cast<std::size_t>(n) + static_cast<std::size_t>(tail) != plaintext.size() ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kGcmTagBytes,
                          Bytes(out) + plaintext.size()) != 1) {
    return OpenSslFailed("AES-128-GCM");
  }
  return out;
}

Result<std::string> Aes128GcmOpen(std::string_view key, std::string_view nonce,
                                  std::string_view sealed) {
  if (key.size() != kAes128KeyBytes || nonce.size() != kGcmNonceBytes) {
    return Error(ErrorCode::kInvalidArgument, "AES-128-GCM takes a 16-byte key, 12-byte nonce");
  }
  if (sealed.size() < kGcmTagBytes) {
    return Error(ErrorCode::kInvalidArgument, "a record shorter than its 16-byte tag");
  }
  const std::size_t size = sealed.size() - kGcmTagBytes;
  std::string tag(sealed.substr(size));
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  std::string out(size, '\0');
  int n = 0;
  int tail = 0;
  if (!ctx ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), Bytes(out), &n, Bytes(sealed), static_cast<int>(size)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kGcmTagBytes, Bytes(tag)) != 1) {
    return OpenSslFailed("AES-128-GCM");
  }
  if (EVP_DecryptFinal_ex(ctx.get(), Bytes(out) + n, &tail) != 1) {
    return Error(ErrorCode::kInvalidArgument, "a record that does not authenticate");
  }
  out.resize(static_cast<std::size_t>(n) + static_cast<std::size_t>(tail));
  return out;
}

std::string Sha256(std::string_view bytes) {
  std::string digest(EVP_MAX_MD_SIZE, '\0');
  unsigned int length = 0;
  (void)EVP_Digest(bytes.data(), bytes.size(), Bytes(digest), &length, EVP_sha256(), nullptr);
  digest.resize(length);
  return digest;
}

std::optional<std::string> DecodeBase64Url(std::string_view text) {
  for (int i = 0; i < 2 && !text.empty() && text.back() == '='; ++i) text.remove_suffix(1);
  return net::DecodeBase64(text, net::Base64Alphabet::kUrlSafeNoPadding);
}

std::string EncodeBase64Url(std::string_view bytes) {
  return net::EncodeBase64(bytes, net::Base64Alphabet::kUrlSafeNoPadding);
}

}  // namespace agentstream::push::internal
