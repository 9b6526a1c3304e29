#include "providers/codex/codex_history.h"

#include <string>

#include "providers/wire_fields.h"

namespace agentstream::providers::codex {

namespace json = boost::json;
using wire::Str;

namespace {

// The text of a list of strings (reasoning summary / content) or of text blocks.
std::string JoinedText(const json::object& item, std::string_view key) {
  std::string text;
  const json::value* list = item.if_contains(key);
  if (!list || !list->is_array()) return text;
  for (const json::value& part : list->as_array()) {
    if (part.is_string()) text += std::string(part.as_string());
    if (part.is_object()) text += Str(part.as_object(), "text");
  }
  return text;
}

}  // namespace

turn::ProviderToolEnd ToolEndOf(const json::object& item) {
  const std::string status = Str(item, "status");
  std::optional<std::string> output;
  if (std::string out = Str(item, "aggregatedOutput"); !out.empty()) output = std::move(out);
  if (status.empty() || status == "completed")
    return {ToolCallId(Str(item, "id")), ToolCallStatus::kCompleted, output, std::nullopt};
  if (status == "inProgress")
    return {ToolCallId(Str(item, "id")), ToolCallStatus::kCanceled, output, std::nullopt};
  return {ToolCallId(Str(item, "id")), ToolCallStatus::kFailed, output, status};
}

void AppendItemHistory(const json::object& item, std::vector<turn::ProviderEvent>& out) {
  const std::string type = Str(item, "type");
  const std::string id = Str(item, "id");
  if (id.empty()) return;
  if (type == "userMessage") {
    out.emplace_back(
        turn::ProviderUserEcho{MessageId(id), std::nullopt, JoinedText(item, "content")});
    return;
  }
  if (type == "agentMessage") {
    out.emplace_back(turn::ProviderMessageStart{MessageId(id), std::nullopt, std::nullopt});
    if (std::string text = Str(item, "text"); !text.empty())
      out.emplace_back(
          turn::ProviderTextDelta{MessageId(id), std::move(text), std::nullopt, std::nullopt});
    out.emplace_back(turn::ProviderMessageStop{MessageId(id), std::string("end_turn")});
    return;
  }
  if (type == "reasoning") {
    std::string text = JoinedText(item, "summary");
    if (text.empty()) text = JoinedText(item, "content");
    if (!text.empty())
      out.emplace_back(turn::ProviderReasoningDelta{MessageId(id), std::move(text), std::nullopt});
    return;
  }
  std::optional<std::string> title;
  if (std::string command = Str(item, "command"); !command.empty()) title = std::move(command);
  out.emplace_back(
      turn::ProviderToolStart{ToolCallId(id), type, title, item, std::nullopt, std::nullopt});
  out.emplace_back(ToolEndOf(item));
}

void AppendTurnHistory(const json::object& turn, std::vector<turn::ProviderEvent>& out) {
  const json::value* items = turn.if_contains("items");
  if (!items || !items->is_array()) return;
  for (const json::value& item : items->as_array())
    if (item.is_object()) AppendItemHistory(item.as_object(), out);
}

}  // namespace agentstream::providers::codex
