// McpHttp: the streamable HTTP transport of agentstream's MCP server (MCP 2025-11-25 section
// "Streamable HTTP", stateless: no Mcp-Session-Id), served by the daemon at /mcp behind its token
// and Origin checks (docs/mcp.md). Transport-free: the daemon's HTTP layer hands it the method,
// and the body, and writes the reply it gets back.
//
// POST carries one JSON-RPC message: a request is answered 200 with the JSON-RPC response
// (application/json; a tool call once the tool has run), a notification or a response 202 with
// no body; a body that is not one JSON-RPC 2.0 message is answered 400 with a JSON-RPC error.
// GET and DELETE are 405 (no server-initiated stream, no session to end). The tools reach the
// daemon through its own HTTP API at `http.url` with its token, as `agentstream mcp` does.
//
// Threading: Handle may be called from any thread; `done` runs once, on a worker thread (tools)
// or the calling thread. The destructor ends running waits and joins the workers.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
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

  void Handle(const std::string& method, const std::string& body,
              std::function<void(McpHttpReply)> done);

 private:
  std::string version_;
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  ToolEnv env_;
  boost::asio::thread_pool workers_;
};

}  // namespace agentstream::mcp_server
