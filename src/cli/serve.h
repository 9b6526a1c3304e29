// `agentstream serve`: the daemon's composition root. Opens the session log, runs the agent
// manager on its own event-loop thread, recovers sessions left running, serves HTTP and
// WebSocket (src/server) until SIGINT or SIGTERM, then stops in order: server, agents, log.
#pragma once

#include <string>
#include <vector>

namespace agentstream::cli {

struct ServeOptions {
  std::string store_url;                  // as OpenEventLog takes it
  std::string listen = "127.0.0.1:7600";  // HOST:PORT ([::1]:PORT for IPv6)
  std::string token;                      // required for a non-loopback HOST
  // TLS on the listen port (docs/operations.md, "TLS"): PEM certificate chain and key, both or
  // neither; read again when they change and on SIGHUP.
  std::string tls_cert;
  std::string tls_key;
  std::vector<std::string> allow_origins;  // browser origins; default: this server's own
  // Host header names allowed besides localhost, the loopback literals and the listen address
  // (a load balancer's name; server::SecurityOptions::allowed_hosts).
  std::vector<std::string> allow_hosts;
  // Reverse proxies (CIDRs or addresses; server::TrustedProxies) whose X-Forwarded-Proto, -For
  // and -Host headers name a request's scheme, client and Host (docs/operations.md, "Behind a
  // reverse proxy"); a malformed entry stops serve with exit 2.
  std::vector<std::string> trusted_proxies;
  // The base URL of pairing links (docs/remote.md, "Pairing a phone"): what a phone opens to
  // reach this daemon ("https://box.tailnet.ts.net"); "": the pairing request's own origin.
  std::string public_url;
  // The built web page (web/dist) served at `/`; "" picks `web/` beside the binary, else the
  // source tree's web/dist found above the binary (server::DefaultWebRoot).
  std::string web_root;
  int scripted_chunk_ms = 15;  // gap between the scripted agent's streamed chunks
  // Generic Durable Streams' database (/v1/stream/); "" keeps them in memory only.
  std::string streams_db;
  int long_poll_ms = 30000;  // a long-poll answers 204 after this; an idle SSE gets a control event
  int io_threads = 2;        // the HTTP server's I/O threads
  int request_threads = 2;   // the threads that run the /v1 API's requests
  // Agents with a running runtime (runtime::AgentManagerOptions::max_live_agents): a further start
  // stops the one idle the longest.
  int max_live_agents = 256;
  // The key every session's inbox token derives from (inbox.h); "" makes a new key per run.
  std::string inbox_key_path;
  // The daemon's VAPID key for Web Push (docs/notifications.md), made like the inbox key; shared
  // through the store on PostgreSQL. "" makes a new key per run.
  std::string vapid_key_path;
  // Push endpoints and ntfy servers over plain http:// are accepted (tests, private networks).
  bool push_allow_http = false;
  // Providers: "NAME=PROGRAM ARG..." adds the ACP agent "acp:NAME" (argv split on spaces);
  // "PRESET=PROGRAM" entries replace a preset's program (gemini, opencode, claude); the claude
  // and codex programs (paths or PATH names).
  std::vector<std::string> acp_agents;
  std::vector<std::string> acp_programs;
  std::vector<std::string> acp_catalogs;  // ACP registry-format files merged into the catalog
  // "Name <email>": the author and committer of the commits of git actions (docs/workspaces.md);
  // empty: the repository's own user.name and user.email, else agentstream's.
  std::string git_author;
  // A JSON file of triggers, POST /v1/triggers/{id} (docs/automation.md); empty: none.
  std::string triggers_file;
  // The shortest time between two ticks a new schedule may have (docs/automation.md): "1m",
  // "30s".
  std::string schedule_floor = "1m";
  std::string claude_program = "claude";
  std::string gh_program = "gh";  // the GitHub CLI of pull requests (docs/workspaces.md)
  std::string codex_program = "codex";
  std::string opencode_program = "opencode";  // the `opencode` provider (opencode serve)
  // Several daemons on one store (docs/architecture.md, "Agent ownership"). The data directory
  // holds this daemon's id and lock ("" for the memory store: a fresh id); `daemon_id` replaces
  // the stored id; `advertise` is the base URL other daemons forward commands to ("": this
  // server's own http://HOST:PORT, unless HOST is a wildcard address).
  std::string data_dir;
  std::string daemon_id;
  std::string advertise;
  int owner_ttl_ms = 10000;   // an ownership lease lasts this long without renewal
  int owner_renew_ms = 3000;  // and is renewed this often
  // Database connections one search runs on at once (store/search_index.h); 0: the machine's
  // hardware threads, at most 4.
  int search_slices = 0;
  // PostgreSQL: writer connections committing side by side (store/postgres/postgres_log.h).
  int store_writers = 2;
  // The daemon's log lines on stderr (log/log.h, docs/operations.md "Logs").
  std::string log_level = "info";   // trace | debug | info | warn | error | off
  std::string log_format = "text";  // text | json
};

// Runs until a stop signal (SIGINT, SIGTERM; SIGHUP reloads the TLS certificate); the process
// exit code (0 after a clean stop, 1 when the log or the listener cannot be opened, 2 for a
// malformed --listen or --trusted-proxy, or TLS options that are incomplete or whose files do not
// load).
int RunServe(const ServeOptions& options);

}  // namespace agentstream::cli
