// libFuzzer target: the JSON-RPC 2.0 reading of ACP agents and codex app-server
// (jsonrpc/json_rpc.h: ParseRpc, one stdout line to a message) and the mapping of the
// `session/update` notifications it yields (AcpUpdateMapper). The input is split at '\n' into
// lines of one agent process. Checked: ParseRpc never throws; what it accepts keeps its kind's
// shape and survives a round trip through the line builders (RequestLine, NotificationLine,
// ResultLine, ErrorLine, LineWithId), which also proves every value it yields writes back as JSON;
// an id is a string, an integer or null, is a slice of the line as received, and comes back
// byte-identical in every line written with it; the mapper's events stay balanced (text only
// inside a started message, a message or tool call ends at most once and only after it started).
// Each line is also read as the input of `agentstream acp` and `agentstream mcp`
// (jsonrpc/stdio_channel.h: ReadLine): it yields a message or an error line, never both; the error
// line is JSON with -32700 or -32600, whose id is null or the line's own id text, and whose
// message names no library or source file.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "json_same.h"
#include "jsonrpc/json_rpc.h"
#include "jsonrpc/stdio_channel.h"
#include "providers/acp/acp_protocol.h"

namespace agentstream::providers::acp {
namespace {

namespace json = boost::json;
using jsonrpc::ErrorLine;
using jsonrpc::NotificationLine;
using jsonrpc::ParseRpc;
using jsonrpc::RequestLine;
using jsonrpc::ResultLine;
using jsonrpc::RpcMessage;

using fuzzing::Check;

// `id` is one the reader accepted from `line`: a string, an integer or null (also when the line
// had no id), its text a slice of the line unless null, and every line written with it carries
// that text and reads back with it.
void CheckId(const jsonrpc::RpcId& id, std::string_view line) {
  Check(id.is_null() || id.is_string() || id.is_integer());
  Check(id.is_null() || line.find(id.json()) != std::string_view::npos);
  Check(jsonrpc::RpcId::FromJson(id.json()).has_value());
  for (const std::string& echo :
       {ResultLine(id, json::object{}), ErrorLine(id, jsonrpc::kInternalError, "x"),
        jsonrpc::LineWithId(id, json::object{{"result", 1}})}) {
    Check(echo.find("\"id\":" + id.json() + ",") != std::string::npos);
    Result<RpcMessage> again = ParseRpc(echo);
    Check(again.ok() && again->id.json() == id.json() && again->id == id);
  }
}

void CheckRoundTrip(const RpcMessage& m) {
  switch (m.kind) {
    case RpcMessage::Kind::kRequest: {
      Result<RpcMessage> answer = ParseRpc(ResultLine(m.id, json::object{}));
      Check(answer.ok() && answer->kind == RpcMessage::Kind::kResponse);
      const std::optional<std::int64_t> id = m.id.int64();
      if (!id) break;  // the client only sends integer ids
      Result<RpcMessage> again = ParseRpc(RequestLine(*id, m.method, m.params));
      Check(again.ok() && again->kind == m.kind && again->id.json() == m.id.json());
      Check(again->method == m.method && fuzz::SameJson(again->params, m.params));
      break;
    }
    case RpcMessage::Kind::kNotification: {
      Check(m.id.is_null());
      Result<RpcMessage> again = ParseRpc(NotificationLine(m.method, m.params));
      Check(again.ok() && again->kind == m.kind && again->method == m.method);
      Check(fuzz::SameJson(again->params, m.params));
      break;
    }
    case RpcMessage::Kind::kResponse: {
      Check(m.method.empty() && m.params.is_null());
      if (m.error) {
        Check(m.result.is_null());
        const int code = static_cast<int>(m.error_code);
        if (code != m.error_code) break;
        Result<RpcMessage> again = ParseRpc(ErrorLine(m.id, code, "x"));
        Check(again.ok() && again->kind == m.kind && again->id.json() == m.id.json());
        Check(again->error && again->error_code == m.error_code);
      } else {
        Result<RpcMessage> again = ParseRpc(ResultLine(m.id, m.result));
        Check(again.ok() && again->kind == m.kind && again->id.json() == m.id.json());
        Check(!again->error && fuzz::SameJson(again->result, m.result));
      }
      break;
    }
  }
}

// A server's reading of `line` (ReadLine): a message or an error line, never both; a message's
// id as CheckId; an error's id written as null or as the line's own id text, as received.
void CheckServerRead(const jsonrpc::Inbound& in, std::string_view line) {
  Check(!(in.message && !in.error_line.empty()));
  if (in.message) CheckId(in.message->id, line);
  if (in.error_line.empty()) return;
  const json::value error = json::parse(in.error_line);
  const std::int64_t code = error.at("error").at("code").as_int64();
  Check(code == jsonrpc::kParseError || code == jsonrpc::kInvalidRequest);
  const std::string_view message = error.at("error").at("message").as_string();
  for (std::string_view leak : {"boost", ".hpp", ".ipp", "/usr/"})
    Check(message.find(leak) == std::string_view::npos);
  if (code == jsonrpc::kParseError) Check(error.at("id").is_null());
  const std::string_view written(in.error_line);
  const std::size_t at = written.find("\"id\":") + 5;
  const std::string_view raw = written.substr(at, written.find(",\"error\":", at) - at);
  Check(raw == "null" || line.find(raw) != std::string_view::npos);
}

// Message and tool-call lifecycles as seen in the mapper's output.
struct Balance {
  std::set<std::string> open_messages, ended_messages, open_tools, ended_tools;

