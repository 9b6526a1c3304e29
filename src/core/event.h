// The event model: the envelope of every record in a session log and the typed payload of each
// event kind.
//
// Kinds carry explicit numbers that are stored on disk and never reused; a retired kind keeps its
// number forever. The JSON field names of every payload are the wire and disk format described in
// docs/event-log-format.md. Changing a field's meaning needs a new format version (event_codec.h).
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ids.h"

namespace agentstream {

enum class EventKind : std::uint16_t {
  kSessionCreated = 1,
  kSessionForked = 2,
  kSessionRewound = 3,
  kSessionTitled = 4,
  kSessionImported = 5,
  kTurnStarted = 10,
  kTurnCompleted = 11,
  kTurnCanceled = 12,
  kTurnFailed = 13,
  kUserMessage = 20,
  kAssistantMessageStart = 21,
  kAssistantMessageDelta = 22,
  kAssistantMessageEnd = 23,
  kReasoning = 24,
  kPromptQueued = 25,
  kPromptCanceled = 26,
  kToolCallStart = 30,
  kToolCallOutput = 31,
  kToolCallEnd = 32,
  kPermissionRequested = 40,
  kPermissionResolved = 41,
  kPlan = 50,
  kModeChanged = 51,
  kModelChanged = 52,
  kThinkingOptionChanged = 53,
  kCapabilitiesChanged = 54,
  kUsage = 60,
  kError = 61,
  kNotice = 62,
  kProviderMetadata = 63,
  kAuthorizationRequired = 70,
  kAuthorizationCompleted = 71,
  kSubagentEvent = 80,
  kWorkspaceCreated = 90,
  kWorkspaceRemoved = 91,
  kWorkspaceAction = 92,
  kAutomationFired = 100,
};

// "turn.started" for kTurnStarted; empty for a number this build does not know.
std::string_view EventKindName(EventKind kind);
// The kind named `name`, or nullopt.
std::optional<EventKind> EventKindFromName(std::string_view name);
// True when `number` is a kind this build knows.
bool IsKnownEventKind(std::uint16_t number);

// ---- Enumerations used inside payloads (stored as their names) ----

enum class TurnOrigin { kForeground, kAutonomous };
enum class ToolCallStatus { kCompleted, kFailed, kCanceled };
enum class PermissionDecision { kAllow, kDeny };
enum class PermissionOptionKind { kAllowOnce, kAllowAlways, kRejectOnce, kRejectAlways };
enum class PlanEntryStatus { kPending, kInProgress, kCompleted };
enum class NoticeLevel { kInfo, kWarning };

// ---- Payloads. Each names its kind and lists its fields once, in Fields(). ----
// Fields() calls v(name, member) for every member; the codec derives encoding and decoding from
// it. std::optional members may be absent; vectors may be absent (empty); others are required.

struct SessionCreated {
  static constexpr EventKind kKind = EventKind::kSessionCreated;
  std::string provider;
  std::string cwd;
  std::optional<std::string> title;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  template <class V>
  void Fields(V& v) {
    v("provider", provider), v("cwd", cwd), v("title", title), v("model", model), v("mode", mode);
  }
};

struct SessionForked {
  static constexpr EventKind kKind = EventKind::kSessionForked;
  SessionId parent;
  Epoch parent_epoch;
  Seq parent_seq;
  template <class V>
  void Fields(V& v) {
    v("parent", parent), v("parentEpoch", parent_epoch), v("parentSeq", parent_seq);
  }
};

struct SessionRewound {
  static constexpr EventKind kKind = EventKind::kSessionRewound;
  Epoch from_epoch;  // the epoch the rewind left
  Epoch to_epoch;    // the epoch whose prefix the new epoch continues
  Seq to_seq;        // the last seq kept from that prefix
  template <class V>
  void Fields(V& v) {
    v("fromEpoch", from_epoch), v("toEpoch", to_epoch), v("toSeq", to_seq);
  }
};

// The session's title changed to `title` (empty: no title). The latest one is the title.
struct SessionTitled {
  static constexpr EventKind kKind = EventKind::kSessionTitled;
  std::string title;
  template <class V>
  void Fields(V& v) {
    v("title", title);
  }
};

// A CLI's own transcript was imported into the session (docs/import.md) through byte `offset` of
// the file at `path`: the events before this one, back to the previous session.imported, came
// from its lines read this time. `skipped` counts the records of types that carry no history, by
// type; `malformed` the lines that are not a JSON object.
struct SessionImported {
  static constexpr EventKind kKind = EventKind::kSessionImported;
  std::string source;      // "claude" | "codex"
  std::string path;        // the transcript file
  std::string session_id;  // the CLI's session id
  std::int64_t offset = 0;
  std::int64_t lines = 0;
  std::int64_t malformed = 0;
  boost::json::value skipped;  // {"type": count}
  template <class V>
  void Fields(V& v) {
    v("source", source), v("path", path), v("sessionId", session_id), v("offset", offset),
        v("lines", lines), v("malformed", malformed), v("skipped", skipped);
  }
};

struct TurnStarted {
  static constexpr EventKind kKind = EventKind::kTurnStarted;
  TurnOrigin origin = TurnOrigin::kForeground;
  std::optional<std::string> client_message_id;  // the prompt that started a foreground turn
  std::optional<std::string> task_id;            // the background task that woke the agent
  template <class V>
  void Fields(V& v) {
    v("origin", origin), v("clientMessageId", client_message_id), v("taskId", task_id);
  }
};

struct TurnCompleted {
  static constexpr EventKind kKind = EventKind::kTurnCompleted;
  std::optional<std::string> stop_reason;
  template <class V>
  void Fields(V& v) {
    v("stopReason", stop_reason);
  }
};

struct TurnCanceled {
  static constexpr EventKind kKind = EventKind::kTurnCanceled;
  std::string reason;
  template <class V>
  void Fields(V& v) {
    v("reason", reason);
  }
};

struct TurnFailed {
  static constexpr EventKind kKind = EventKind::kTurnFailed;
  std::string code;     // short machine-readable cause: "provider_exited", "daemon_restarted", ...
  std::string message;  // for a person
  template <class V>
  void Fields(V& v) {
    v("code", code), v("message", message);
  }
};

struct Attachment {
  std::string kind;  // "image", "file", ...
  std::string mime_type;
  std::optional<std::string> name;
  std::optional<std::string> uri;   // a reference the provider can resolve
  std::optional<std::string> data;  // base64 content, bounded by the event size limit
  template <class V>
  void Fields(V& v) {
    v("kind", kind), v("mimeType", mime_type), v("name", name), v("uri", uri), v("data", data);
  }
};

struct UserMessage {
  static constexpr EventKind kKind = EventKind::kUserMessage;
  MessageId message_id;
  std::string client_message_id;
  std::string text;
  std::vector<Attachment> attachments;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("clientMessageId", client_message_id), v("text", text),
        v("attachments", attachments);
  }
};

