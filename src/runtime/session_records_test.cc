#include "runtime/session_records.h"

#include <gtest/gtest.h>

#include <set>

namespace agentstream::runtime {
namespace {

using turn::SessionStatus;

TEST(StatusRecord, RoundTrips) {
  const StatusRecord record{SessionStatus::kPermission, true, "m1", "plan"};
  const StatusRecord back = DecodeStatusRecord(EncodeStatusRecord(record));
  EXPECT_EQ(back.status, SessionStatus::kPermission);
  EXPECT_TRUE(back.closed);
  EXPECT_EQ(back.model, "m1");
  EXPECT_EQ(back.mode, "plan");
  EXPECT_TRUE(MayHaveOpenTurn(back));
}

TEST(StatusRecord, UnknownTextMayHaveAnOpenTurn) {
  EXPECT_FALSE(DecodeStatusRecord("").status.has_value());
  EXPECT_FALSE(DecodeStatusRecord("not json").status.has_value());
  EXPECT_FALSE(DecodeStatusRecord(R"({"status":"sleeping"})").status.has_value());
  EXPECT_TRUE(MayHaveOpenTurn(DecodeStatusRecord("")));
  EXPECT_FALSE(MayHaveOpenTurn(DecodeStatusRecord(R"({"status":"idle","closed":false})")));
  EXPECT_FALSE(MayHaveOpenTurn(DecodeStatusRecord(R"({"status":"error"})")));
}

TEST(PersistenceHandle, RoundTripsAndRejectsGarbage) {
  const auto back = DecodeHandle(EncodeHandle({"claude", "abc-1", "/w"}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->provider, "claude");
  EXPECT_EQ(back->session_id, "abc-1");
  EXPECT_EQ(back->cwd, "/w");
  EXPECT_FALSE(DecodeHandle("").has_value());
  EXPECT_FALSE(DecodeHandle("[1]").has_value());
  EXPECT_FALSE(DecodeHandle(R"({"sessionId":"x"})").has_value());
}

TEST(HistoryFold, KeepsTheLastSettingsAndCapabilitiesThroughACheckpoint) {
  HistoryFold fold;
  auto apply = [&](Payload payload, std::uint64_t seq) {
    Event e;
    e.seq = Seq(seq);
    e.payload = std::move(payload);
    fold.Apply(e);
  };
  const CapabilitiesChanged first{{{"default", "Ask"}}, {{"m1", ""}}, {}, {{"help", "h"}}};
  const CapabilitiesChanged second{{{"default", "Ask"}}, {{"m2", "M2"}}, {{"off", "Off"}}, {}};
  apply(SessionCreated{"scripted", "/w", std::nullopt, "m1", "default"}, 1);
  apply(first, 2);
  apply(ThinkingOptionChanged{"off"}, 3);
  apply(second, 4);
  EXPECT_EQ(fold.capabilities, second);
  EXPECT_EQ(fold.thinking, "off");

  Result<HistoryFold> decoded = DecodeCheckpointBody(EncodeCheckpointBody(fold), "scripted");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->capabilities, second);
  EXPECT_EQ(decoded->thinking, "off");
  EXPECT_EQ(decoded->model, "m1");

  // A checkpoint of a build without them still loads; unreadable lists are left out.
  HistoryFold bare;
  Result<HistoryFold> old = DecodeCheckpointBody(EncodeCheckpointBody(bare), "scripted");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->capabilities.has_value());
  std::string body = EncodeCheckpointBody(bare);
  body.insert(body.size() - 1, R"(,"capabilities":{"models":7})");
  Result<HistoryFold> bad = DecodeCheckpointBody(body, "scripted");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_FALSE(bad->capabilities.has_value());
}

TEST(RandomTurnIds, AreDistinctAndPrefixed) {
  RandomTurnIds a, b;
  std::set<TurnId> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(a.Next());
    seen.insert(b.Next());
  }
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_EQ(seen.begin()->str().rfind("turn_", 0), 0u);
}

}  // namespace
}  // namespace agentstream::runtime