  void Apply(const turn::ProviderEvent& event) {
    if (const auto* s = std::get_if<turn::ProviderMessageStart>(&event)) {
      Check(!ended_messages.count(s->message_id.str()));
      Check(open_messages.insert(s->message_id.str()).second);
    } else if (const auto* d = std::get_if<turn::ProviderTextDelta>(&event)) {
      Check(open_messages.count(d->message_id.str()) == 1 && !d->text.empty());
    } else if (const auto* e = std::get_if<turn::ProviderMessageStop>(&event)) {
      Check(open_messages.erase(e->message_id.str()) == 1);
      ended_messages.insert(e->message_id.str());
    } else if (const auto* t = std::get_if<turn::ProviderToolStart>(&event)) {
      Check(!t->call_id.empty() && !t->name.empty());
      Check(open_tools.insert(t->call_id.str()).second);
    } else if (const auto* t = std::get_if<turn::ProviderToolEnd>(&event)) {
      Check(open_tools.erase(t->call_id.str()) == 1);
      Check(ended_tools.insert(t->call_id.str()).second);
    }
  }
  void Apply(const std::vector<turn::ProviderEvent>& events) {
    for (const turn::ProviderEvent& e : events) Apply(e);
  }
  // After the mapper forgot a turn's tool calls (CloseTools), their ids may be reused.
  void ForgetTools() {
    Check(open_tools.empty());
    ended_tools.clear();
  }
};

}  // namespace
}  // namespace agentstream::providers::acp

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace acp = agentstream::providers::acp;
  namespace jsonrpc = agentstream::jsonrpc;
  using agentstream::ToolCallStatus;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  acp::AcpUpdateMapper mapper("fz");
  acp::Balance balance;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const agentstream::jsonrpc::Inbound in = agentstream::jsonrpc::ReadLine(
        {agentstream::process::Frame::Kind::kLine, std::string(line), 0});
    acp::CheckServerRead(in, line);
    agentstream::Result<jsonrpc::RpcMessage> m = jsonrpc::ParseRpc(line);
    if (!m.ok()) {
      acp::Check(m.status().code() == agentstream::ErrorCode::kInvalidArgument);
      continue;
    }
    acp::CheckId(m->id, line);
    acp::CheckRoundTrip(*m);
    if (m->kind == jsonrpc::RpcMessage::Kind::kNotification && m->method == "session/update") {
      balance.Apply(mapper.Map(m->params));
    } else if (m->kind == jsonrpc::RpcMessage::Kind::kRequest &&
               m->method == "session/request_permission" && m->params.is_object()) {
      // The agent asks before a tool runs: announced, and denied here (what the provider does
      // when the permission is refused).
      const boost::json::value* call = m->params.as_object().if_contains("toolCall");
      if (call && call->is_object()) {
        balance.Apply(mapper.AnnounceToolCall(call->as_object()));
        const boost::json::value* id = call->as_object().if_contains("toolCallId");
        if (id && id->is_string())
          balance.Apply(
              mapper.EndTool(std::string(id->as_string()), ToolCallStatus::kFailed, "denied"));
      }
    } else if (m->kind == jsonrpc::RpcMessage::Kind::kResponse) {  // the end of a prompt
      balance.Apply(mapper.CloseMessage("end_turn"));
      balance.Apply(mapper.CloseTools(ToolCallStatus::kCanceled));
      acp::Check(balance.open_messages.empty());
      balance.ForgetTools();
    }
  }
  return 0;
}
