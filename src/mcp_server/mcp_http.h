// McpHttp: the streamable HTTP transport of agentstream's MCP server (MCP 2025-11-25 section
// "Streamable HTTP"), served by the daemon at /mcp behind its token and Origin checks
// (docs/mcp.md). Transport-free: the daemon's HTTP layer hands it the method, the Mcp-Session-Id
// header, the client's address and the body, and writes the reply it gets back, whenever it
// comes.
//
// POST carries one JSON-RPC message: a request is answered 200 with the JSON-RPC response
// (application/json; a tool call once the tool has run), a notification or a response 202 with
// no body; a body that is not one JSON-RPC 2.0 message is answered 400 with a JSON-RPC error.
// The answer to initialize carries a new Mcp-Session-Id; the client sends it back, and a
// notifications/cancelled under it ends the wait of that session's call with the request id.
// A message without a session id is served alone, as before sessions (nothing to cancel); an
// unknown or expired session id is 404, so the client initializes again. DELETE with a session
// id ends the session and its waits (204). GET is 405 (no server-initiated stream). The tools
// reach the daemon through its own HTTP API at `http.url` with its token, as `agentstream mcp`
// does.
//
// Waiting: an `agent_send` with `wait` holds no thread while it waits. Its daemon calls run on a
// worker, then its wait is a TurnWaiter's (long-polls on one I/O thread), then the last message
// is read on a worker again; the reply is written when the turn ends or the time runs out, so
// the workers stay free for other calls however many waits are open.
//
// Bounds: kMaxSessions sessions (a new one beyond it ends the least recently used), each ended
// after kSessionIdleMs without a message. Waiting calls open at once: kMaxWaitsPerClient per
// client (its Mcp-Session-Id, or its address when it sends none) and kMaxWaits in all; a call
// over a bound is answered at once with JSON-RPC error kServerBusy (-32000), before anything
// is sent to the agent.
//
// Threading: Handle may be called from any thread; `done` runs once, on a worker thread (tools)
// or the calling thread. The destructor ends running waits (their calls are answered
// {timedOut: true}) and joins the workers.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/transport.h"
#include "jsonrpc/json_rpc.h"
#include "mcp_server/mcp_protocol.h"
#include "mcp_server/mcp_tools.h"
#include "mcp_server/turn_waiter.h"

namespace agentstream::mcp_server {

struct McpHttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class McpHttp {
 public:
  McpHttp(const client::TransportOptions& http, std::string version,
          std::size_t worker_threads = 8);
  ~McpHttp();
  McpHttp(const McpHttp&) = delete;
  McpHttp& operator=(const McpHttp&) = delete;

  static constexpr std::size_t kMaxSessions = 1024;
  static constexpr std::int64_t kSessionIdleMs = std::int64_t{60} * 60 * 1000;  // 1 hour
  static constexpr std::size_t kMaxWaitsPerClient = 16;
  static constexpr std::size_t kMaxWaits = 256;

  // `session`: the request's Mcp-Session-Id header, empty when it has none. `client_address`:
  // the peer's address, which stands for the client when there is no session.
  void Handle(const std::string& method, const std::string& session,
              const std::string& client_address, const std::string& body,
              std::function<void(McpHttpReply)> done);

  // Waiting calls open now (any thread).
  std::size_t open_waits() const;

 private:
  // One tools/call from its start to its answer.
  struct Call {
    ToolInvocation invocation;
    std::string session;  // empty: none
    std::string waiter;   // the client it counts against (its bound); empty: it does not wait
    std::function<void(McpHttpReply)> done;
    std::atomic<bool> cancelled{false};
    std::optional<std::uint64_t> wait;  // the TurnWaiter's wait once started; guarded by mu_
  };
  // The calls running in one session, by their JSON-RPC id's Key().
  struct Session {
    std::int64_t last_used_ms = 0;
    std::map<std::string, std::shared_ptr<Call>> running;
  };
  // A new session's id (the least recently used one ended when there are kMaxSessions).
  std::string OpenSession();
  // Marks `id` used; false when it is unknown or expired (then forgotten).
  bool Touch(const std::string& id);
  // Ends a session: its calls' waits end. False when unknown.
  bool EndSession(const std::string& id);
  // Cancels `call`: a call not started yet is answered -32800, a wait ends. Needs mu_.
  void CancelLocked(Call& call);
  // Counts a waiting call against its client's bound and the daemon's, and lists it among its
  // session's running calls. The error line that answers it instead when over a bound.
  std::optional<std::string> Register(const std::shared_ptr<Call>& call,
                                      const std::string& client_address);

  void RunTool(std::shared_ptr<Call> call);
  void StartWait(const std::shared_ptr<Call>& call, PendingSend pending);
  // Answers `call` with `line` (200) and forgets it.
  void Finish(const std::shared_ptr<Call>& call, std::string line);

  std::string version_;
  mutable std::mutex mu_;
  std::map<std::string, Session> sessions_;             // guarded by mu_
  std::map<std::string, std::size_t> waits_by_client_;  // guarded by mu_; no zero entries
  std::size_t waits_ = 0;                               // guarded by mu_
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  ToolEnv env_;
  boost::asio::thread_pool workers_;
  std::unique_ptr<TurnWaiter> waiter_;  // destroyed first: its waits end, then the workers join
};

}  // namespace agentstream::mcp_server
