// Server: the daemon's HTTP and WebSocket listener (Beast over Asio, on its own threads).
// Routes every endpoint of docs/protocol.md: the /v1 JSON API (ApiRouter), the session event
// log as a Durable Stream (catch-up, long-poll and SSE reads), /ws (WsApp), /healthz, /metrics.
// Access control (security.h) runs before routing.
//
// Lifetime: the AgentManager and the EventLog must outlive the server. Stop the server, then
// stop the manager's thread, then destroy the server: AgentManager callbacks post into the
// server's executor and must not run after it is gone.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "consumers/consumer_service.h"
#include "core/status.h"
#include "runtime/agent_manager.h"
#include "server/forwarded.h"
#include "server/http_types.h"
#include "server/hub.h"
#include "server/inbox.h"
#include "server/metrics.h"
#include "server/notify_routes.h"
#include "server/schedule_routes.h"
#include "server/security.h"
#include "server/trigger_routes.h"
#include "server/workspace_routes.h"
#include "server/ws_app.h"

namespace agentstream::devices {
class DeviceService;  // devices/device_service.h
}  // namespace agentstream::devices
#include "streams/stream_store.h"
#include "streams/subscriptions.h"

namespace agentstream::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7600;  // 0 picks a free port (see Server::port())
  // Token and origin allow-list. An empty allow-list means this server's own origins
  // (SameHostOrigins of the bound port).
  SecurityOptions security;
  int threads = 2;  // I/O threads
  // Threads that run the /v1 API's requests (pages, searches, commands: whatever reads or writes
  // the store and may wait on it), so that a slow one holds up no connection of an I/O thread.
  // The Durable Streams requests, live reads and WebSocket messages run on the I/O threads.
  int request_threads = 2;
  std::size_t max_connections = 1024;  // further connections are closed at once
  // Connections of one client address waiting for a request or reading one (address_limiter.h);
  // a further connection of that address is closed at once, and an answer on a keep-alive
  // connection of an address at the bound says `Connection: close`.
  std::size_t max_waiting_per_address = 256;
  std::size_t max_header_bytes = std::size_t{16} * 1024;  // request line and headers
  std::size_t max_body_bytes = std::size_t{1} << 20;      // request body (1 MiB)
  std::chrono::seconds idle_timeout{120};                 // an idle keep-alive connection closes
  // The whole request head (line and headers) must arrive within this: on a new connection from
  // its accept, on a keep-alive connection from the first byte of the request (the wait for that
  // byte is idle_timeout). Else the connection is closed.
  std::chrono::milliseconds request_head_timeout{10000};
  std::chrono::milliseconds long_poll_timeout{30000};  // then 204 No Content
  std::chrono::milliseconds sse_keepalive{15000};      // SSE comment line while idle
  std::size_t max_queue_bytes = std::size_t{4} << 20;  // SSE send queue; WebSocket in `ws`
  BatchLimits batch;                                   // one read / frame of events
  std::string web_root;  // the built web page served at `/` (static_files.h); "" for none
  // The absolute base URL `Location` headers start with ("http://10.0.0.11:7601"); "" for
  // http://HOST:PORT of the bound address (127.0.0.1 for a wildcard HOST), or, for a request from
  // a trusted proxy, the origin it forwarded (its scheme and allowed Host). Never a direct
  // request's Host header.
  std::string public_url;
  // The TCP peers whose X-Forwarded-Proto, -For and -Host headers are honoured (forwarded.h;
  // `serve --trusted-proxy`, docs/operations.md "Behind a reverse proxy"); empty: none.
  TrustedProxies trusted_proxies;
  // Generic Durable Streams under /v1/stream/ (streams/stream_store.h); null: not served. Not
  // owned; outlives the server.
  streams::StreamStore* streams = nullptr;
  streams::SubscriptionManager* stream_subscriptions = nullptr;  // /v1/stream/__ds/; not owned
  // Durable consumers (/v1/consumers) and the per-session inbox; null: those endpoints answer
  // 404. Not owned; outlive the server.
  consumers::ConsumerService* consumers = nullptr;
  Inbox* inbox = nullptr;
  // Agents' git worktrees and diffs (workspace_routes.h); null: a create asking for a worktree
  // is refused. Not owned; outlives the server.
  WorkspaceRoutes* workspaces = nullptr;
  // A device's notification settings and the VAPID key (notify_routes.h); null: those endpoints
  // answer 404. Not owned; outlives the server.
  NotifyRoutes* notify_routes = nullptr;
  // POST /v1/triggers/{id} (trigger_routes.h); null: it answers 404. Not owned; outlives the
  // server.
  TriggerRoutes* triggers = nullptr;
  // /v1/schedules (schedule_routes.h); null: those endpoints answer 404. Not owned; outlives the
  // server.
  ScheduleRoutes* schedules = nullptr;
  WsLimits ws;
  // Paired devices (docs/remote.md, "Pairing a phone"): a device token is accepted besides the
  // owner's token, /v1/pairings and /v1/devices are served, and a revoked device's connections
  // are closed. Null: none of it. Not owned; outlives the server.
  devices::DeviceService* devices = nullptr;
  // The base URL of pairing links (`serve --public-url`); "": the request's own origin.
  std::string pairing_public_url;
  // Requests to /mcp (any method), after the Host, Origin and token checks every request passes:
  // the MCP server's streamable HTTP transport (mcp_server/mcp_http.h), set by the composition
  // root; `reply` takes the response once, from any thread. Null: /mcp answers 404. Must stay
  // callable until Stop() returned.
  std::function<void(const HttpRequest& request, std::function<void(HttpResponse)> reply)> mcp;
  // GET /v1/catalog's body (api_router.h); null: that endpoint answers 404.
  CatalogSource catalog;
  // TLS (docs/operations.md, "TLS"): with both set, every connection on the port is TLS 1.2 or
  // later with the PEM certificate chain and key in these files (both or neither), and every
  // response carries Strict-Transport-Security. The files are read again when they change
  // (checked every tls_reload_interval, and on ReloadTls); new connections use the new ones.
  std::string tls_cert_file;
  std::string tls_key_file;
  // A TLS handshake not done within this closes the connection.
  std::chrono::milliseconds tls_handshake_timeout{10000};
  std::chrono::milliseconds tls_reload_interval{2000};
};

// Checks the TLS options before a start: OK when both files are given and load (or neither is
// given); kInvalidArgument with a message naming the option or the file and the reason otherwise.
Status CheckTlsOptions(const std::string& cert_file, const std::string& key_file);

class Server {
 public:
  Server(runtime::AgentManager& agents, EventLog& log, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the I/O threads. kInvalidArgument for a non-loopback host without
  // a token, a bad address, or TLS options CheckTlsOptions refuses; kUnavailable when the address
  // cannot be bound.
  Status Start();
  // Reads the TLS certificate and key again now (SIGHUP), whether or not they changed; a failure
  // keeps the current ones (logged). Without TLS, does nothing. Thread-safe, after Start.
  void ReloadTls();
  // "https" when serving TLS, else "http".
  const char* scheme() const;
  // The bound port (after Start).
  std::uint16_t port() const;
  // Stops accepting, closes every connection and joins the I/O threads. Idempotent.
  void Stop();

  Metrics& metrics();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::server
