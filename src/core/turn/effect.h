// Effects: what the turn engine asks its owner (the daemon's session actor) to do after the
// events of a step were appended. The engine performs no I/O; the owner executes effects in
// order and reports outcomes back as commands (command.h).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/ids.h"

namespace agentstream::turn {

enum class SessionStatus { kIdle, kRunning, kPermission, kError };
std::string_view SessionStatusName(SessionStatus status);

// Call the provider's startTurn for `turn`; report ProviderAcceptedTurn / ProviderRejectedTurn.
struct StartProviderTurn {
  TurnId turn;
  std::string client_message_id;
  std::string text;
  std::vector<Attachment> attachments;
};

// Call the provider's interrupt (with escalation); report InterruptTeardownDone when done.
struct InterruptProvider {
  TurnId turn;
};

struct SendPermissionReply {
  RequestId request_id;
  PermissionDecision decision = PermissionDecision::kDeny;
  std::optional<std::string> option_id;
  std::optional<std::string> message;
};

enum class SubmissionOutcome {
  kAccepted,   // the correlated turn started and the provider accepted it
  kQueued,     // waiting for the running turn; live-only "queued" control event
  kDuplicate,  // a retry of a client message id already seen: nothing recorded again
  kRejected,   // the provider refused; the turn failed
  kCanceled,   // a queued prompt was removed before it entered the log
};

// Answer the submitter of `client_message_id` (and tell every client for kQueued / kCanceled).
struct ReplySubmission {
  std::string client_message_id;
  SubmissionOutcome outcome = SubmissionOutcome::kAccepted;
  std::optional<TurnId> turn;
  std::string message;
};

// The derived session status changed (live-only control event).
struct StatusChanged {
  SessionStatus status = SessionStatus::kIdle;
};

// The provider's process is gone (it crashed, was killed, or was stopped after a stall): the owner
// replaces the runtime, and the next one resumes the conversation from the persistence handle.
// Queued prompts are held for it.
struct RuntimeExited {
  std::string message;
};

using Effect = std::variant<StartProviderTurn, InterruptProvider, SendPermissionReply,
                            ReplySubmission, StatusChanged, RuntimeExited>;

}  // namespace agentstream::turn
