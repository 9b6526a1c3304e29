// libFuzzer target: the JSON-RPC 2.0 reading of ACP agents and codex app-server
// (jsonrpc/json_rpc.h: ParseRpc, one stdout line to a message) and the mapping of the
// `session/update` notifications it yields (AcpUpdateMapper). The input is split at '\n' into
// lines of one agent process. Checked: ParseRpc never throws; what it accepts keeps its kind's
// shape and survives a round trip through the line builders (RequestLine, NotificationLine,
// ResultLine, ErrorLine), which also proves every value it yields writes back as JSON; the mapper's
// events stay balanced (text only inside a started message, a message or tool call ends at most
// once and only after it started). Each line is also read as the editor's input of `agentstream
// acp` (jsonrpc/stdio_channel.h: ReadLine): it yields a message or an error line that is JSON with
// a JSON-RPC error code, never both.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
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

void CheckRoundTrip(const RpcMessage& m) {
  switch (m.kind) {
    case RpcMessage::Kind::kRequest: {
      Check(!m.id.is_null());
      if (!m.id.is_int64()) break;  // the client only sends integer ids
      Result<RpcMessage> again = ParseRpc(RequestLine(m.id.as_int64(), m.method, m.params));
      Check(again.ok() && again->kind == m.kind && fuzz::SameJson(again->id, m.id));
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
        Check(again.ok() && again->kind == m.kind && fuzz::SameJson(again->id, m.id));
        Check(again->error && again->error_code == m.error_code);
      } else {
        Result<RpcMessage> again = ParseRpc(ResultLine(m.id, m.result));
        Check(again.ok() && again->kind == m.kind && fuzz::SameJson(again->id, m.id));
        Check(!again->error && fuzz::SameJson(again->result, m.result));
      }
      break;
    }
  }
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
    acp::Check(!(in.message && !in.error_line.empty()));
    if (!in.error_line.empty()) {
      const boost::json::value error = boost::json::parse(in.error_line);
      const std::int64_t code = error.at("error").at("code").as_int64();
      acp::Check(code == jsonrpc::kParseError || code == jsonrpc::kInvalidRequest);
    }
    agentstream::Result<jsonrpc::RpcMessage> m = jsonrpc::ParseRpc(line);
    if (!m.ok()) {
      acp::Check(m.status().code() == agentstream::ErrorCode::kInvalidArgument);
      continue;
    }
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
