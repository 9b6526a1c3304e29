// The plain values of the agents API (docs/protocol.md): what a client asks for (a create
// config, a submission) and what the daemon answers (an agent snapshot, a send reply). The
// daemon's runtime (runtime/agent_manager.h) takes and returns them; api_json.h encodes them for
// the HTTP and WebSocket surface and the CLI client decodes them, so the client never compiles
// against the runtime.
//
// Plain structs: no behaviour, copyable, no thread safety of their own. Field contracts (which
// are required, what an empty value means) are stated next to each field; the codecs in
// api_json.h check them on decode.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/turn/command.h"
#include "core/turn/effect.h"

namespace agentstream::api {

// POST /v1/agents.
struct AgentConfig {
  std::string provider;  // a name the daemon's ProviderFactory knows: "claude", "scripted", ...
  std::string cwd;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> title;
  // Makes a create idempotent (the body's clientRequestId, or the Idempotency-Key header): a
  // retry with the same key answers the agent the first request made; with another config it
  // is refused with kConflict. 1 to 256 printable ASCII characters.
  std::optional<std::string> client_request_id;
  // Set by the daemon, never read from a request: the session's id (at creation, the id to create
  // it with, when a workspace was made for it under that name; the agent's CLI gets it as
  // AGENTSTREAM_AGENT_ID), and the worktree it runs in (cwd is then the worktree's path),
  // recorded as workspace.created right after session.created.
  std::optional<SessionId> session_id;
  std::optional<WorkspaceCreated> workspace;
};

// A prompt waiting for the running turn.
struct QueuedPrompt {
  std::string client_message_id;
  std::string text;
};

// A permission request the agent waits on.
struct PendingPermissionInfo {
  RequestId request_id;
  std::optional<ToolCallId> call_id;
  std::string tool_name;
};

// What GET /v1/agents/{id} reports. A snapshot: it may be stale by the time it is read.
struct AgentSnapshot {
  SessionId id;
  std::string provider;
  std::string cwd;
  std::string title;
  std::string model;     // empty until known
  std::string mode;      // empty until known
  std::string thinking;  // the thinking option last set; empty: the runtime's default
  // What the runtime offers (its last capabilities.changed): present while a runtime is attached
  // and has reported any.
  std::optional<CapabilitiesChanged> capabilities;
  // As of `cursor`: the status the acknowledged log implies (a client that reads the log through
  // `cursor` sees the same status). The queue, active turn and permissions are the live state.
  turn::SessionStatus status = turn::SessionStatus::kIdle;
  std::optional<TurnId> active_turn;  // the open foreground turn, else the newest open turn
  Cursor cursor;                      // the log's current epoch and acknowledged tail
  std::vector<QueuedPrompt> queue;    // prompts waiting for the running turn, oldest first
  std::vector<PendingPermissionInfo> permissions;
  TimestampMs created_ms = 0;
  std::optional<HistoryBase> forked_from;
  bool loaded = false;  // a runtime is attached (the provider process runs, or is starting)
  bool closed = false;  // DELETE /v1/agents/{id} was called
  std::string owner;    // the daemon running it (its lease is live); empty when none does
  // Every usage report of the session, summed (the log's SessionMeta::usage); nullopt for a
  // session stored before the log kept totals.
  std::optional<Usage> usage;
  // The CLI whose transcript the session was imported from ("claude", "codex"; docs/import.md);
  // empty for a session made here.
  std::string imported;
};

// POST /v1/agents/{id}/messages.
struct SendRequest {
  std::string client_message_id;  // required; a retry with the same id is recorded once
  std::string text;
  std::vector<Attachment> attachments;
  turn::WhileRunning while_running = turn::WhileRunning::kQueue;
};

// The answer to a send. `accepted` is true only once the correlated turn started and the provider
// accepted its prompt; a queued prompt answers at once with outcome kQueued.
struct SendReply {
  turn::SubmissionOutcome outcome = turn::SubmissionOutcome::kAccepted;
  bool accepted = false;
  std::optional<TurnId> turn;
  Cursor cursor;        // the log's tail when the reply was made
  std::string message;  // why, for kRejected
};

}  // namespace agentstream::api
