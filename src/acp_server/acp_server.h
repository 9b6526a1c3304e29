// `agentstream acp`: an Agent Client Protocol agent on stdin/stdout that fronts a running daemon,
// so that editors (Zed, JetBrains, Neovim) list, load and resume the daemon's agents with their
// whole history replayed from the session log (docs/acp.md).
//
// Each ACP session is one daemon agent (the session id is the agent id). The daemon stays the
// only owner of every agent: prompts, interrupts, permission answers, modes and models go through
// its HTTP API (so every other client sees them), and what the editor is shown is read from the
// agent's log with the resumable follower of the command-line client, from the last cursor after
// any disconnect: no gap, no duplicate. Nothing the editor does by mistake (malformed input, an
// unknown method, an oversize line, not reading its pipe) changes anything stored; the editor
// going away leaves its agents and their turns running on the daemon.
//
// Threading: RunAcpServer owns the calling thread for the connection's life (an Asio loop that
// holds all protocol state), plus a few worker threads for the daemon's HTTP calls and one
// follower thread per attached session.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "client/transport.h"
#include "jsonrpc/stdio_channel.h"

namespace agentstream::acp_server {

struct AcpServerOptions {
  client::TransportOptions http;  // the daemon's --url and --token, time limits
  // The agent config of `session/new`: the provider, and the model and mode (unset: the
  // provider's own).
  std::string provider = "claude";
  std::optional<std::string> model, mode;
  std::string version = "0.0.0";   // agentInfo.version
  int in_fd = 0, out_fd = 1;       // the editor's pipes
  jsonrpc::ChannelLimits limits;   // input line, output queue, stalled client
  std::size_t worker_threads = 4;  // concurrent daemon calls
  // Idempotent daemon calls (creating an agent with its clientRequestId, a prompt with its
  // clientMessageId, a permission answer) are retried this long while the daemon is unreachable
  // (a restart); others fail at once.
  std::chrono::milliseconds retry_for{60000};
};

// Serves one ACP client until its input ends (returns 0) or the connection fails: a read or
// write error, or a client that does not read its output (returns 1; the reason goes to stderr).
int RunAcpServer(const AcpServerOptions& options);

}  // namespace agentstream::acp_server
