#include "providers/codex/codex_rollout.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <utility>

#include "providers/wire_fields.h"

namespace agentstream::providers::codex {

namespace json = boost::json;
using wire::Obj;
using wire::Str;

namespace {

// The text blocks of a message's content (`output_text`, `input_text`, `text`) joined.
std::string ContentText(const json::object& message) {
  std::string text;
  const json::value* content = message.if_contains("content");
  if (content == nullptr || !content->is_array()) return text;
  for (const json::value& block : content->as_array())
    if (block.is_object()) text += Str(block.as_object(), "text");
  return text;
}

// A tool call's input: its arguments as JSON when they are a JSON text, else the text itself.
json::value ToolInput(const json::object& item) {
  const json::value* arguments = item.if_contains("arguments");
  if (arguments == nullptr) arguments = item.if_contains("input");
  if (arguments == nullptr) arguments = item.if_contains("action");
  if (arguments == nullptr) return json::object{};
  if (!arguments->is_string()) return *arguments;
  boost::system::error_code ec;
  json::value parsed = json::parse(arguments->as_string(), ec);
  if (!ec) return parsed;
  return *arguments;
}

// The text of a tool call's output: a string as is, {"output"|"content": string} by that field.
std::string OutputText(const json::object& item) {
  const json::value* output = item.if_contains("output");
  if (output == nullptr) return {};
  if (output->is_string()) return std::string(output->as_string());
  if (output->is_object()) {
    for (const char* key : {"output", "content"})
      if (std::string text = Str(output->as_object(), key); !text.empty()) return text;
  }
  return json::serialize(*output);
}

class Reader {
 public:
  explicit Reader(Rollout& out) : out_(out) {}

  // Reads the line at byte `offset` of the file.
  void Line(const json::object& line, std::uint64_t offset) {
    offset_ = offset;
    const std::size_t before = out_.events.size();
    const std::string type = Str(line, "type");
    const json::object* payload = Obj(line, "payload");
    if (type == "session_meta" && payload != nullptr) {
      if (out_.session_id.empty()) out_.session_id = Str(*payload, "id");
      if (out_.cwd.empty()) out_.cwd = Str(*payload, "cwd");
      return;
    }
    if (payload != nullptr && type == "event_msg") Event(*payload);
    if (payload != nullptr && type == "response_item") Item(*payload);
    if (out_.events.size() > before) return;
    std::string key = type.empty() ? "(no type)" : type.substr(0, 64);
    if (payload != nullptr && (type == "event_msg" || type == "response_item"))
      key += "." + Str(*payload, "type").substr(0, 64);
    ++out_.skipped[key];
  }

 private:
  void Event(const json::object& e) {
    const std::string type = Str(e, "type");
    if (type == "user_message") {
      out_.events.emplace_back(
          turn::ProviderUserEcho{MessageId(NextId("user")), std::nullopt, Str(e, "message")});
    } else if (type == "item_completed") {
      // Newer codex (0.171) records the person's prompt as a completed UserMessage item.
      const json::object* item = Obj(e, "item");
      if (item != nullptr && Str(*item, "type") == "UserMessage") {
        out_.events.emplace_back(
            turn::ProviderUserEcho{MessageId(NextId("user")), std::nullopt, ContentText(*item)});
      }
    } else if (type == "task_complete") {
      out_.events.emplace_back(turn::ProviderTurnResult{});
    } else if (type == "turn_aborted") {
      turn::ProviderTurnResult result;
      result.outcome = turn::TurnOutcome::kCanceled;
      result.message = Str(e, "reason");
      out_.events.emplace_back(std::move(result));
    }
  }

  void Item(const json::object& item) {
    const std::string type = Str(item, "type");
    if (type == "message") {
      if (Str(item, "role") != "assistant") return;
      const MessageId id(NextId("msg"));
      out_.events.emplace_back(turn::ProviderMessageStart{id, std::nullopt, std::nullopt});
      if (std::string text = ContentText(item); !text.empty())
        out_.events.emplace_back(
            turn::ProviderTextDelta{id, std::move(text), std::nullopt, std::nullopt});
      out_.events.emplace_back(turn::ProviderMessageStop{id, std::string("end_turn")});
    } else if (type == "reasoning") {
      std::string text;
      if (const json::value* summary = item.if_contains("summary"); summary && summary->is_array())
        for (const json::value& part : summary->as_array())
          if (part.is_object()) text += Str(part.as_object(), "text");
      if (!text.empty())
        out_.events.emplace_back(turn::ProviderReasoningDelta{MessageId(NextId("reasoning")),
                                                              std::move(text), std::nullopt});
    } else if (type == "function_call" || type == "custom_tool_call" ||
               type == "local_shell_call") {
      std::string call = Str(item, "call_id");
      if (call.empty()) call = NextId("call");
      std::string name = Str(item, "name");
      if (name.empty()) name = type;
      out_.events.emplace_back(turn::ProviderToolStart{ToolCallId(call), std::move(name),
                                                       std::nullopt, ToolInput(item), std::nullopt,
                                                       std::nullopt});
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      const std::string call = Str(item, "call_id");
      if (call.empty()) return;
      out_.events.emplace_back(turn::ProviderToolEnd{ToolCallId(call), ToolCallStatus::kCompleted,
                                                     OutputText(item), std::nullopt});
    }
  }

  // Ids for what the file names none of: of the line's offset, so the same on every read.
  std::string NextId(std::string_view kind) const {
    return "rollout_" + std::string(kind) + "_" + std::to_string(offset_);
  }

  Rollout& out_;
  std::uint64_t offset_ = 0;
};

}  // namespace

Rollout ParseRollout(std::string_view text, std::uint64_t offset) {
  Rollout out;
  Reader reader(out);
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    const std::uint64_t at = offset;
    const std::size_t taken = nl == std::string_view::npos ? text.size() : nl + 1;
    text.remove_prefix(taken);
    offset += taken;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++out.lines;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      ++out.malformed;
      continue;
    }
    wire::NullNonFinite(v);
    reader.Line(v.as_object(), at);
  }
  return out;
}

}  // namespace agentstream::providers::codex