// A prompt acknowledged while a turn ran, recorded before the client heard "queued": it waits
// behind the running turn (`whileRunning` absent or "queue") or for the running turn to stop
// ("interrupt", "steer"). It leaves the queue either as a foreground turn whose turn.started and
// user.message carry its clientMessageId, or with prompt.canceled.
struct PromptQueued {
  static constexpr EventKind kKind = EventKind::kPromptQueued;
  std::string client_message_id;
  std::string text;
  std::vector<Attachment> attachments;
  std::optional<std::string> while_running;
  template <class V>
  void Fields(V& v) {
    v("clientMessageId", client_message_id), v("text", text), v("attachments", attachments),
        v("whileRunning", while_running);
  }
};

// A queued prompt that will not run: a client canceled it, or its session stopped first.
struct PromptCanceled {
  static constexpr EventKind kKind = EventKind::kPromptCanceled;
  std::string client_message_id;
  std::string reason;
  template <class V>
  void Fields(V& v) {
    v("clientMessageId", client_message_id), v("reason", reason);
  }
};

struct AssistantMessageStart {
  static constexpr EventKind kKind = EventKind::kAssistantMessageStart;
  MessageId message_id;
  std::optional<MessageId> parent_message_id;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("parentMessageId", parent_message_id);
  }
};

