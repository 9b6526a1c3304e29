#include "process/run_command.h"

#include <gtest/gtest.h>

namespace agentstream::process {
namespace {

TEST(RunCommandTest, CollectsStdoutStderrAndTheExitCode) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo one; echo two; echo oops >&2; exit 3"};
  auto ran = RunCommand(options, Millis(60000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->out, "one\ntwo\n");
  EXPECT_EQ(ran->exit.exit_code, 3);
  EXPECT_EQ(ran->exit.stderr_tail, "oops\n");
}

TEST(RunCommandTest, StdinIsClosed) {
  SpawnOptions options;
  options.argv = {"/bin/cat"};
  auto ran = RunCommand(options, Millis(60000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit.exit_code, 0);
}

TEST(RunCommandTest, AProgramThatCannotStartIsUnavailable) {
  SpawnOptions options;
  options.argv = {"agentstream-no-such-program"};
  auto ran = RunCommand(options, Millis(60000));
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), ErrorCode::kNotFound);
}

TEST(RunCommandTest, StdoutPastTheBoundKeepsItsFirstWholeLines) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo 12345; echo 67890; echo abcde; exit 0"};
  auto ran = RunCommand(options, Millis(60000), 14);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->out, "12345\n67890\n");
  EXPECT_TRUE(ran->out_truncated);
  EXPECT_EQ(ran->exit.exit_code, 0);
  auto whole = RunCommand(options, Millis(60000), 18);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->out, "12345\n67890\nabcde\n");
  EXPECT_FALSE(whole->out_truncated);
}

TEST(RunCommandTest, AProgramThatOverstaysIsKilled) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "600"};
  auto ran = RunCommand(options, Millis(200));
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(ran.status().message().find("did not finish"), std::string::npos);
}

}  // namespace
}  // namespace agentstream::process
