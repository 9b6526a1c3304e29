// Reading a browser's PushSubscription.toJSON(): every field checked and named when wrong.
#include "push/subscription.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>

#include "push/testing/base64url.h"

namespace agentstream::push {
namespace {

using testing::FromB64;
using testing::ToB64;

// RFC 8291's example subscription keys.
constexpr const char* kP256dh =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
constexpr const char* kAuth = "BTBZMqHH6r4Tts7J_aSIgg";
constexpr const char* kEndpoint = "https://fcm.googleapis.com/fcm/send/abc:def";

boost::json::object Subscription(std::string endpoint = kEndpoint, std::string p256dh = kP256dh,
                                 std::string auth = kAuth) {
  return {{"endpoint", endpoint},
          {"expirationTime", nullptr},
          {"keys", boost::json::object{{"p256dh", p256dh}, {"auth", auth}}}};
}

// The error reading `json`, which must name `field`.
void ExpectRefused(const boost::json::value& json, std::string_view field,
                   const SubscriptionPolicy& policy = {}) {
  Result<PushSubscription> out = SubscriptionFromJson(json, policy);
  ASSERT_FALSE(out.ok()) << boost::json::serialize(json);
  EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find(field), std::string::npos)
      << out.status().message() << " should name " << field;
}

TEST(SubscriptionFromJson, ReadsTheBrowsersShapeAndWritesItBack) {
  Result<PushSubscription> sub = SubscriptionFromJson(Subscription(), {});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->endpoint, kEndpoint);
  EXPECT_EQ(sub->p256dh, FromB64(kP256dh));
  EXPECT_EQ(sub->auth, FromB64(kAuth));
  EXPECT_EQ(SubscriptionToJson(*sub), boost::json::value(Subscription()));
  Result<PushSubscription> again = SubscriptionFromJson(SubscriptionToJson(*sub), {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *sub);
}

TEST(SubscriptionFromJson, ToleratesPaddingAndANumericExpiration) {
  boost::json::object json =
      Subscription(kEndpoint, std::string(kP256dh) + "=", "BTBZMqHH6r4Tts7J_aSIgg==");
  json["expirationTime"] = 1800000000000;
  Result<PushSubscription> sub = SubscriptionFromJson(json, {});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->auth, FromB64(kAuth));
  json["expirationTime"] = "tomorrow";
  ExpectRefused(json, "expirationTime");
}

TEST(SubscriptionFromJson, RefusesKeysOfTheWrongLength) {
  const std::string point = FromB64(kP256dh);
  ExpectRefused(Subscription(kEndpoint, ToB64(point.substr(0, 64))), "keys.p256dh");
  ExpectRefused(Subscription(kEndpoint, ToB64(point + "x")), "keys.p256dh");
  ExpectRefused(Subscription(kEndpoint, kP256dh, ToB64(std::string(15, 'a'))), "keys.auth");
  ExpectRefused(Subscription(kEndpoint, kP256dh, ToB64(std::string(17, 'a'))), "keys.auth");
  ExpectRefused(Subscription(kEndpoint, "not base64!"), "keys.p256dh");
  ExpectRefused(Subscription(kEndpoint, kP256dh, "a+b/"), "keys.auth");  // standard alphabet
}

TEST(SubscriptionFromJson, RefusesAPointOffTheCurve) {
  std::string point = FromB64(kP256dh);
  ASSERT_TRUE(IsP256Point(point));
  point[64] ^= 1;  // y changed: no longer on the curve
  EXPECT_FALSE(IsP256Point(point));
  ExpectRefused(Subscription(kEndpoint, ToB64(point)), "keys.p256dh");
  std::string compressed_tag = FromB64(kP256dh);
  compressed_tag[0] = '\x02';
  ExpectRefused(Subscription(kEndpoint, ToB64(compressed_tag)), "keys.p256dh");
  ExpectRefused(Subscription(kEndpoint, ToB64(std::string(65, '\0'))), "keys.p256dh");
}

TEST(SubscriptionFromJson, TheEndpointIsAnHttpsUrlOfAtMost2048Bytes) {
  const std::string base = "https://push.example.net/";
  EXPECT_TRUE(
      SubscriptionFromJson(Subscription(base + std::string(2048 - base.size(), 'a')), {}).ok());
  ExpectRefused(Subscription(base + std::string(2049 - base.size(), 'a')), "2048");
  ExpectRefused(Subscription("http://push.example.net/x"), "endpoint");
  ExpectRefused(Subscription("ftp://push.example.net/x"), "endpoint");
  ExpectRefused(Subscription("/relative"), "endpoint");
  ExpectRefused(Subscription("https://"), "endpoint");
  ExpectRefused(Subscription("https://push.example.net/a b"), "endpoint");
  ExpectRefused(Subscription("https://push.example.net/a\r\nX: y"), "endpoint");
  ExpectRefused(Subscription("https://user@push.example.net/a"), "endpoint");
  ExpectRefused(Subscription("https://push.example.net/a#frag"), "endpoint");
  boost::json::object number = Subscription();
  number["endpoint"] = 5;
  ExpectRefused(number, "endpoint");
}

TEST(SubscriptionFromJson, PlainHttpOnlyWhenThePolicyAllowsIt) {
  const auto json = Subscription("http://127.0.0.1:8090/push/1");
  ExpectRefused(json, "https");
  Result<PushSubscription> sub = SubscriptionFromJson(json, {.allow_http_endpoints = true});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->endpoint, "http://127.0.0.1:8090/push/1");
}

TEST(SubscriptionFromJson, RefusesUnknownMembersAndMissingOnes) {
  boost::json::object extra = Subscription();
  extra["endpoints"] = "x";
  ExpectRefused(extra, "endpoints");
  boost::json::object extra_key = Subscription();
  extra_key["keys"].as_object()["p256"] = "x";
  ExpectRefused(extra_key, "p256");
  boost::json::object no_keys = Subscription();
  no_keys.erase("keys");
  ExpectRefused(no_keys, "keys");
  boost::json::object no_auth = Subscription();
  no_auth["keys"].as_object().erase("auth");
  ExpectRefused(no_auth, "keys.auth");
  ExpectRefused(boost::json::array{}, "object");
  ExpectRefused(boost::json::parse(R"({"keys":{}})"), "endpoint");
}

}  // namespace
}  // namespace agentstream::push
