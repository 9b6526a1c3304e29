#include "pg/replication.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace agentstream::pg {
namespace {

using Level = ReplicationVerdict::Level;

ReplicationState State(std::string commit, std::string names, std::vector<Standby> standbys) {
  return ReplicationState{std::move(commit), std::move(names), std::move(standbys)};
}

TEST(JudgeReplication, ASynchronousStandbyLosesNothing) {
  const ReplicationVerdict v = JudgeReplication(State("on", "*", {{"b", "sync"}}));
  EXPECT_EQ(v.level, Level::kInfo);
  EXPECT_EQ(v.setup, "synchronous");
  EXPECT_EQ(JudgeReplication(State("remote_apply", "b", {{"b", "quorum"}})).setup, "synchronous");
}

TEST(JudgeReplication, AsynchronousStandbysWarn) {
  const ReplicationVerdict v = JudgeReplication(State("on", "", {{"b", "async"}}));
  EXPECT_EQ(v.level, Level::kWarn);
  EXPECT_EQ(v.setup, "asynchronous");
  EXPECT_NE(v.message.find("can be lost"), std::string::npos);
}

TEST(JudgeReplication, NoStandbyIsSaidOnceAtInfo) {
  const ReplicationVerdict v = JudgeReplication(State("on", "", {}));
  EXPECT_EQ(v.level, Level::kInfo);
  EXPECT_EQ(v.setup, "single");
}

TEST(JudgeReplication, ANamedStandbyThatIsNotConnectedWarns) {
  EXPECT_EQ(JudgeReplication(State("on", "b", {})).setup, "no_sync_standby");
  EXPECT_EQ(JudgeReplication(State("on", "b", {{"c", "async"}})).level, Level::kWarn);
  // Standbys whose state this role cannot read: the setting is taken at its word.
  EXPECT_EQ(JudgeReplication(State("on", "b", {{"", ""}})).setup, "synchronous");
}

TEST(JudgeReplication, ACommitThatDoesNotWaitForTheStandbyWarns) {
  for (const char* commit : {"off", "local"}) {
    const ReplicationVerdict v = JudgeReplication(State(commit, "*", {{"b", "sync"}}));
    EXPECT_EQ(v.level, Level::kWarn) << commit;
    EXPECT_EQ(v.setup, "local_commit") << commit;
  }
}

TEST(ReadReplication, ReadsTheServersSettings) {
  const char* server = std::getenv("AGENTSTREAM_TEST_PG");
  if (server == nullptr || *server == '\0') GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
  auto conn = Conn::Open(server);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto state = ReadReplication(*conn);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto expected = conn->Exec("SELECT current_setting('synchronous_commit')");
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(state->synchronous_commit, expected->Text(0, 0));
  EXPECT_FALSE(JudgeReplication(*state).message.empty());
}

}  // namespace
}  // namespace agentstream::pg
