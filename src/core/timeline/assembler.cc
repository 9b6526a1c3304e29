#include "core/timeline/assembler.h"

#include <boost/json.hpp>
#include <type_traits>

#include "core/event_text.h"
#include "core/utf8.h"

namespace agentstream::timeline {

namespace {

ItemBody EmptyBody(ItemKind kind) {
  switch (kind) {
    case ItemKind::kUserMessage:
      return UserMessageBody{};
    case ItemKind::kAssistantMessage:
      return AssistantMessageBody{};
    case ItemKind::kReasoning:
      return ReasoningBody{};
    case ItemKind::kToolCall:
      return ToolCallBody{};
    case ItemKind::kPermission:
      return PermissionBody{};
    case ItemKind::kPlan:
      return PlanBody{};
    case ItemKind::kError:
      return ErrorBody{};
    case ItemKind::kNotice:
      return NoticeBody{};
    case ItemKind::kAuthorization:
      return AuthorizationBody{};
    case ItemKind::kSubagent:
      return SubagentBody{};
    case ItemKind::kUsage:
      return UsageBody{};
  }
  return NoticeBody{};
}

// Appends `text` to a bounded tool output, keeping it within kMaxToolOutputBytes.
void AppendBounded(ToolCallBody& tool, const std::string& text, bool truncated) {
  tool.truncated = tool.truncated || truncated;
  if (tool.output.size() + text.size() <= kMaxToolOutputBytes) {
    tool.output += text;
    return;
  }
  BoundedText cut = BoundUtf8(tool.output + text, kMaxToolOutputBytes);
  tool.output = std::move(cut.text);
  tool.truncated = true;
}

ToolCallState StateOf(ToolCallStatus status) {
  switch (status) {
    case ToolCallStatus::kCompleted:
      return ToolCallState::kCompleted;
    case ToolCallStatus::kFailed:
      return ToolCallState::kFailed;
    case ToolCallStatus::kCanceled:
      return ToolCallState::kCanceled;
  }
  return ToolCallState::kFailed;
}

bool Ended(ToolCallState state) {
  return state == ToolCallState::kCompleted || state == ToolCallState::kFailed ||
         state == ToolCallState::kCanceled;
}

// Folds payload `p` into `body`. Each overload handles the kinds of one item kind.
struct Folder {
  const Event& event;

  void operator()(UserMessageBody& b, const UserMessage& p) {
    b = {p.message_id, p.client_message_id, p.text, p.attachments};
  }
  void operator()(AssistantMessageBody& b, const AssistantMessageStart& p) {
    b.message_id = p.message_id, b.started = true;
    if (p.parent_message_id) b.parent_message_id = p.parent_message_id;
  }
  void operator()(AssistantMessageBody& b, const AssistantMessageDelta& p) {
    b.message_id = p.message_id, b.text += p.text;
  }
  void operator()(AssistantMessageBody& b, const AssistantMessageEnd& p) {
    b.message_id = p.message_id, b.finished = true;
    if (p.stop_reason) b.stop_reason = p.stop_reason;
  }
  void operator()(ReasoningBody& b, const Reasoning& p) {
    b.message_id = p.message_id, b.text += p.text;
  }
  void operator()(ToolCallBody& b, const ToolCallStart& p) {
    b.call_id = p.call_id, b.name = p.name, b.title = p.title, b.input = p.input;
    if (!Ended(b.state)) b.state = ToolCallState::kRunning;  // an end seen first stays final
  }
  void operator()(ToolCallBody& b, const ToolCallOutput& p) {
    b.call_id = p.call_id;
    AppendBounded(b, p.text, p.truncated);
  }
  void operator()(ToolCallBody& b, const ToolCallEnd& p) {
    b.call_id = p.call_id, b.state = StateOf(p.status), b.error = p.error;
    if (p.output) b.output = *p.output, b.truncated = p.truncated;  // the final result wins
  }
  void operator()(PermissionBody& b, const PermissionRequested& p) {
    b.request_id = p.request_id, b.call_id = p.call_id, b.title = p.title;
    b.tool_name = p.tool_name, b.input = p.input, b.options = p.options;
  }
  void operator()(PermissionBody& b, const PermissionResolved& p) {
    b.request_id = p.request_id, b.decision = p.decision, b.option_id = p.option_id;
    b.message = p.message;
  }
  void operator()(AuthorizationBody& b, const AuthorizationRequired& p) {
    b.request_id = p.request_id, b.message = p.message, b.url = p.url;
  }
  void operator()(AuthorizationBody& b, const AuthorizationCompleted& p) {
    b.request_id = p.request_id, b.granted = p.granted;
  }
  void operator()(PlanBody& b, const Plan& p) { b.entries = p.entries; }
  void operator()(ErrorBody& b, const ErrorEvent& p) { b = {p.code, p.message, p.fatal, false}; }
  void operator()(ErrorBody& b, const TurnFailed& p) { b = {p.code, p.message, false, true}; }
  void operator()(NoticeBody& b, const Notice& p) { b = {p.level, p.text}; }
  // A git action on the worktree shows as a notice (docs/workspaces.md, "Git actions").
  void operator()(NoticeBody& b, const WorkspaceAction& p) {
    b = {WorkspaceActionRefused(p) ? NoticeLevel::kWarning : NoticeLevel::kInfo,
         WorkspaceActionText(p)};
  }
  void operator()(NoticeBody& b, const AutomationFired& p) {
    b = {p.missing_fields.empty() ? NoticeLevel::kInfo : NoticeLevel::kWarning,
         AutomationFiredText(p)};
  }
  void operator()(UsageBody& b, const Usage& p) { b = p; }
  void operator()(SubagentBody& b, const SubagentEvent& p) {
    b.child = p.child, b.event_count += 1, b.last_kind = p.child_kind, b.last_turn = p.child_turn;
    if (!p.payload.is_object()) return;
    if (const auto* text = p.payload.as_object().if_contains("text"); text && text->is_string())
      b.last_text = std::string(text->as_string());
  }
  template <class B, class P>
  void operator()(B&, const P&) {}  // a kind that does not belong to this item: ignored
};

}  // namespace

ProjectedItem NewItem(const ItemKey& key, const Event& event) {
  ProjectedItem item;
  item.kind = key.kind;
  item.key = key.key;
  item.turn = event.turn;
  item.seq_start = event.seq;
  item.seq_end = event.seq;
  item.body = EmptyBody(key.kind);
  return item;
}

void FoldIntoItem(ProjectedItem& item, const Event& event) {
  const bool first = item.source_seq_ranges.empty();
  AddToRanges(item.source_seq_ranges, event.seq);
  if (item.seq_end < event.seq) item.seq_end = event.seq;
  item.collapsed = !first || item.collapsed;
  std::visit(Folder{event}, item.body, event.payload);
}

}  // namespace agentstream::timeline
