// libFuzzer target: what the push module reads from outside (push/subscription.h,
// push/sender.h, push/ece.h). Byte 0 picks the reader:
//   0 mod 3: the rest as a browser's PushSubscription JSON (bit 2 of byte 0: http endpoints
//            allowed): an accepted subscription has an http(s) endpoint of at most 2048 bytes
//            (https unless allowed), a 65-byte point on P-256 and a 16-byte auth, and reads back
//            equal from SubscriptionToJson; a refusal is invalid_argument.
//   1 mod 3: the rest as an aes128gcm body, opened with RFC 8291's example subscription keys: an
//            accepted body gives a shorter plaintext, which encrypts again and opens to itself.
//   2 mod 3: the rest as an ntfy target's JSON: an accepted one validates and reads back equal.
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "net/base64.h"
#include "push/ece.h"
#include "push/sender.h"
#include "push/subscription.h"

namespace agentstream::push {
namespace {

using fuzzing::Check;

std::string Raw(std::string_view text) {
  return net::DecodeBase64(text, net::Base64Alphabet::kUrlSafeNoPadding).value();
}

void Subscription(std::string_view text, bool allow_http) {
  boost::system::error_code ec;
  const boost::json::value json = boost::json::parse(text, ec);
  if (ec) return;
  const SubscriptionPolicy policy{.allow_http_endpoints = allow_http};
  Result<PushSubscription> sub = SubscriptionFromJson(json, policy);
  if (!sub.ok()) {
    Check(sub.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  Check(sub->endpoint.size() <= kMaxEndpointBytes);
  Check(sub->endpoint.starts_with("https://") ||
        (allow_http && sub->endpoint.starts_with("http://")));
  Check(sub->p256dh.size() == 65 && IsP256Point(sub->p256dh));
  Check(sub->auth.size() == 16);
  Result<PushSubscription> again = SubscriptionFromJson(SubscriptionToJson(*sub), policy);
  Check(again.ok() && *again == *sub);
}

void Body(std::string_view body) {
  static const std::string ua_private = Raw("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94");
  static const std::string ua_public = Raw(
      "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4");
  static const std::string auth = Raw("BTBZMqHH6r4Tts7J_aSIgg");
  Result<std::string> plaintext = DecryptPayload(body, ua_private, auth);
  if (!plaintext.ok()) {
    Check(plaintext.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  Check(plaintext->size() + kEceHeaderBytes + kEceTagBytes < body.size());
  if (plaintext->size() > kMaxPlaintextBytes) return;
  Result<std::string> again = EncryptPayload(*plaintext, ua_public, auth);
  Check(again.ok());
  Result<std::string> back = DecryptPayload(*again, ua_private, auth);
  Check(back.ok() && *back == *plaintext);
}

void Ntfy(std::string_view text) {
  boost::system::error_code ec;
  const boost::json::value json = boost::json::parse(text, ec);
  if (ec) return;
  Result<NtfyTarget> target = NtfyTargetFromJson(json);
  if (!target.ok()) {
    Check(target.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  Check(ValidateNtfyTarget(*target).ok());
  Result<NtfyTarget> again = NtfyTargetFromJson(NtfyTargetToJson(*target));
  Check(again.ok() && *again == *target);
}

}  // namespace
}  // namespace agentstream::push

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      agentstream::push::Subscription(rest, (data[0] & 4) != 0);
      break;
    case 1:
      agentstream::push::Body(rest);
      break;
    default:
      agentstream::push::Ntfy(rest);
      break;
  }
  return 0;
}
