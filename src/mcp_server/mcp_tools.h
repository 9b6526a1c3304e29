// The tools of agentstream's MCP server (docs/mcp.md): the daemon's agents as MCP tools, so that
// a coding agent can list agents, create one, prompt it (and wait for the turn's end), read its
// timeline and last answer, interrupt it and answer its permission requests, and have a child's
// turn ends delivered into its own session (`notifyParent`, a durable parent-session consumer).
//
// Each tool checks its arguments before it calls the daemon: a bad argument is a tool error and
// no daemon call is made, so nothing stored changes. The daemon is reached through ToolEnv, so
// the same tools serve stdio (`agentstream mcp`) and tests with a fake daemon.
//
// A call runs whole (CallTool: it blocks for its daemon calls and, for `agent_send` with `wait`,
// until the turn ends or times out) or in two steps around its wait (BeginTool, a wait of the
// caller's, FinishSend), so that a waiting call holds no thread (TurnWaiter, /mcp).
//
// Threading: the functions are thread-safe as far as ToolEnv's callables are.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "client/transport.h"
#include "client/turn_wait.h"
#include "core/status.h"
#include "mcp_server/turn_waiter.h"

namespace agentstream::mcp_server {

// Bounds of the tools' arguments.
inline constexpr int kMaxTimelineItems = 100;    // agent_timeline `limit`
inline constexpr int kDefaultWaitSeconds = 120;  // agent_send `timeoutSeconds`
inline constexpr int kMaxWaitSeconds = 3600;
inline constexpr std::size_t kMaxTimelineBytes = 256 << 10;  // one page's serialized items
inline constexpr int kLastMessagePages = 20;  // pages read back for agent_last_message

// How tools reach the daemon.
struct ToolEnv {
  // One /v1 JSON call (client::DaemonApi::Call's contract).
  std::function<Result<boost::json::value>(std::string_view method, const std::string& target,
                                           const boost::json::value* body)>
      call;
  // Waits up to `timeout` for the end of the turn prompt `client_id` started (WaitForTurn's
  // contract; an empty outcome when the time ran out, or once `cancel`, when given, is true).
  std::function<Result<client::TurnEnd>(
      const std::string& agent, const std::string& from, const std::string& client_id,
      std::optional<std::string> turn, std::chrono::milliseconds timeout,
      const std::atomic<bool>* cancel)>
      wait;
  // The agent this server serves: the daemon gives each agent's CLI its id as
  // AGENTSTREAM_AGENT_ID, which `agentstream mcp` inherits. Empty when unknown (/mcp over HTTP,
  // or a client the daemon did not start); `notifyParent: true` needs it.
  std::string calling_agent;
};

// The daemon's HTTP API as a ToolEnv: each call on a fresh connection (client::Transport),
// retried with back-off for `retry_for` while the daemon is unreachable (a restart), except an
// interrupt (not idempotent); a wait follows the log live (client::WaitForTurn). Once
// `stopping` is set, retries stop and waits end (with no outcome) within about 100 ms.
ToolEnv DaemonToolEnv(const client::TransportOptions& http, std::chrono::milliseconds retry_for,
                      const std::shared_ptr<std::atomic<bool>>& stopping);

// The `tools/list` result: {tools: [{name, title, description, inputSchema}]}.
boost::json::object ToolsList();

// Whether `name` is one of the tools.
bool IsTool(std::string_view name);

// Whether tool `name` with `arguments` waits for a turn (`agent_send` with `wait: true`), before
// its arguments are checked: the calls that count against the bounds on open waits.
bool WaitsForTurn(std::string_view name, const boost::json::value& arguments);

// An `agent_send` whose prompt was sent and whose turn is to be waited for.
struct PendingSend {
  TurnWaitRequest wait;
  boost::json::object reply;  // the result so far (the daemon's answer to the prompt)
};

// The first step of a call: every daemon call up to its wait. `wait` set: the call waits for
// that turn, then FinishSend completes it (`result` is unused); else `result` is the call's
// result (CallTool's contract).
struct ToolStep {
  Result<boost::json::object> result = boost::json::object{};
  std::optional<PendingSend> wait;
};
ToolStep BeginTool(const ToolEnv& env, std::string_view name, const boost::json::value& arguments);

// The result of a waiting `agent_send` once its wait ended with `end` (TurnWaiter::Done's): how
// the turn ended and the agent's last message (one more daemon read), or {timedOut: true} when
// it had not ended; the wait's error as is.
Result<boost::json::object> FinishSend(const ToolEnv& env, PendingSend pending,
                                       const Result<client::TurnEnd>& end);

// Runs tool `name` with `arguments` (an object, or null for none) and returns its structured
// result. Errors: kInvalidArgument for a bad argument (no daemon call made), else the daemon's
// (kNotFound for an unknown agent, kUnavailable when it cannot be reached, ...). Once `cancel`
// (when given; any thread) is true, a running wait ends as if its time ran out.
Result<boost::json::object> CallTool(const ToolEnv& env, std::string_view name,
                                     const boost::json::value& arguments,
                                     const std::atomic<bool>* cancel = nullptr);

// The consumer spec (POST /v1/consumers body) that delivers each turn end of `child` (from now
// on) into `parent`'s session, once; its id is derived from both, so that asking again is
// idempotent. kInvalidArgument when the ids make no valid consumer id.
Result<boost::json::object> NotifySpec(const std::string& child, const std::string& parent);

}  // namespace agentstream::mcp_server
