// Daemon-side inputs of the turn engine: what clients ask for (submit, interrupt, permission
// reply, cancel a queued prompt) and what the provider layer reports about the effects the engine
// asked for (turn accepted or rejected by the provider, interrupt teardown finished), plus restart
// recovery. Plain values.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/turn/provider_event.h"

namespace agentstream::turn {

// What to do with a prompt that arrives while a turn runs (docs/timeline.md, "Submissions").
enum class WhileRunning {
  kQueue,      // start it when the session is next free; visible to every client while queued
  kInterrupt,  // interrupt the running turn, await its teardown, then start this prompt
  kSteer,      // replace the running turn: handled as kInterrupt (see docs/timeline.md)
};

struct SubmitPrompt {
  std::string client_message_id;  // required; a retry with the same id is recorded once
  std::string text;
  std::vector<Attachment> attachments;
  WhileRunning while_running = WhileRunning::kQueue;
};

// The provider accepted the prompt of `turn` (its startTurn resolved).
struct ProviderAcceptedTurn {
  TurnId turn;
};
// The provider refused the prompt of `turn` (not connected, runtime rejected, ...).
struct ProviderRejectedTurn {
  TurnId turn;
  std::string message;
};

// Interrupts the foreground turn, else every autonomous turn; with the teardown that follows it
// always ends in a terminal (docs/timeline.md, "Turn model").
struct RequestInterrupt {};

// The provider layer finished interrupting (protocol cancel, then signals): whatever is still open
// of the interrupted turns is canceled, so an interrupt always ends in a terminal.
struct InterruptTeardownDone {};

struct ReplyPermission {
  RequestId request_id;
  PermissionDecision decision = PermissionDecision::kDeny;
  std::optional<std::string> option_id;
  std::optional<std::string> message;
};

// Removes a queued prompt before it started; recorded as prompt.canceled with `reason`.
struct CancelQueuedPrompt {
  std::string client_message_id;
  std::string reason = "canceled by a client";
};

// The runtime that ran this state stopped without closing its turns (the daemon restarted, or
// the daemon that owned the session stopped answering): every turn left open fails with `code`.
// Prompts queued in the log stay held until ResumeQueue.
struct RecoverAfterRestart {
  std::string code = "daemon_restarted";
  std::string message = "the daemon restarted during this turn";
};

// The runtime is ready: prompts restored from the log's queue may start (the first one as soon
// as no turn is open).
struct ResumeQueue {};
// The runtime is stopping: queued prompts stay in the log's queue and none starts.
struct HoldQueue {};

using Command = std::variant<SubmitPrompt, ProviderAcceptedTurn, ProviderRejectedTurn,
                             RequestInterrupt, InterruptTeardownDone, ReplyPermission,
                             CancelQueuedPrompt, RecoverAfterRestart, ResumeQueue, HoldQueue>;

// Everything the engine consumes, in the order the session's owner serializes it.
using EngineInput = std::variant<Command, ProviderEvent>;

}  // namespace agentstream::turn
