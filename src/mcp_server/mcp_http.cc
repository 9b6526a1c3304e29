#include "mcp_server/mcp_http.h"

#include <algorithm>
#include <boost/asio/post.hpp>
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

McpHttp::McpHttp(const client::TransportOptions& http, std::string version,
                 std::size_t worker_threads)
    : version_(std::move(version)),
      env_(DaemonToolEnv(http, std::chrono::seconds(5), stopping_)),
      workers_(worker_threads),
      waiter_(std::make_unique<TurnWaiter>(http)) {}

McpHttp::~McpHttp() {
  *stopping_ = true;
  waiter_.reset();  // the open waits end; their calls are answered on the workers
  workers_.join();
}

std::size_t McpHttp::open_waits() const {
  std::lock_guard lock(mu_);
  return waits_;
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
    for (auto& [key, call] : oldest->second.running) CancelLocked(*call);
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
    for (auto& [key, call] : it->second.running) CancelLocked(*call);
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
  for (auto& [key, call] : it->second.running) CancelLocked(*call);
  sessions_.erase(it);
  return true;
}

void McpHttp::CancelLocked(Call& call) {
  call.cancelled = true;
  if (call.wait) waiter_->Cancel(*call.wait);
}

void McpHttp::Handle(const std::string& method, const std::string& session,
                     const std::string& client_address, const std::string& body,
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
    return done(
        Json(400, jsonrpc::ErrorLine(jsonrpc::RpcId(), jsonrpc::kInvalidRequest, "an empty body")));
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
      if (auto call = it->second.running.find(d.cancel->Key()); call != it->second.running.end())
        CancelLocked(*call->second);
    }
  }
  if (!d.tool) return done(McpHttpReply{202, "application/json", {}, ""});
  auto call = std::make_shared<Call>();
  call->invocation = std::move(*d.tool);
  call->session = session;
  call->done = std::move(done);
  if (std::optional<std::string> refused = Register(call, client_address))
    return call->done(Json(200, std::move(*refused)));
  RunTool(std::move(call));
}

std::optional<std::string> McpHttp::Register(const std::shared_ptr<Call>& call,
                                             const std::string& client_address) {
  std::lock_guard lock(mu_);
  const ToolInvocation& tool = call->invocation;
  if (WaitsForTurn(tool.name, tool.arguments)) {
    std::string client =
        call->session.empty() ? "address " + client_address : "session " + call->session;
    auto it = waits_by_client_.find(client);
    const bool client_full = it != waits_by_client_.end() && it->second >= kMaxWaitsPerClient;
    if (client_full || waits_ >= kMaxWaits) {
      const std::size_t limit = client_full ? kMaxWaitsPerClient : kMaxWaits;
      return jsonrpc::ErrorLine(
          tool.id, jsonrpc::kServerBusy,
          "too many waiting calls: " + std::to_string(limit) +
              " agent_send calls with wait are open " +
              (client_full ? "for this client" : "on this daemon") +
              " (the limit); this prompt was not sent. Wait for one to end, or send without "
              "wait and read agent_last_message later",
          boost::json::object{{"limit", limit}});
    }
    ++waits_;
    ++waits_by_client_[client];
    call->waiter = std::move(client);
  }
  if (auto it = sessions_.find(call->session); !call->session.empty() && it != sessions_.end())
    it->second.running[tool.id.Key()] = call;
  return std::nullopt;
}

void McpHttp::RunTool(std::shared_ptr<Call> call) {
  boost::asio::post(workers_, [this, call = std::move(call)] {
    if (call->cancelled) {  // a call cancelled before it started does not run
      return Finish(call, jsonrpc::ErrorLine(call->invocation.id, jsonrpc::kRequestCancelled,
                                             "the request was cancelled"));
    }
    ToolStep step = BeginTool(env_, call->invocation.name, call->invocation.arguments);
    if (!step.wait) return Finish(call, ToolReplyLine(call->invocation.id, step.result));
    StartWait(call, std::move(*step.wait));
  });
}

void McpHttp::StartWait(const std::shared_ptr<Call>& call, PendingSend pending) {
  TurnWaitRequest request = pending.wait;
  auto on_end = [this, call, pending = std::move(pending)](Result<client::TurnEnd> end) mutable {
    // On the waiter's thread: the last message is read on a worker.
    boost::asio::post(workers_, [this, call, pending = std::move(pending),
                                 end = std::move(end)]() mutable {
      Finish(call, ToolReplyLine(call->invocation.id, FinishSend(env_, std::move(pending), end)));
    });
  };
  const std::uint64_t id = waiter_->Start(std::move(request), std::move(on_end));
  std::lock_guard lock(mu_);
  call->wait = id;
  if (call->cancelled) waiter_->Cancel(id);  // cancelled while its prompt was being sent
}

void McpHttp::Finish(const std::shared_ptr<Call>& call, std::string line) {
  {
    std::lock_guard lock(mu_);
    if (auto it = sessions_.find(call->session); !call->session.empty() && it != sessions_.end()) {
      auto& running = it->second.running;
      if (auto c = running.find(call->invocation.id.Key()); c != running.end() && c->second == call)
        running.erase(c);
    }
    if (!call->waiter.empty()) {
      --waits_;
      if (auto w = waits_by_client_.find(call->waiter);
          w != waits_by_client_.end() && --w->second == 0)
        waits_by_client_.erase(w);
    }
    call->wait.reset();
  }
  call->done(Json(200, std::move(line)));
}

}  // namespace agentstream::mcp_server