struct AssistantMessageDelta {
  static constexpr EventKind kKind = EventKind::kAssistantMessageDelta;
  MessageId message_id;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("text", text);
  }
};

struct AssistantMessageEnd {
  static constexpr EventKind kKind = EventKind::kAssistantMessageEnd;
  MessageId message_id;
  std::optional<std::string> stop_reason;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("stopReason", stop_reason);
  }
};

struct Reasoning {
  static constexpr EventKind kKind = EventKind::kReasoning;
  MessageId message_id;  // reasoning deltas of one block share an id
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("text", text);
  }
};

struct ToolCallStart {
  static constexpr EventKind kKind = EventKind::kToolCallStart;
  ToolCallId call_id;
  std::string name;
  std::optional<std::string> title;
  boost::json::value input;  // the tool's arguments as the provider gave them
  std::optional<MessageId> parent_message_id;
  template <class V>
  void Fields(V& v) {
    v("callId", call_id), v("name", name), v("title", title), v("input", input),
        v("parentMessageId", parent_message_id);
  }
};

// Output text is bounded (64 KiB by default, cut on a UTF-8 boundary) before it is
// appended; `truncated` says the producer cut it.
struct ToolCallOutput {
  static constexpr EventKind kKind = EventKind::kToolCallOutput;
  ToolCallId call_id;
  std::string text;
  bool truncated = false;
  template <class V>
  void Fields(V& v) {
    v("callId", call_id), v("text", text), v("truncated", truncated);
  }
};

struct ToolCallEnd {
  static constexpr EventKind kKind = EventKind::kToolCallEnd;
  ToolCallId call_id;
  ToolCallStatus status = ToolCallStatus::kCompleted;
  std::optional<std::string> output;  // final result text, bounded like ToolCallOutput
  bool truncated = false;
  std::optional<std::string> error;
  template <class V>
  void Fields(V& v) {
    v("callId", call_id), v("status", status), v("output", output), v("truncated", truncated),
        v("error", error);
  }
};

struct PermissionOption {
  std::string id;
  PermissionOptionKind kind = PermissionOptionKind::kAllowOnce;
  std::string label;
  template <class V>
  void Fields(V& v) {
    v("id", id), v("kind", kind), v("label", label);
  }
};

struct PermissionRequested {
  static constexpr EventKind kKind = EventKind::kPermissionRequested;
  RequestId request_id;
  std::optional<ToolCallId> call_id;
  std::string title;
  std::optional<std::string> tool_name;
  boost::json::value input;
  std::vector<PermissionOption> options;
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("callId", call_id), v("title", title), v("toolName", tool_name),
        v("input", input), v("options", options);
  }
};

struct PermissionResolved {
  static constexpr EventKind kKind = EventKind::kPermissionResolved;
  RequestId request_id;
  PermissionDecision decision = PermissionDecision::kDeny;
  std::optional<std::string> option_id;
  std::optional<std::string> message;
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("decision", decision), v("optionId", option_id),
        v("message", message);
  }
};

struct PlanEntry {
  std::string content;
  PlanEntryStatus status = PlanEntryStatus::kPending;
  std::optional<std::string> priority;
  template <class V>
  void Fields(V& v) {
    v("content", content), v("status", status), v("priority", priority);
  }
};

struct Plan {
  static constexpr EventKind kKind = EventKind::kPlan;
  std::vector<PlanEntry> entries;  // the whole plan; each Plan event replaces the previous one
  template <class V>
  void Fields(V& v) {
    v("entries", entries);
  }
};

struct ModeChanged {
  static constexpr EventKind kKind = EventKind::kModeChanged;
  std::string mode;
  template <class V>
  void Fields(V& v) {
    v("mode", mode);
  }
};

struct ModelChanged {
  static constexpr EventKind kKind = EventKind::kModelChanged;
  std::string model;
  template <class V>
  void Fields(V& v) {
    v("model", model);
  }
};

