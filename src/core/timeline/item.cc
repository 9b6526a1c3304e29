#include "core/timeline/item.h"

#include <boost/json.hpp>
#include <type_traits>

#include "core/json_fields.h"

namespace agentstream::json_fields {
template <>
struct EnumNames<timeline::ToolCallState> {
  static constexpr std::pair<timeline::ToolCallState, std::string_view> kNames[] = {
      {timeline::ToolCallState::kPending, "pending"},
      {timeline::ToolCallState::kRunning, "running"},
      {timeline::ToolCallState::kCompleted, "completed"},
      {timeline::ToolCallState::kFailed, "failed"},
      {timeline::ToolCallState::kCanceled, "canceled"}};
};
}  // namespace agentstream::json_fields

namespace agentstream::timeline {

namespace json = boost::json;

std::string_view ItemKindName(ItemKind kind) {
  switch (kind) {
    case ItemKind::kUserMessage:
      return "user_message";
    case ItemKind::kAssistantMessage:
      return "assistant_message";
    case ItemKind::kReasoning:
      return "reasoning";
    case ItemKind::kToolCall:
      return "tool_call";
    case ItemKind::kPermission:
      return "permission";
    case ItemKind::kPlan:
      return "plan";
    case ItemKind::kError:
      return "error";
    case ItemKind::kNotice:
      return "notice";
    case ItemKind::kAuthorization:
      return "authorization";
    case ItemKind::kSubagent:
      return "subagent";
    case ItemKind::kUsage:
      return "usage";
  }
  return "unknown";
}

std::string_view ToolCallStateName(ToolCallState state) {
  for (const auto& [value, name] : json_fields::EnumNames<ToolCallState>::kNames)
    if (value == state) return name;
  return "unknown";
}

std::optional<ItemKey> ItemKeyOf(const Event& event) {
  const std::string unique = "#" + std::to_string(event.seq.value());
  return std::visit(
      [&](const auto& p) -> std::optional<ItemKey> {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, UserMessage>) {
          return ItemKey{ItemKind::kUserMessage, unique};
        } else if constexpr (std::is_same_v<T, AssistantMessageStart> ||
                             std::is_same_v<T, AssistantMessageDelta> ||
                             std::is_same_v<T, AssistantMessageEnd>) {
          return ItemKey{ItemKind::kAssistantMessage, "a:" + p.message_id.str()};
        } else if constexpr (std::is_same_v<T, Reasoning>) {
          return ItemKey{ItemKind::kReasoning, "r:" + p.message_id.str()};
        } else if constexpr (std::is_same_v<T, ToolCallStart> ||
                             std::is_same_v<T, ToolCallOutput> || std::is_same_v<T, ToolCallEnd>) {
          return ItemKey{ItemKind::kToolCall, "t:" + p.call_id.str()};
        } else if constexpr (std::is_same_v<T, PermissionRequested> ||
                             std::is_same_v<T, PermissionResolved>) {
          return ItemKey{ItemKind::kPermission, "p:" + p.request_id.str()};
        } else if constexpr (std::is_same_v<T, AuthorizationRequired> ||
                             std::is_same_v<T, AuthorizationCompleted>) {
          return ItemKey{ItemKind::kAuthorization, "z:" + p.request_id.str()};
        } else if constexpr (std::is_same_v<T, Plan>) {
          return ItemKey{ItemKind::kPlan,
                         "plan:" + (event.turn ? event.turn->str() : std::string())};
        } else if constexpr (std::is_same_v<T, ErrorEvent> || std::is_same_v<T, TurnFailed>) {
          return ItemKey{ItemKind::kError, unique};
        } else if constexpr (std::is_same_v<T, Notice> || std::is_same_v<T, WorkspaceAction> ||
                             std::is_same_v<T, AutomationFired>) {
          return ItemKey{ItemKind::kNotice, unique};
        } else if constexpr (std::is_same_v<T, Usage>) {
          return ItemKey{ItemKind::kUsage, unique};
        } else if constexpr (std::is_same_v<T, SubagentEvent>) {
          return ItemKey{ItemKind::kSubagent, "s:" + p.child.str()};
        } else {
          return std::nullopt;
        }
      },
      event.payload);
}

void AddToRanges(std::vector<SeqRange>& ranges, Seq seq) {
  if (!ranges.empty() && ranges.back().last.value() + 1 >= seq.value()) {
    if (ranges.back().last < seq) ranges.back().last = seq;
    return;
  }
  ranges.push_back({seq, seq});
}

json::object ItemToJson(const ProjectedItem& item) {
  json::object out =
      std::visit([](const auto& body) { return json_fields::ToJson(body); }, item.body).as_object();
  out["kind"] = ItemKindName(item.kind);
  out["key"] = item.key;
  if (item.turn) out["turn"] = item.turn->str();
  out["seqStart"] = item.seq_start.value();
  out["seqEnd"] = item.seq_end.value();
  json::array ranges;
  for (const SeqRange& r : item.source_seq_ranges)
    ranges.push_back(json::array{r.first.value(), r.last.value()});
  out["sourceSeqRanges"] = std::move(ranges);
  out["collapsed"] = item.collapsed;
  return out;
}

}  // namespace agentstream::timeline
