// Property tests over random interleavings of prompts, provider events, interrupts, teardowns,
// permission replies, process exits and daemon restarts: the turn invariants (docs/timeline.md)
// hold, and the live status always equals a fresh replay of the log.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "core/timeline/invariants.h"
#include "core/turn/test_util.h"
#include "core/turn/turn_state_codec.h"

namespace agentstream::turn::testing {
namespace {

struct Op {
  int kind = 0;
  int a = 0;  // picks an id from a small pool so ids collide often
  int b = 0;
};

// Lets rapidcheck print a shrunk counterexample as "{kind,a,b}".
void showValue(const Op& op, std::ostream& os) {
  os << "{" << op.kind << "," << op.a << "," << op.b << "}";
}

constexpr int kOpKinds = 20;

std::string Pick(const char* prefix, int n) { return std::string(prefix) + std::to_string(n); }

// Applies one random operation. Returns false for a daemon restart (handled by the caller).
std::optional<EngineInput> ToInput(const Op& op, const Harness& h, int& prompt_counter) {
  const MessageId msg(Pick("m", op.a % 4));
  const ToolCallId call(Pick("c", op.a % 3));
  const std::optional<std::string> task =
      op.b % 3 == 0 ? std::nullopt : std::optional<std::string>(Pick("task", op.b % 2));
  switch (op.kind) {
    case 0:
    case 1: {
      const int id = op.b % 3 == 0 && prompt_counter > 0 ? prompt_counter - 1 : prompt_counter++;
      return EngineInput(Command(
          SubmitPrompt{Pick("p", id), Pick("text", id), {}, static_cast<WhileRunning>(op.a % 3)}));
    }
    case 2: {
      std::optional<TurnId> any;
      for (const auto& [id, run] : h.state.open) any = id;
      if (!any) return std::nullopt;
      if (op.a % 4 == 0) return EngineInput(Command(ProviderRejectedTurn{*any, "no"}));
      return EngineInput(Command(ProviderAcceptedTurn{*any}));
    }
    case 3:
      return EngineInput(ProviderEvent(ProviderMessageStart{msg, std::nullopt, task}));
    case 4:
    case 5:
      return EngineInput(ProviderEvent(ProviderTextDelta{msg, "x", std::nullopt, task}));
    case 6:
      return EngineInput(ProviderEvent(ProviderMessageStop{msg}));
    case 7:
      return EngineInput(
          ProviderEvent(ProviderToolStart{call, "Bash", std::nullopt, {}, msg, task}));
    case 8:
      return EngineInput(ProviderEvent(ProviderToolEnd{call}));
    case 9:
      return EngineInput(
          ProviderEvent(ProviderPermissionRequest{RequestId(Pick("r", op.a % 3)), call, "?"}));
    case 10:
      return EngineInput(
          Command(ReplyPermission{RequestId(Pick("r", op.a % 3)), PermissionDecision::kAllow}));
    case 11:
    case 12:
      return EngineInput(ProviderEvent(
          ProviderTurnResult{static_cast<TurnOutcome>(op.a % 3), std::nullopt, "e", "m", task}));
    case 13:
      return EngineInput(Command(RequestInterrupt{}));
    case 14:
      return EngineInput(Command(InterruptTeardownDone{}));
    case 15:
      return EngineInput(
          ProviderEvent(ProviderUserEcho{msg, std::nullopt, Pick("text", op.a % 3)}));
    case 16:
      return EngineInput(ProviderEvent(ProviderTurnBegan{task}));
    case 17:
      return EngineInput(ProviderEvent(ProviderError{"e", "m", op.a % 5 == 0}));
    case 18:
      return op.a % 6 == 0
                 ? EngineInput(ProviderEvent(ProviderExited{"gone"}))
                 : EngineInput(ProviderEvent(ProviderTaskNotification{"task0", "done", ""}));
    default:
      return std::nullopt;  // 19: daemon restart
  }
}

rc::Gen<std::vector<Op>> RandomOps() {
  return rc::gen::container<std::vector<Op>>(
      rc::gen::build<Op>(rc::gen::set(&Op::kind, rc::gen::inRange(0, kOpKinds)),
                         rc::gen::set(&Op::a, rc::gen::inRange(0, 60)),
                         rc::gen::set(&Op::b, rc::gen::inRange(0, 60))));
}

// Plays one operation: a daemon restart (state from the log, then recovery) or an engine input.
void Play(const Op& op, Harness& h, int& prompts) {
  if (op.kind == 19) {
    h.state = RestoreTurnState(h.log, "test");
    h.Cmd(RecoverAfterRestart{});
  } else if (auto input = ToInput(op, h, prompts)) {
    h.Feed(*input);
  }
}

RC_GTEST_PROP(EngineProperty, InvariantsHoldAndStatusEqualsReplay, ()) {
  const auto ops = *RandomOps();
  Harness h;
  int prompts = 0;
  std::set<std::string> accepted_prompts;
  for (const Op& op : ops) {
    Play(op, h, prompts);
    for (const Effect& e : h.effects)
      if (const auto* r = std::get_if<ReplySubmission>(&e);
          r && r->outcome == SubmissionOutcome::kAccepted)
        accepted_prompts.insert(r->client_message_id);
    RC_ASSERT(StatusFromLog(h.log) == SessionStatusOf(h.state));
    // RC_ASSERT captures `||` as an overloaded operator that evaluates both sides, so the
    // condition is computed first: dereferencing an empty foreground is undefined.
    const bool foreground_is_open =
        !h.state.foreground || h.state.open.count(*h.state.foreground) == 1;
    RC_ASSERT(foreground_is_open);
  }
  // Settle: interrupt everything and tear it down; queued prompts may start and stay open.
  h.Cmd(RequestInterrupt{}).Cmd(InterruptTeardownDone{});
  timeline::CheckOptions options;
  options.allow_open_turns_at_tail = true;
  const auto violations = timeline::CheckInvariants(h.log, options);
  for (const auto& v : violations) RC_LOG() << timeline::FormatViolation(v) << "\n";
  RC_ASSERT(violations.empty());
  // Every accepted prompt appears as exactly one user message carrying its id.
  for (const std::string& id : accepted_prompts) {
    int n = 0;
    for (const UserMessage* m : h.Payloads<UserMessage>()) n += m->client_message_id == id;
    RC_ASSERT(n == 1);
  }
  RC_ASSERT(StatusFromLog(h.log) == SessionStatusOf(h.state));
}

// Loading from a checkpoint is loading from the log: the state folded through any seq, written
// as JSON and read back, then folded with the rest of the log, equals the state folded from the
// whole log.
RC_GTEST_PROP(EngineProperty, ACheckpointPlusTheRestOfTheLogEqualsTheWholeLog, ()) {
  const auto ops = *RandomOps();
  Harness h;
  int prompts = 0;
  for (const Op& op : ops) Play(op, h, prompts);
  const std::size_t split = *rc::gen::inRange<std::size_t>(0, h.log.size() + 1);
  TurnStateFold head;
  for (std::size_t i = 0; i < split; ++i) head.Apply(h.log[i]);
  const std::string checkpoint = boost::json::serialize(TurnStateToJson(head.state()));
  Result<TurnState> read = TurnStateFromJson(boost::json::parse(checkpoint));
  RC_ASSERT(read.ok());
  RC_ASSERT(boost::json::serialize(TurnStateToJson(*read)) == checkpoint);
  TurnStateFold rest(std::move(*read));
  for (std::size_t i = split; i < h.log.size(); ++i) rest.Apply(h.log[i]);
  const TurnState loaded = std::move(rest).Finish();
  const TurnState whole = RestoreTurnState(h.log, "test");
  RC_ASSERT(boost::json::serialize(TurnStateToJson(loaded)) ==
            boost::json::serialize(TurnStateToJson(whole)));
  RC_ASSERT(loaded.queue_held == whole.queue_held);
  RC_ASSERT(loaded.reported_status == whole.reported_status);
}

}  // namespace
}  // namespace agentstream::turn::testing
