#include "mcp_server/mcp_http.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json/serialize.hpp>
#include <iterator>

#include "jsonrpc/stdio_channel.h"
#include "mcp_server/mcp_protocol.h"
#include "system/random_id.h"
#include "system/wall_clock.h"

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

std::string McpHttp::OpenSession() {
  const std::int64_t now = system::WallClockMs();
  std::lock_guard lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = now - it->second.last_used_ms > kSessionIdleMs ? sessions_.erase(it) : std::next(it);
  }
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.last_used_ms < b.second.last_used_ms; });
    for (auto& [key, flag] : oldest->second.running) *flag = true;
    sessions_.erase(oldest);
  }
  std::string id = system::RandomId("mcps", 32);
  sessions_[id].last_used_ms = now;
  return id;
}

bool McpHttp::Touch(const std::string& id) {
  const std::int64_t now = system::WallClockMs();
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  if (now - it->second.last_used_ms > kSessionIdleMs) {
    for (auto& [key, flag] : it->second.running) *flag = true;
    sessions_.erase(it);
    return false;
  }
  it->second.last_used_ms = now;
  return true;
}

bool McpHttp::EndSession(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  for (auto& [key, flag] : it->second.running) *flag = true;
  sessions_.erase(it);
  return true;
}

void McpHttp::Handle(const std::string& method, const std::string& session, const std::string& body,
                     std::function<void(McpHttpReply)> done) {
  if (method == "DELETE") {
    if (session.empty())
      return done(Json(400, R"({"error":{"code":"invalid_argument",)"
                            R"("message":"DELETE needs the Mcp-Session-Id header"}})"));
    if (!EndSession(session))
      return done(Json(404, R"({"error":{"code":"not_found","message":"no such MCP session"}})"));
    return done(McpHttpReply{204, "application/json", {}, ""});
  }
  if (method != "POST") {
    McpHttpReply r =
        Json(405, R"({"error":{"code":"method_not_allowed",)"
                  R"("message":"POST a JSON-RPC message; this server has no stream"}})");
    r.headers.emplace_back("Allow", "POST, DELETE");
    return done(std::move(r));
  }
  // The same reader as stdio: a parse error, an invalid request (the daemon bounds the body).
  jsonrpc::Inbound in = jsonrpc::ReadLine(process::Frame{process::Frame::Kind::kLine, body});
  if (!in.error_line.empty()) return done(Json(400, std::move(in.error_line)));
  if (!in.message)
    return done(Json(400, jsonrpc::ErrorLine(nullptr, jsonrpc::kInvalidRequest, "an empty body")));
  if (!session.empty() && !Touch(session)) {
    return done(Json(404, jsonrpc::ErrorLine(in.message->id, jsonrpc::kInvalidRequest,
                                             "no such MCP session (it ended or expired): "
                                             "initialize again")));
  }
  McpProtocol protocol(version_, /*stateless=*/true);
  Dispatch d = protocol.OnMessage(*in.message);
  if (d.reply_line) {
    McpHttpReply r = Json(200, std::move(*d.reply_line));
    const bool initialize = in.message->kind == jsonrpc::RpcMessage::Kind::kRequest &&
                            in.message->method == "initialize";
    if (initialize) r.headers.emplace_back("Mcp-Session-Id", OpenSession());
    return done(std::move(r));
  }
  if (d.cancel) {
    std::lock_guard lock(mu_);
    if (auto it = sessions_.find(session); it != sessions_.end()) {
      if (auto call = it->second.running.find(boost::json::serialize(*d.cancel));
          call != it->second.running.end())
        *call->second = true;
    }
  }
  if (!d.tool) return done(McpHttpReply{202, "application/json", {}, ""});
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  const std::string key = boost::json::serialize(d.tool->id);
  if (!session.empty()) {
    std::lock_guard lock(mu_);
    if (auto it = sessions_.find(session); it != sessions_.end()) it->second.running[key] = cancel;
  }
  boost::asio::post(workers_, [this, call = std::move(*d.tool), done = std::move(done), cancel, key,
                               session] {
    // A call cancelled before it started does not run.
    McpHttpReply r = Json(
        200,
        *cancel
            ? jsonrpc::ErrorLine(call.id, jsonrpc::kRequestCancelled, "the request was cancelled")
            : ToolReplyLine(call.id, CallTool(env_, call.name, call.arguments, cancel.get())));
    if (!session.empty()) {
      std::lock_guard lock(mu_);
      if (auto it = sessions_.find(session); it != sessions_.end()) {
        if (auto c = it->second.running.find(key);
            c != it->second.running.end() && c->second == cancel)
          it->second.running.erase(c);
      }
    }
    done(std::move(r));
  });
}

}  // namespace agentstream::mcp_server
