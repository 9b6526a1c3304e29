#include "notify/settings.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "notify/notifications.h"
#include "push/vapid.h"

namespace agentstream::notify {
namespace {

namespace json = boost::json;

// A subscription with real keys: a P-256 point (a VAPID key's public point serves) and 16 bytes.
json::object Subscription(const std::string& endpoint) {
  auto key = push::GenerateVapidKey();
  EXPECT_TRUE(key.ok());
  return json::object{{"endpoint", endpoint},
                      {"keys", json::object{{"p256dh", push::VapidPublicKey(*key)},
                                            {"auth", "AAECAwQFBgcICQoLDA0ODw"}}}};
}

std::string ErrorOf(const json::value& v, bool allow_http = false) {
  auto s = SettingsFromJson(v, allow_http);
  return s.ok() ? "" : s.status().message();
}

TEST(SettingsTest, DefaultsAndRoundTrip) {
  auto empty = SettingsFromJson(json::object{}, false);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_target());
  for (Kind k : kAllKinds) EXPECT_TRUE(empty->wants(k));
  EXPECT_FALSE(empty->previews);
  EXPECT_EQ(empty->min_turn_ms, kDefaultMinTurnMs);

  json::object full{{"webPush", Subscription("https://push.example.net/s/1")},
                    {"ntfy", json::object{{"url", "https://ntfy.sh"}, {"topic", "agents-1"}}},
                    {"kinds", json::object{{"turnFinished", false}}},
                    {"previews", true},
                    {"minTurnMs", 5000}};
  auto s = SettingsFromJson(full, false);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->web_push && s->ntfy);
  EXPECT_FALSE(s->wants(Kind::kTurnFinished));
  EXPECT_TRUE(s->wants(Kind::kPermission));
  const std::string stored = json::serialize(SettingsToJson(*s));
  EXPECT_EQ(SettingsFromStored(stored), *s);
  EXPECT_EQ(SettingsFromStored(""), Settings{});
  EXPECT_EQ(SettingsFromStored("not json"), Settings{});
  auto shown = SettingsToJson(*s);
  EXPECT_EQ(shown.at("kinds").as_object().size(), 5u);
  EXPECT_TRUE(shown.at("kinds").as_object().at("queueWaiting").as_bool());
}

TEST(SettingsTest, StrictRefusalsNameTheMember) {
  EXPECT_NE(ErrorOf(json::object{{"extra", 1}}).find("extra"), std::string::npos);
  EXPECT_NE(ErrorOf(json::object{{"kinds", json::object{{"nope", true}}}}).find("nope"),
            std::string::npos);
  EXPECT_NE(ErrorOf(json::object{{"kinds", json::object{{"permission", 1}}}}).find("permission"),
            std::string::npos);
  EXPECT_NE(ErrorOf(json::object{{"previews", "yes"}}).find("previews"), std::string::npos);
  EXPECT_NE(ErrorOf(json::object{{"minTurnMs", -1}}).find("minTurnMs"), std::string::npos);
  EXPECT_NE(ErrorOf(json::object{{"minTurnMs", 1.5}}).find("minTurnMs"), std::string::npos);
  EXPECT_NE(ErrorOf(json::parse("[]")).find("object"), std::string::npos);
  // The subscription is read by the push module, strictly.
  json::object bad_keys = Subscription("https://push.example.net/s/1");
  bad_keys["keys"].as_object()["auth"] = "AAAA";
  EXPECT_NE(ErrorOf(json::object{{"webPush", bad_keys}}).find("webPush"), std::string::npos);
  // Plain http only with --push-allow-http.
  json::object http{{"webPush", Subscription("http://127.0.0.1:9/s/1")}};
  EXPECT_NE(ErrorOf(http).find("webPush"), std::string::npos);
  EXPECT_EQ(ErrorOf(http, true), "");
  json::object ntfy{{"ntfy", json::object{{"url", "http://127.0.0.1:9"}, {"topic", "t"}}}};
  EXPECT_NE(ErrorOf(ntfy).find("ntfy"), std::string::npos);
  EXPECT_EQ(ErrorOf(ntfy, true), "");
  EXPECT_NE(ErrorOf(json::object{{"ntfy", json::object{{"url", "https://ntfy.sh"}}}}).find("ntfy"),
            std::string::npos);
}

TEST(SettingsTest, WantsHonoursKindsAndMinTurn) {
  Settings s;
  Candidate finished{Kind::kTurnFinished, Cursor{}};
  finished.ran_ms = 29999;
  EXPECT_FALSE(Wants(s, finished));
  finished.ran_ms = 30000;
  EXPECT_TRUE(Wants(s, finished));
  Candidate autonomous{Kind::kAutonomousFinished, Cursor{}};
  autonomous.ran_ms = 1;
  EXPECT_TRUE(Wants(s, autonomous));
  s.kinds[static_cast<std::size_t>(Kind::kAutonomousFinished)] = false;
  EXPECT_FALSE(Wants(s, autonomous));
}

TEST(VapidSecretTest, TheSharedHexSecretIsTheKeysScalar) {
  const std::string hex(64, '1');
  auto key = VapidKeyFromSecret(hex);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->private_scalar(), std::string(32, '\x11'));
  EXPECT_EQ(VapidKeyFromSecret(hex)->public_point(), key->public_point());
  EXPECT_FALSE(VapidKeyFromSecret("xyz").ok());
  EXPECT_FALSE(VapidKeyFromSecret(std::string(64, 'g')).ok());
  EXPECT_FALSE(VapidKeyFromSecret(std::string(64, '0')).ok());  // zero is no scalar
  EXPECT_FALSE(VapidKeyFromSecret(std::string(64, 'f')).ok());  // above the group order
}

}  // namespace
}  // namespace agentstream::notify
