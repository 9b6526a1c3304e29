// WaitForTurn: follows an agent's log until the turn a prompt started ends, and says how it ended.
// Shared by `agentstream send --wait` and the MCP server's `agent_send` with `wait`.
//
// Threading: blocks the calling thread (an EventFollower over `http`).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "client/event_follower.h"
#include "client/transport.h"
#include "core/event_codec.h"
#include "core/status.h"

namespace agentstream::client {

// How the turn a prompt started ended. `outcome` is empty when the wait was stopped first.
struct TurnEnd {
  std::string turn;
  std::string outcome;  // completed | canceled | failed
  std::string reason;   // stop reason, cancel reason, or "code: message"
  Cursor at;
};

// Decides, event by event in log order, whether the turn a prompt started has ended: the turn
// whose turn.started carries the prompt's client message id `client_id`, or `turn` when the send
// reply named it; it ends with its turn.completed, turn.canceled or turn.failed. Pure; not
// thread-safe. Shared by WaitForTurn and the MCP server's asynchronous wait (mcp_server/).
class TurnEndMatcher {
 public:
  TurnEndMatcher(std::string client_id, std::optional<std::string> turn)
      : client_id_(std::move(client_id)), turn_(std::move(turn)) {}
  // True when `record` ends the turn; end() then says how.
  bool Ended(const EventRecord& record);
  // How it ended: the outcome is empty until Ended returned true; `turn` is set once known.
  TurnEnd end() const;

 private:
  std::string client_id_;
  std::optional<std::string> turn_;
  TurnEnd end_;
};

// Follows `agent`'s log from `from` ("-1" or "EPOCH:SEQ") until the turn started by the prompt
// `client_id` (or `turn`, when the send reply named it) ends. Disconnects and daemon restarts are
// retried (`on_retry` is told each); once `stop` (when given) is true it returns a TurnEnd with
// an empty outcome within about 100 ms. Errors: what EventFollower::Run cannot retry (no such
// agent, a refused token).
Result<TurnEnd> WaitForTurn(Transport& http, const std::string& agent, const std::string& from,
                            const std::string& client_id, std::optional<std::string> turn,
                            const EventFollower::RetryCallback& on_retry,
                            const std::atomic<bool>* stop = nullptr);

}  // namespace agentstream::client
