// The commands a client sends to one agent, as values, and the Forwarder that carries them to the
// daemon that owns the agent when that is another daemon (docs/architecture.md, "Agent
// ownership"). The AgentManager decides where a command runs: the runtime it has, one it starts
// after taking the agent's lease, or the owner, through the Forwarder.
#pragma once

#include <functional>
#include <string>
#include <variant>

#include "runtime/agent_manager.h"

namespace agentstream::runtime {

namespace commands {
struct Send {
  api::SendRequest request;
};
struct CancelQueued {
  std::string client_message_id;
};
struct Interrupt {};
struct ReplyPermission {
  turn::ReplyPermission reply;
};
struct SetMode {
  std::string mode;
};
struct SetModel {
  std::string model;
};
struct SetThinking {
  std::string option;
};
struct Rename {
  std::string title;
};
struct Close {};
struct Rewind {
  Cursor to;
};
}  // namespace commands

// A command for one agent that its owner must run (it touches the runtime or the queue).
using AgentCommand =
    std::variant<commands::Send, commands::CancelQueued, commands::Interrupt,
                 commands::ReplyPermission, commands::SetMode, commands::SetModel,
                 commands::SetThinking, commands::Rename, commands::Close, commands::Rewind>;

// The answer: a send's reply, an agent snapshot (rename, close, rewind), or plain OK.
using AgentAnswer = std::variant<std::monostate, api::SendReply, api::AgentSnapshot>;

// Where another daemon answers: its id and advertised base URL ("http://host:port").
struct Peer {
  std::string daemon_id;
  std::string url;
};

// Carries a command to the daemon that owns the agent. `done` runs once, on any thread, with the
// owner's answer (its errors included, kMisdirected when it does not own the agent after all), and
// `reached` false when the owner could not be asked or did not answer: then whether the command
// ran there is unknown, and the caller may only retry what is idempotent (every AgentCommand is:
// a send carries its client message id, the rest are idempotent or fail the second time).
// Implementations bound their queues and time limits, and are thread-safe.
class Forwarder {
 public:
  using Done = std::function<void(Result<AgentAnswer> answer, bool reached)>;
  virtual ~Forwarder() = default;
  virtual void Forward(const Peer& owner, const SessionId& agent, const AgentCommand& command,
                       Done done) = 0;
};

}  // namespace agentstream::runtime