struct ThinkingOptionChanged {
  static constexpr EventKind kKind = EventKind::kThinkingOptionChanged;
  std::optional<std::string> option;  // absent: the provider's default
  template <class V>
  void Fields(V& v) {
    v("option", option);
  }
};

// One choice of a setting the agent offers (a mode, a model, a thinking option).
struct Choice {
  std::string id;     // what a client sends to pick it
  std::string label;  // for a person; may be empty
  template <class V>
  void Fields(V& v) {
    v("id", id), v("label", label);
  }
  bool operator==(const Choice&) const = default;
};

// A slash command the agent understands ("/compact"), named without its slash.
struct CommandInfo {
  std::string name;
  std::string description;
  template <class V>
  void Fields(V& v) {
    v("name", name), v("description", description);
  }
  bool operator==(const CommandInfo&) const = default;
};

// What the agent's runtime offers now: each event replaces the previous one's lists. Recorded
// when the runtime is ready and whenever the lists change (docs/event-log-format.md).
struct CapabilitiesChanged {
  static constexpr EventKind kKind = EventKind::kCapabilitiesChanged;
  std::vector<Choice> modes;
  std::vector<Choice> models;
  std::vector<Choice> thinking_options;
  std::vector<CommandInfo> commands;
  template <class V>
  void Fields(V& v) {
    v("modes", modes), v("models", models), v("thinkingOptions", thinking_options),
        v("commands", commands);
  }
  bool operator==(const CapabilitiesChanged&) const = default;
};

struct Usage {
  static constexpr EventKind kKind = EventKind::kUsage;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cache_read_tokens = 0;
  std::int64_t cache_write_tokens = 0;
  std::optional<double> cost_usd;
  template <class V>
  void Fields(V& v) {
    v("inputTokens", input_tokens), v("outputTokens", output_tokens),
        v("cacheReadTokens", cache_read_tokens), v("cacheWriteTokens", cache_write_tokens),
        v("costUsd", cost_usd);
  }
};

struct ErrorEvent {
  static constexpr EventKind kKind = EventKind::kError;
  std::string code;
  std::string message;
  bool fatal = false;  // the session cannot continue without a restart
  template <class V>
  void Fields(V& v) {
    v("code", code), v("message", message), v("fatal", fatal);
  }
};

struct Notice {
  static constexpr EventKind kKind = EventKind::kNotice;
  NoticeLevel level = NoticeLevel::kInfo;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("level", level), v("text", text);
  }
};

// A provider message this build does not map: kept, never dropped silently.
struct ProviderMetadata {
  static constexpr EventKind kKind = EventKind::kProviderMetadata;
  std::string provider;
  std::string type;
  boost::json::value data;
  template <class V>
  void Fields(V& v) {
    v("provider", provider), v("type", type), v("data", data);
  }
};

struct AuthorizationRequired {
  static constexpr EventKind kKind = EventKind::kAuthorizationRequired;
  RequestId request_id;
  std::string message;
  std::optional<std::string> url;
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("message", message), v("url", url);
  }
};

struct AuthorizationCompleted {
  static constexpr EventKind kKind = EventKind::kAuthorizationCompleted;
  RequestId request_id;
  bool granted = false;
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("granted", granted);
  }
};

// A child session's event, wrapped into its parent's log.
struct SubagentEvent {
  static constexpr EventKind kKind = EventKind::kSubagentEvent;
  SessionId child;
  Epoch child_epoch;
  Seq child_seq;
  std::string child_kind;  // the child's kind name
  std::optional<TurnId> child_turn;
  boost::json::value payload;  // the child's payload as stored
  template <class V>
  void Fields(V& v) {
    v("child", child), v("childEpoch", child_epoch), v("childSeq", child_seq),
        v("childKind", child_kind), v("childTurn", child_turn), v("payload", payload);
  }
};

