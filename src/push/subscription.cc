#include "push/subscription.h"

#include <array>
#include <boost/json/object.hpp>
#include <optional>

#include "api/json_members.h"
#include "push/crypto.h"
#include "push/endpoint.h"

namespace agentstream::push {
namespace {

constexpr std::array<std::string_view, 3> kSubscriptionMembers = {"endpoint", "expirationTime",
                                                                  "keys"};
constexpr std::array<std::string_view, 2> kKeysMembers = {"p256dh", "auth"};

Status Bad(std::string_view field, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument, "push subscription" +
                                                (field.empty() ? "" : " " + std::string(field)) +
                                                ": " + std::string(why));
}

// The bytes of a base64url string member, or an error naming it.
Result<std::string> Base64UrlMember(const boost::json::object& keys, std::string_view name,
                                    std::string_view field) {
  const boost::json::value* value = keys.if_contains(name);
  if (value == nullptr || !value->is_string()) return Bad(field, "a base64url string is required");
  std::optional<std::string> bytes = internal::DecodeBase64Url(value->get_string());
  if (!bytes) return Bad(field, "not base64url");
  return std::move(*bytes);
}

}  // namespace

bool IsP256Point(std::string_view point) { return internal::IsOnP256(point); }

Result<PushSubscription> SubscriptionFromJson(const boost::json::value& json,
                                              const SubscriptionPolicy& policy) {
  const boost::json::object* object = json.if_object();
  if (object == nullptr) return Bad("", "a JSON object is required");
  if (Status s = api::RefuseUnknownMembers(*object, kSubscriptionMembers, "the push subscription");
      !s.ok()) {
    return s;
  }
  PushSubscription out;
  const boost::json::value* endpoint = object->if_contains("endpoint");
  if (endpoint == nullptr || !endpoint->is_string()) {
    return Bad("endpoint", "a URL string is required");
  }
  Result<net::HttpUrl> url = internal::CheckSendUrl(
      endpoint->get_string(), "push subscription endpoint", policy.allow_http_endpoints);
  if (!url.ok()) return url.status();
  out.endpoint = std::string(endpoint->get_string());

  if (const boost::json::value* expiration = object->if_contains("expirationTime");
      expiration != nullptr && !expiration->is_null() && !expiration->is_number()) {
    return Bad("expirationTime", "null or a number");
  }
  const boost::json::value* keys_value = object->if_contains("keys");
  if (keys_value == nullptr || !keys_value->is_object()) {
    return Bad("keys", "an object with p256dh and auth is required");
  }
  const boost::json::object& keys = keys_value->get_object();
  AS_RETURN_IF_ERROR(api::RefuseUnknownMembers(keys, kKeysMembers, "the push subscription keys"));
  AS_ASSIGN_OR_RETURN(out.p256dh, Base64UrlMember(keys, "p256dh", "keys.p256dh"));
  if (out.p256dh.size() != internal::kPointBytes) {
    return Bad("keys.p256dh", "a 65-byte uncompressed P-256 point, not " +
                                  std::to_string(out.p256dh.size()) + " bytes");
  }
  if (!internal::IsOnP256(out.p256dh)) return Bad("keys.p256dh", "not a point on P-256");
  AS_ASSIGN_OR_RETURN(out.auth, Base64UrlMember(keys, "auth", "keys.auth"));
  if (out.auth.size() != internal::kAuthBytes) {
    return Bad("keys.auth", "16 bytes, not " + std::to_string(out.auth.size()));
  }
  return out;
}

boost::json::value SubscriptionToJson(const PushSubscription& subscription) {
  return boost::json::object{
      {"endpoint", subscription.endpoint},
      {"expirationTime", nullptr},
      {"keys", boost::json::object{{"p256dh", internal::EncodeBase64Url(subscription.p256dh)},
                                   {"auth", internal::EncodeBase64Url(subscription.auth)}}},
  };
}

}  // namespace agentstream::push
