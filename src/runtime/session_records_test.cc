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
