// `agentstream serve`: the daemon's composition root. Opens the session log, runs the agent
// manager on its own event-loop thread, recovers sessions left running, serves HTTP and
// WebSocket (src/server) until SIGINT or SIGTERM, then stops in order: server, agents, log.
#pragma once

#include <string>
#include <vector>

namespace agentstream::cli {

struct ServeOptions {
  std::string store_url;                   // as OpenEventLog takes it
  std::string listen = "127.0.0.1:7600";   // HOST:PORT ([::1]:PORT for IPv6)
  std::string token;                       // required for a non-loopback HOST
  std::vector<std::string> allow_origins;  // browser origins; default: this server's own
};

// Runs until a stop signal; the process exit code (0 after a clean stop, 1 when the log or the
// listener cannot be opened, 2 for a malformed --listen).
int RunServe(const ServeOptions& options);

}  // namespace agentstream::cli
