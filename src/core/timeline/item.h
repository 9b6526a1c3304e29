// Projected items: what a timeline shows (docs/timeline.md, "Projection"). One item per user
// message, assistant message (its deltas merged), reasoning block (merged), tool call (its whole
// lifecycle collapsed at its first position), permission request (with its resolution), plan (per
// turn, latest version), error, notice, authorization request and sub-agent (a summary of a child
// session's events).
//
// Bodies list their fields once in Fields(), as payloads do (core/event.h).
//
// Each item carries the positions of the log events it was built from: seq_start (the first,
// which fixes the item's place), seq_end (the last: the cursor a fork from this item uses), the
// ranges of source seqs, and `collapsed` (built from more than one event).
#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/ids.h"

namespace agentstream::timeline {

enum class ItemKind {
  kUserMessage,
  kAssistantMessage,
  kReasoning,
  kToolCall,
  kPermission,
  kPlan,
  kError,
  kNotice,
  kAuthorization,
  kSubagent,
  kUsage,  // one per usage event: a turn's tokens and cost as the provider reported them
};
std::string_view ItemKindName(ItemKind kind);

struct UserMessageBody {
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

struct AssistantMessageBody {
  MessageId message_id;
  std::optional<MessageId> parent_message_id;
  std::string text;
  bool started = false;  // the start event was seen (a delta may arrive first: placeholder)
  bool finished = false;
  std::optional<std::string> stop_reason;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("parentMessageId", parent_message_id), v("text", text),
        v("started", started), v("finished", finished), v("stopReason", stop_reason);
  }
};

struct ReasoningBody {
  MessageId message_id;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("messageId", message_id), v("text", text);
  }
};

enum class ToolCallState { kPending, kRunning, kCompleted, kFailed, kCanceled };
std::string_view ToolCallStateName(ToolCallState state);

struct ToolCallBody {
  ToolCallId call_id;
  std::string name;
  std::optional<std::string> title;
  boost::json::value input;
  std::string output;  // bounded to kMaxToolOutputBytes
  bool truncated = false;
  ToolCallState state = ToolCallState::kPending;  // kPending: output seen before the start
  std::optional<std::string> error;
  template <class V>
  void Fields(V& v) {
    v("callId", call_id), v("name", name), v("title", title), v("input", input),
        v("output", output), v("truncated", truncated), v("state", state), v("error", error);
  }
};

struct PermissionBody {
  RequestId request_id;
  std::optional<ToolCallId> call_id;
  std::string title;
  std::optional<std::string> tool_name;
  boost::json::value input;
  std::vector<PermissionOption> options;
  std::optional<PermissionDecision> decision;  // absent while pending
  std::optional<std::string> option_id;
  std::optional<std::string> message;
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("callId", call_id), v("title", title), v("toolName", tool_name),
        v("input", input), v("options", options), v("decision", decision), v("optionId", option_id),
        v("message", message);
  }
};

struct PlanBody {
  std::vector<PlanEntry> entries;
  template <class V>
  void Fields(V& v) {
    v("entries", entries);
  }
};

struct ErrorBody {
  std::string code;
  std::string message;
  bool fatal = false;
  bool turn_failed = false;  // projected from turn.failed rather than an error event
  template <class V>
  void Fields(V& v) {
    v("code", code), v("message", message), v("fatal", fatal), v("turnFailed", turn_failed);
  }
};

struct NoticeBody {
  NoticeLevel level = NoticeLevel::kInfo;
  std::string text;
  template <class V>
  void Fields(V& v) {
    v("level", level), v("text", text);
  }
};

struct AuthorizationBody {
  RequestId request_id;
  std::string message;
  std::optional<std::string> url;
  std::optional<bool> granted;  // absent while pending
  template <class V>
  void Fields(V& v) {
    v("requestId", request_id), v("message", message), v("url", url), v("granted", granted);
  }
};

struct SubagentBody {
  SessionId child;
  std::int64_t event_count = 0;
  std::string last_kind;
  std::optional<TurnId> last_turn;
  std::string last_text;  // text of the child's latest assistant delta or user message, if any
  template <class V>
  void Fields(V& v) {
    v("child", child), v("eventCount", event_count), v("lastKind", last_kind),
        v("lastTurn", last_turn), v("lastText", last_text);
  }
};

// A usage item holds its event as it is.
using UsageBody = Usage;

using ItemBody =
    std::variant<UserMessageBody, AssistantMessageBody, ReasoningBody, ToolCallBody, PermissionBody,
                 PlanBody, ErrorBody, NoticeBody, AuthorizationBody, SubagentBody, UsageBody>;

// An inclusive range of source seqs.
struct SeqRange {
  Seq first;
  Seq last;
  friend bool operator==(const SeqRange&, const SeqRange&) = default;
};

struct ProjectedItem {
  ItemKind kind = ItemKind::kNotice;
  std::string key;             // stable identity within an epoch (see ItemKeyOf)
  std::optional<TurnId> turn;  // the turn of the first source event
  Seq seq_start;
  Seq seq_end;
  std::vector<SeqRange> source_seq_ranges;  // ascending, disjoint, non-adjacent
  bool collapsed = false;                   // more than one source event
  ItemBody body;
};

// Which item an event belongs to: its kind and key. Events of the same key merge into one item:
// "a:<message id>" assistant, "r:<message id>" reasoning, "t:<call id>" tool call,
// "p:<request id>" permission, "z:<request id>" authorization, "plan:<turn id>" plan,
// "s:<child session>" sub-agent; user messages, errors, failed turns and notices are one item per
// event ("#<seq>"). nullopt for kinds that are not projected (turn boundaries, usage, mode and
// model changes, provider metadata, session events).
struct ItemKey {
  ItemKind kind;
  std::string key;
};
std::optional<ItemKey> ItemKeyOf(const Event& event);

// Appends `seq` to ascending ranges, extending the last range when adjacent.
void AddToRanges(std::vector<SeqRange>& ranges, Seq seq);

// The wire form of an item: {"kind","key","turn"?,"seqStart","seqEnd","sourceSeqRanges":[[a,b]],
// "collapsed", ...body fields}.
boost::json::object ItemToJson(const ProjectedItem& item);

}  // namespace agentstream::timeline