// The session runs in a git worktree of its own (docs/workspaces.md): made for it at `path` on
// the new `branch`, from `base` (a ref, or for a fork the parent's branch) resolved to
// `baseCommit`, of the repository whose top directory is `repository`.
struct WorkspaceCreated {
  static constexpr EventKind kKind = EventKind::kWorkspaceCreated;
  std::string path;
  std::string branch;
  std::string base;
  std::string base_commit;
  std::string repository;
  template <class V>
  void Fields(V& v) {
    v("path", path), v("branch", branch), v("base", base), v("baseCommit", base_commit),
        v("repository", repository);
  }
};

// The session's worktree at `path` was removed on request; its branch stays.
struct WorkspaceRemoved {
  static constexpr EventKind kKind = EventKind::kWorkspaceRemoved;
  std::string path;
  bool forced = false;  // uncommitted changes were discarded
  template <class V>
  void Fields(V& v) {
    v("path", path), v("forced", forced);
  }
};

// A git action on the session's worktree (docs/workspaces.md, "Git actions"): `action` is
// "commit", "merge", "push", "pr" (a pull request) or "discard"; `outcome` is "committed",
// "merged", "fast-forward", "up-to-date", "pushed", "opened", "discarded", or "conflict" /
// "refused" / "failed" when git or gh would not (a merge's conflicting `files`, a refused push's
// git `message`, gh's `message`). `branch` is the worktree's branch, `commit` the commit made or
// reached, `target` the branch merged into (or a pull request's base) or the remote pushed to,
// `message` the commit message's first line or git's own words, `url` an opened pull request's.
struct WorkspaceAction {
  static constexpr EventKind kKind = EventKind::kWorkspaceAction;
  std::string action;
  std::string outcome;
  std::string branch;
  std::optional<std::string> commit;
  std::optional<std::string> target;
  std::optional<std::string> message;
  std::vector<std::string> files;
  std::optional<std::string> url;  // "pr" opened: the pull request's address
  template <class V>
  void Fields(V& v) {
    v("action", action), v("outcome", outcome), v("branch", branch), v("commit", commit),
        v("target", target), v("message", message), v("files", files), v("url", url);
  }
};

// A trigger or a schedule started this prompt (docs/automation.md): `source` "trigger" with the
// sender's delivery id as `key` (and its event name, X-GitHub-Event, as `event`), or "schedule"
// with the tick. Recorded once per key (its producer stamp), before the prompt it starts, whose
// client message id is made of the same key. `missingFields`: the prompt template's
// placeholders the payload lacked (rendered empty).
struct AutomationFired {
  static constexpr EventKind kKind = EventKind::kAutomationFired;
  std::string source;
  std::string id;
  std::string key;
  std::optional<std::string> event;
  std::vector<std::string> missing_fields;
  template <class V>
  void Fields(V& v) {
    v("source", source), v("id", id), v("key", key), v("event", event),
        v("missingFields", missing_fields);
  }
};

using Payload =
    std::variant<SessionCreated, SessionForked, SessionRewound, SessionTitled, SessionImported,
                 TurnStarted, TurnCompleted, TurnCanceled, TurnFailed, UserMessage, PromptQueued,
                 PromptCanceled, AssistantMessageStart, AssistantMessageDelta, AssistantMessageEnd,
                 Reasoning, ToolCallStart, ToolCallOutput, ToolCallEnd, PermissionRequested,
                 PermissionResolved, Plan, ModeChanged, ModelChanged, ThinkingOptionChanged,
                 CapabilitiesChanged, Usage, ErrorEvent, Notice, ProviderMetadata,
                 AuthorizationRequired, AuthorizationCompleted, SubagentEvent, WorkspaceCreated,
                 WorkspaceRemoved, WorkspaceAction, AutomationFired>;

EventKind KindOf(const Payload& payload);

// Milliseconds since the Unix epoch, as stamped by the log when the event was committed.
using TimestampMs = std::int64_t;

// One decoded event of a session log.
struct Event {
  SessionId session;
  Epoch epoch;
  Seq seq;
  TimestampMs time = 0;
  std::optional<TurnId> turn;  // set when the event belongs to a turn
  Payload payload;

  EventKind kind() const { return KindOf(payload); }
  Cursor cursor() const { return {epoch, seq}; }
};

}  // namespace agentstream
