#include "push/ece.h"

#include <cstdint>
#include <utility>

#include "push/crypto.h"

namespace agentstream::push {
namespace {

constexpr std::size_t kSaltBytes = 16;
constexpr std::size_t kMaxBodyBytes = 65536;  // what DecryptPayload reads at most
constexpr std::size_t kMinRecordSize = 18;    // RFC 8188: a tag and one delimiter byte
constexpr char kLastRecord = '\x02';
constexpr char kOtherRecord = '\x01';

using namespace std::literals;  // NOLINT(google-build-using-namespace)

// The content encryption key and the nonce of RFC 8291 section 3.4 (through RFC 8188
// section 2.2), from the ECDH secret of the two keys, the auth secret and the salt.
struct Keys {
  std::string cek;
  std::string nonce;
};

Result<Keys> DeriveKeys(std::string_view ecdh_secret, std::string_view auth_secret,
                        std::string_view ua_public, std::string_view as_public,
                        std::string_view salt) {
  std::string key_info = "WebPush: info\0"s;
  key_info.append(ua_public).append(as_public);
  AS_ASSIGN_OR_RETURN(std::string ikm,
                      internal::HkdfSha256(auth_secret, ecdh_secret, key_info, 32));
  AS_ASSIGN_OR_RETURN(std::string cek,
                      internal::HkdfSha256(salt, ikm, "Content-Encoding: aes128gcm\0"sv, 16));
  AS_ASSIGN_OR_RETURN(std::string nonce,
                      internal::HkdfSha256(salt, ikm, "Content-Encoding: nonce\0"sv, 12));
  return Keys{std::move(cek), std::move(nonce)};
}

Status CheckAuthSecret(std::string_view auth_secret) {
  if (auth_secret.size() != internal::kAuthBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "the auth secret is 16 bytes, not " + std::to_string(auth_secret.size()));
  }
  return Status::Ok();
}

// The nonce of record `seq`: the base nonce XOR seq as a 96-bit big-endian number.
std::string RecordNonce(std::string nonce, std::uint64_t seq) {
  for (std::size_t i = 0; i < 8; ++i) {
    nonce[nonce.size() - 1 - i] =
        static_cast<char>(static_cast<unsigned char>(nonce[nonce.size() - 1 - i]) ^
                          static_cast<unsigned char>(seq >> (8 * i)));
  }
  return nonce;
}

Status Malformed(std::string_view why) {
  return Error(ErrorCode::kInvalidArgument, "not an aes128gcm body: " + std::string(why));
}

}  // namespace

Result<std::string> EncryptPayloadWith(std::string_view plaintext, std::string_view ua_public,
                                       std::string_view auth_secret,
                                       std::string_view sender_private, std::string_view salt) {
  if (plaintext.size() > kMaxPlaintextBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "a push payload is at most " + std::to_string(kMaxPlaintextBytes) +
                     " bytes, not " + std::to_string(plaintext.size()));
  }
  AS_RETURN_IF_ERROR(CheckAuthSecret(auth_secret));
  if (salt.size() != kSaltBytes) return Error(ErrorCode::kInvalidArgument, "the salt is 16 bytes");
  AS_ASSIGN_OR_RETURN(internal::PkeyPtr ua_key, internal::P256FromPoint(ua_public));
  AS_ASSIGN_OR_RETURN(internal::P256Pair sender, internal::P256FromScalar(sender_private));
  AS_ASSIGN_OR_RETURN(std::string ecdh, internal::EcdhP256(sender.key.get(), ua_key.get()));
  AS_ASSIGN_OR_RETURN(Keys keys, DeriveKeys(ecdh, auth_secret, ua_public, sender.point, salt));
  std::string padded(plaintext);
  padded.push_back(kLastRecord);
  AS_ASSIGN_OR_RETURN(std::string record, internal::Aes128GcmSeal(keys.cek, keys.nonce, padded));

  std::string body(salt);
  for (int shift = 24; shift >= 0; shift -= 8) {
    body.push_back(static_cast<char>((kRecordSize >> shift) & 0xff));
  }
  body.push_back(static_cast<char>(sender.point.size()));
  body.append(sender.point).append(record);
  return body;
}

Result<std::string> EncryptPayload(std::string_view plaintext, std::string_view ua_public,
                                   std::string_view auth_secret) {
  AS_ASSIGN_OR_RETURN(std::string sender_private, internal::RandomP256Scalar());
  AS_ASSIGN_OR_RETURN(std::string salt, internal::RandomBytes(kSaltBytes));
  return EncryptPayloadWith(plaintext, ua_public, auth_secret, sender_private, salt);
}

Result<std::string> DecryptPayload(std::string_view body, std::string_view ua_private,
                                   std::string_view auth_secret) {
  if (body.size() > kMaxBodyBytes) return Malformed("over 64 KiB");
  AS_RETURN_IF_ERROR(CheckAuthSecret(auth_secret));
  if (body.size() < kSaltBytes + 5) return Malformed("shorter than its header");
  const std::string_view salt = body.substr(0, kSaltBytes);
  std::size_t record_size = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    record_size = (record_size << 8) | static_cast<unsigned char>(body[kSaltBytes + i]);
  }
  const std::size_t id_length = static_cast<unsigned char>(body[kSaltBytes + 4]);
  const std::size_t header = kSaltBytes + 5 + id_length;
  if (record_size < kMinRecordSize) return Malformed("a record size under 18");
  if (body.size() <= header) return Malformed("no record");
  const std::string_view as_public = body.substr(kSaltBytes + 5, id_length);
  Result<internal::PkeyPtr> as_key = internal::P256FromPoint(as_public);
  if (!as_key.ok()) return Malformed("the key id is not the sender's P-256 public key");
  AS_ASSIGN_OR_RETURN(internal::P256Pair ua, internal::P256FromScalar(ua_private));
  AS_ASSIGN_OR_RETURN(std::string ecdh, internal::EcdhP256(ua.key.get(), as_key->get()));
  AS_ASSIGN_OR_RETURN(Keys keys, DeriveKeys(ecdh, auth_secret, ua.point, as_public, salt));

  std::string plaintext;
  std::string_view rest = body.substr(header);
  for (std::uint64_t seq = 0; !rest.empty(); ++seq) {
    const std::string_view sealed = rest.substr(0, record_size);
    rest.remove_prefix(sealed.size());
    AS_ASSIGN_OR_RETURN(std::string record,
                        internal::Aes128GcmOpen(keys.cek, RecordNonce(keys.nonce, seq), sealed));
    while (!record.empty() && record.back() == '\0') record.pop_back();
    const char expected = rest.empty() ? kLastRecord : kOtherRecord;
    if (record.empty() || record.back() != expected) {
      return Malformed("record " + std::to_string(seq) + " has no padding delimiter 0x0" +
                       std::string(1, static_cast<char>('0' + expected)));
    }
    record.pop_back();
    plaintext.append(record);
  }
  return plaintext;
}

}  // namespace agentstream::push
