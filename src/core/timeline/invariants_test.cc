#include "core/timeline/invariants.h"

#include <gtest/gtest.h>

#include "core/timeline/test_events.h"

namespace agentstream::timeline::testing {
namespace {

const TurnId kT1("turn_1");
const TurnId kT2("turn_2");

TurnStarted Foreground(std::string client) { return TurnStarted{TurnOrigin::kForeground, client}; }
TurnStarted Autonomous() { return TurnStarted{TurnOrigin::kAutonomous}; }
UserMessage User() { return UserMessage{MessageId("u"), "c", "hi"}; }

std::vector<char> Letters(const std::vector<Violation>& vs) {
  std::vector<char> out;
  for (const auto& v : vs) out.push_back(InvariantLetter(v.invariant));
  return out;
}

TEST(Invariants, CleanLogHasNoViolations) {
  LogBuilder b;
  b.Add(Foreground("c"), kT1).Add(User(), kT1).Add(AssistantMessageDelta{MessageId("m"), "x"}, kT1);
  b.Add(TurnCompleted{}, kT1).Add(Autonomous(), kT2).Add(TurnCanceled{"x"}, kT2);
  EXPECT_TRUE(CheckInvariants(b.events).empty());
}

TEST(Invariants, A_DuplicateOrMissingUserMessage) {
  LogBuilder b;
  b.Add(Foreground("c"), kT1).Add(User(), kT1).Add(User(), kT1).Add(TurnCompleted{}, kT1);
  b.Add(Foreground("d"), kT2).Add(TurnCompleted{}, kT2);
  auto v = CheckInvariants(b.events);
  EXPECT_EQ(Letters(v), (std::vector<char>{'a', 'a'}));
  EXPECT_EQ(v[0].cursor, (Cursor{Epoch(1), Seq(3)}));
  EXPECT_EQ(v[1].cursor, (Cursor{Epoch(1), Seq(6)}));
}

TEST(Invariants, B_MissingAndDoubleTerminals) {
  LogBuilder b;
  b.Add(Autonomous(), kT1).Add(TurnCompleted{}, kT2);  // a terminal without a start
  auto v = CheckInvariants(b.events);
  EXPECT_EQ(Letters(v), (std::vector<char>{'b', 'b'}));  // and turn_1 never ends
  EXPECT_EQ(v[0].cursor.seq, Seq(1));
  CheckOptions live;
  live.allow_open_turns_at_tail = true;
  EXPECT_EQ(Letters(CheckInvariants(b.events, live)), (std::vector<char>{'b'}));
}

TEST(Invariants, C_EventAfterTerminal) {
  LogBuilder b;
  b.Add(Autonomous(), kT1)
      .Add(TurnCompleted{}, kT1)
      .Add(AssistantMessageDelta{MessageId("m"), "x"}, kT1);
  b.Add(TurnFailed{"x", "y"}, kT1);
  auto v = CheckInvariants(b.events);
  EXPECT_EQ(Letters(v), (std::vector<char>{'c', 'c'}));
  EXPECT_EQ(v[0].cursor.seq, Seq(3));
  EXPECT_EQ(v[0].turn, kT1);
}

TEST(Invariants, D_ReusedIdsAndAutonomousMistakenForForeground) {
  LogBuilder b;
  b.Add(Autonomous(), kT1).Add(User(), kT1).Add(TurnCompleted{}, kT1);
  b.Add(Autonomous(), kT1).Add(TurnCompleted{}, kT1);  // reused id (and its terminal is late)
  b.Add(TurnStarted{TurnOrigin::kAutonomous, std::string("c")}, kT2);
  b.Add(Foreground("z"), TurnId("turn_3")).Add(User(), TurnId("turn_3"));  // while turn_2 is open
  b.Add(TurnCompleted{}, kT2).Add(TurnCompleted{}, TurnId("turn_3"));
  auto v = CheckInvariants(b.events);
  EXPECT_EQ(Letters(v), (std::vector<char>{'d', 'd', 'c', 'd', 'd'}));
}

TEST(Invariants, E_TranscriptParity) {
  LogBuilder b;
  b.Add(Autonomous(), kT1)
      .Add(AssistantMessageDelta{MessageId("m1"), "hello"}, kT1)
      .Add(TurnCompleted{}, kT1);
  CheckOptions options;
  options.transcript = {{MessageId("m1"), "hello"}};
  EXPECT_TRUE(CheckInvariants(b.events, options).empty());
  options.transcript.push_back({MessageId("m2"), "HELLO"});
  options.transcript.push_back({MessageId("m1"), "hello world"});
  auto v = CheckInvariants(b.events, options);
  EXPECT_EQ(Letters(v), (std::vector<char>{'e', 'e'}));
  EXPECT_EQ(v[0].cursor.seq, Seq(3));
  EXPECT_NE(FormatViolation(v[0]).find("e at 1:3"), std::string::npos);
}

}  // namespace
}  // namespace agentstream::timeline::testing
