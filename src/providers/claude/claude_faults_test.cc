// Faults (issue 4, item 7): the CLI killed mid-turn, a CLI that stops answering, garbage and
// oversize stdout lines, and an interrupt the CLI ignores. Each yields an error and a terminal for
// the open turn within a bounded time, and another session on the same event loop is unaffected.
#include <signal.h>

#include <gtest/gtest.h>

#include "core/utf8.h"
#include "providers/claude/claude_test_env.h"

namespace agentstream::providers::claude::testing {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Clock;
using process::Millis;

std::size_t Terminals(const Session& s) {
  return s.Of<TurnCompleted>().size() + s.Of<TurnCanceled>().size() + s.Of<TurnFailed>().size();
}

// Starts a slow turn in `victim`, runs `fault` once it streams, and checks the turn ends failed
// with `code` within `bound`, while `bystander` completes a turn of its own meanwhile.
void SlowTurnFault(process::EventLoop& loop, Session& victim, Session& bystander,
                   const std::function<void()>& fault, const std::string& code, Millis bound) {
  victim.Submit("[slow 80] go");
  ASSERT_TRUE(
      victim.WaitFor([&] { return !victim.Of<AssistantMessageDelta>().empty(); }, Millis(30000)));
  bystander.Submit("[slow 8] bystander");
  const auto start = Clock::now();
  fault();
  ASSERT_TRUE(victim.WaitFor([&] { return Terminals(victim) == 1; }, bound + Millis(5000)));
  EXPECT_LT(Clock::now() - start, bound);
  ASSERT_EQ(victim.Of<TurnFailed>().size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(victim.Of<TurnFailed>()[0]->payload).code, code);
  EXPECT_EQ(victim.runner().status(), SessionStatus::kError);
  EXPECT_TRUE(victim.WaitFor([&] { return !victim.provider().GetRuntimeInfo().connected; },
                             Millis(3000)));  // and the CLI is gone
  ASSERT_TRUE(bystander.WaitFor([&] { return Terminals(bystander) == 1; }, Millis(30000)));
  EXPECT_EQ(bystander.Of<TurnCompleted>().size(), 1u);
  EXPECT_EQ(bystander.TextOfTurn(*bystander.Of<TurnCompleted>()[0]->turn).size(),
            std::string("chunk 0 ").size() * 8);
  victim.CheckInvariants(false);
  bystander.CheckInvariants();
}

TEST(ClaudeFaults, CliKilledMidTurn) {
  process::EventLoop loop;
  ModelServer server(loop);
  Session victim(loop, server.port()), bystander(loop, server.port());
  victim.Start();
  bystander.Start();
  SlowTurnFault(
      loop, victim, bystander, [&] { ::kill(victim.provider().GetRuntimeInfo().pid, SIGKILL); },
      "provider_exited", Millis(3000));
  const auto& fail = std::get<TurnFailed>(victim.Of<TurnFailed>()[0]->payload);
  EXPECT_NE(fail.message.find("signal 9"), std::string::npos) << fail.message;
}

TEST(ClaudeFaults, CliStopsAnswering) {
  process::EventLoop loop;
  ModelServer server(loop);
  Session::Options o;
  // Longer than a loaded machine's CLI takes to its first line, so the watchdog fires only once
  // the CLI is frozen.
  o.stall_timeout = Millis(3000);
  Session victim(loop, server.port(), o), bystander(loop, server.port());
  victim.Start();
  bystander.Start();
  // SIGSTOP freezes the CLI: it keeps its pipes open and says nothing.
  SlowTurnFault(
      loop, victim, bystander, [&] { ::kill(victim.provider().GetRuntimeInfo().pid, SIGSTOP); },
      "provider_stalled", Millis(6000));
  ASSERT_GE(victim.Of<ErrorEvent>().size(), 1u);
  EXPECT_TRUE(std::get<ErrorEvent>(victim.Of<ErrorEvent>()[0]->payload).fatal);
}

TEST(ClaudeFaults, GarbageOversizeAndInvalidUtf8Lines) {
  process::EventLoop loop;
  Session::Options o;
  o.program = FakeClaudeProgram();
  o.max_line_bytes = 1024;
  o.stall_timeout = Millis(1000);
  Session s(loop, 0, o);
  s.Start();
  // The fake's answer to initialize lists commands and models of the wrong shapes too: those are
  // passed over (a command named by a number ended the daemon once).
  ASSERT_TRUE(s.WaitFor([&] { return !s.provider().ListCommands().empty(); }, Millis(5000)));
  const std::vector<SlashCommand> commands = s.provider().ListCommands();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].name, "fake");
  EXPECT_EQ(commands[1].name, "x");
  EXPECT_EQ(commands[1].description, "");
  s.Submit("garbage-then-result");
  ASSERT_TRUE(s.WaitFor([&] { return Terminals(s) == 1; }, Millis(5000)));
  // Two non-fatal errors in the turn; the turn itself completes normally.
  const auto errors = s.Of<ErrorEvent>();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(std::get<ErrorEvent>(errors[0]->payload).code, "protocol_garbage");
  EXPECT_EQ(std::get<ErrorEvent>(errors[1]->payload).code, "protocol_oversize");
  for (const Event* e : errors) EXPECT_EQ(e->turn, s.Of<TurnStarted>()[0]->turn);
  ASSERT_EQ(s.Of<TurnCompleted>().size(), 1u);
  const std::string text = s.TextOfTurn(*s.Of<TurnStarted>()[0]->turn);
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(text, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");  // each bad byte became U+FFFD
  // Garbage and then silence: an error, then the stall watchdog fails the turn.
  const auto start = Clock::now();
  s.Submit("garbage-then-silence");
  ASSERT_TRUE(s.WaitFor([&] { return Terminals(s) == 2; }, Millis(10000)));
  EXPECT_LT(Clock::now() - start, Millis(4000));
  ASSERT_EQ(s.Of<TurnFailed>().size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(s.Of<TurnFailed>()[0]->payload).code, "provider_stalled");
  s.CheckInvariants(false);
}

TEST(ClaudeFaults, IgnoredInterruptEscalatesToSignals) {
  process::EventLoop loop;
  Session::Options o;
  o.program = FakeClaudeProgram();
  o.interrupt_timeout = Millis(300);
  Session s(loop, 0, o);
  s.Start();
  s.Submit("ignore-interrupt");
  ASSERT_TRUE(s.WaitFor([&] { return !s.Of<AssistantMessageDelta>().empty(); }, Millis(5000)));
  const int pid = s.provider().GetRuntimeInfo().pid;
  const auto start = Clock::now();
  s.Interrupt();
  // Protocol interrupt (ignored, 300 ms), SIGINT and SIGTERM (trapped, 500 ms each), SIGKILL.
  ASSERT_TRUE(s.WaitFor([&] { return Terminals(s) == 1; }, Millis(10000)));
  EXPECT_LT(Clock::now() - start, Millis(4000));
  EXPECT_GE(Clock::now() - start, Millis(1200));
  ASSERT_EQ(s.Of<TurnCanceled>().size(), 1u);  // an interrupt ends canceled, whatever it took
  EXPECT_NE(::kill(pid, 0), 0);                // and the process is gone
  s.CheckInvariants(false);
}

}  // namespace
}  // namespace agentstream::providers::claude::testing
