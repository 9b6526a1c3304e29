#include "mcp_server/mcp_http.h"

#include <boost/asio/post.hpp>

#include "jsonrpc/stdio_channel.h"
#include "mcp_server/mcp_protocol.h"

namespace agentstream::mcp_server {

namespace {

McpHttpReply Json(int status, std::string body) {
  McpHttpReply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

McpHttp::McpHttp(const cli::client::HttpClientOptions& http, std::string version,
                 std::size_t worker_threads)
    : version_(std::move(version)),
      env_(DaemonToolEnv(http, std::chrono::seconds(5), stopping_)),
      workers_(worker_threads) {}

McpHttp::~McpHttp() {
  *stopping_ = true;
  workers_.join();
}

void McpHttp::Handle(const std::string& method, const std::string& body,
                     std::function<void(McpHttpReply)> done) {
  if (method != "POST") {
    McpHttpReply r =
        Json(405, R"({"error":{"code":"method_not_allowed",)"
                  R"("message":"POST a JSON-RPC message; this server has no stream"}})");
    r.headers.emplace_back("Allow", "POST");
    return done(std::move(r));
  }
  // The same reader as stdio: a parse error, an invalid request (the daemon bounds the body).
  jsonrpc::Inbound in = jsonrpc::ReadLine(process::Frame{process::Frame::Kind::kLine, body});
  if (!in.error_line.empty()) return done(Json(400, std::move(in.error_line)));
  if (!in.message)
    return done(Json(400, jsonrpc::ErrorLine(nullptr, jsonrpc::kInvalidRequest, "an empty body")));
  McpProtocol protocol(version_, /*stateless=*/true);
  Dispatch d = protocol.OnMessage(*in.message);
  if (d.reply_line) return done(Json(200, std::move(*d.reply_line)));
  if (!d.tool) return done(McpHttpReply{202, "application/json", {}, ""});  // (cancel: stateless)
  boost::asio::post(workers_, [this, call = std::move(*d.tool), done = std::move(done)] {
    done(Json(200, ToolReplyLine(call.id, CallTool(env_, call.name, call.arguments))));
  });
}

}  // namespace agentstream::mcp_server
