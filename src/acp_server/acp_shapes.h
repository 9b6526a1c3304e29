// The Agent Client Protocol messages of `agentstream acp` other than session updates
// (acp_updates.h): reading an input line into a JSON-RPC message or the error that answers it, the
// `initialize` result, prompts as daemon submissions, the stop reason of a turn, and `session/list`
// pages over the daemon's agents. Pure functions: no I/O, thread-safe. docs/acp.md has the
// protocol as this agent speaks it.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/agent_types.h"
#include "core/event.h"
#include "core/status.h"
#include "jsonrpc/json_rpc.h"

namespace agentstream::acp_server {

// The ACP protocol version spoken (schema v1, as @agentclientprotocol/sdk 2.4.0 has it).
inline constexpr int kProtocolVersion = 1;

// The `initialize` result: protocol version 1, loadSession, session list / resume / close,
// prompts with images and embedded context, and agentInfo {name: "agentstream", version}.
boost::json::object InitializeResult(std::string_view version);

// A prompt (an array of ContentBlocks) as a submission: text blocks joined with blank lines,
// embedded text resources as their text, resource links as "[name](uri)", images as attachments.
// kInvalidArgument for anything else (audio, which is not advertised) or an empty prompt.
struct Submission {
  std::string text;
  std::vector<Attachment> attachments;
};
Result<Submission> ReadPrompt(const boost::json::value& prompt);

// How a turn ended, as `session/prompt` answers it.
struct TurnEnd {
  enum class Kind { kCompleted, kCanceled, kFailed };
  Kind kind = Kind::kCompleted;
  std::string stop_reason;    // kCompleted: end_turn, max_tokens, max_turn_requests or refusal
  std::string code, message;  // kFailed
};
// The TurnEnd of a turn.completed / turn.canceled / turn.failed payload; nullopt for others.
std::optional<TurnEnd> TurnEndOf(const Payload& payload);
// The `session/prompt` answer line for request `id`: {stopReason} ("cancelled" when canceled), or
// an internal error naming the failure (data {code, message}).
std::string PromptAnswerLine(const jsonrpc::RpcId& id, const TurnEnd& end);

// The JSON-RPC error code for a daemon error: kNotFound -32002 (resource not found),
// kInvalidArgument -32602 (invalid params), anything else -32603.
int RpcCodeFor(const Status& status);

// A `session/list` page of `agents` (newest first, closed ones left out) in `cwd` (all when
// empty), after the opaque `cursor` a previous page returned (none: from the newest), at most
// `page_size` long: {sessions: [SessionInfo], nextCursor?}. kInvalidArgument for a bad cursor.
Result<boost::json::object> ListPage(std::vector<api::AgentSnapshot> agents, const std::string& cwd,
                                     const std::string& cursor, std::size_t page_size = 100);

// The string member `name` of the params object, or kInvalidArgument naming it.
Result<std::string> StringParam(const boost::json::value& params, std::string_view name);

}  // namespace agentstream::acp_server
