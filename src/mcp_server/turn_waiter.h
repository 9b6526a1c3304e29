// TurnWaiter: waits for the ends of agents' turns without a thread per wait, for the MCP server's
// `agent_send` with `wait` (docs/mcp.md). Each wait is a chain of long-poll reads of the agent's
// session log on the daemon (GET /v1/agents/{id}/events?offset=OFFSET&live=long-poll,
// docs/protocol.md), each answered when the session commits or after the daemon's long-poll
// timeout, all on the one I/O thread the waiter owns, with a timer per wait for its deadline.
// Which event ends the turn is client::TurnEndMatcher's rule (as `agentstream send --wait`).
//
// Errors (WaitForTurn's): a 4xx reply other than 408 and 429 (no such agent, a refused token) or
// events that do not decode end the wait with that error; a connection failure or another reply
// is retried with back-off (0.2 s doubling to 5 s) until the deadline. A URL other than http://
// fails every wait with kInvalidArgument.
//
// Threading: Start, Cancel and open() may be called from any thread. `done` runs once per wait,
// on the waiter's thread, and must not block (post longer work elsewhere). The destructor ends
// every open wait (its `done` runs with an empty outcome) and joins the thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "client/transport.h"
#include "client/turn_wait.h"
#include "core/status.h"

namespace agentstream::mcp_server {

// One wait: for the turn the prompt `client_id` started (or `turn`, when the send reply named
// it), reading `agent`'s log from `from` ("-1" or an offset), for at most `timeout`.
struct TurnWaitRequest {
  std::string agent;
  std::string from = "-1";
  std::string client_id;
  std::optional<std::string> turn;
  std::chrono::milliseconds timeout{0};
};

class TurnWaiter {
 public:
  // A TurnEnd whose outcome is empty when the time ran out or the wait was cancelled.
  using Done = std::function<void(Result<client::TurnEnd> end)>;

  // The daemon at `http.url` with `http.token`; its connect_timeout and stream_idle_timeout
  // bound each read.
  explicit TurnWaiter(const client::TransportOptions& http);
  ~TurnWaiter();
  TurnWaiter(const TurnWaiter&) = delete;
  TurnWaiter& operator=(const TurnWaiter&) = delete;

  // Starts a wait and returns its id (for Cancel).
  std::uint64_t Start(TurnWaitRequest request, Done done);
  // Ends wait `id` as if its time ran out. No effect on a wait that ended.
  void Cancel(std::uint64_t id);
  // Waits started whose `done` has not run yet.
  std::size_t open() const;

 private:
  struct Impl;
  class Wait;
  std::shared_ptr<Impl> impl_;
};

}  // namespace agentstream::mcp_server
