// McpHttp: the streamable HTTP transport of agentstream's MCP server (MCP 2025-11-25 section
// "Streamable HTTP"), served by the daemon at /mcp behind its token and Origin checks
// (docs/mcp.md). Transport-free: the daemon's HTTP layer hands it the method, the Mcp-Session-Id
// header and the body, and writes the reply it gets back.
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
// Bounds: kMaxSessions sessions (a new one beyond it ends the least recently used), each ended
// after kSessionIdleMs without a message.
//
// Threading: Handle may be called from any thread; `done` runs once, on a worker thread (tools)
// or the calling thread. The destructor ends running waits and joins the workers.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cli/client/http_client.h"
#include "mcp_server/mcp_tools.h"

namespace agentstream::mcp_server {

struct McpHttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class McpHttp {
 public:
  McpHttp(const cli::client::HttpClientOptions& http, std::string version,
          std::size_t worker_threads = 8);
  ~McpHttp();
  McpHttp(const McpHttp&) = delete;
  McpHttp& operator=(const McpHttp&) = delete;

  static constexpr std::size_t kMaxSessions = 1024;
  static constexpr std::int64_t kSessionIdleMs = std::int64_t{60} * 60 * 1000;  // 1 hour

  // `session`: the request's Mcp-Session-Id header, empty when it has none.
  void Handle(const std::string& method, const std::string& session, const std::string& body,
              std::function<void(McpHttpReply)> done);

 private:
  // The calls running in one session, by their serialized JSON-RPC id, with the flag that
  // cancels each.
  struct Session {
    std::int64_t last_used_ms = 0;
    std::map<std::string, std::shared_ptr<std::atomic<bool>>> running;
  };
  // A new session's id (the least recently used one ended when there are kMaxSessions).
  std::string OpenSession();
  // Marks `id` used; false when it is unknown or expired (then forgotten).
  bool Touch(const std::string& id);
  // Ends a session: its calls' waits end. False when unknown.
  bool EndSession(const std::string& id);

  std::string version_;
  std::mutex mu_;
  std::map<std::string, Session> sessions_;  // guarded by mu_
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  ToolEnv env_;
  boost::asio::thread_pool workers_;
};

}  // namespace agentstream::mcp_server
