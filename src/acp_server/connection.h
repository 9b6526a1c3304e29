// Connection (internal to src/acp_server/): one ACP client's JSON-RPC dispatch, on the loop
// thread. It answers the methods (initialize, session/new, load, resume, list, close, prompt,
// set_mode, set_config_option; session/cancel and $/cancel_request), keeps the sessions attached
// to this client, numbers the requests it sends the client (session/request_permission) and
// routes their answers, and runs the daemon's HTTP calls on worker threads.
//
// Threading: every method runs on the loop thread unless it says otherwise.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "acp_server/acp_server.h"
#include "client/daemon_api.h"
#include "core/ids.h"
#include "jsonrpc/json_rpc.h"
#include "jsonrpc/stdio_channel.h"

namespace agentstream::acp_server {

class AttachedSession;

class Connection {
 public:
  using DaemonCall = std::function<Result<boost::json::value>(client::DaemonApi& api)>;
  using DaemonDone = std::function<void(Result<boost::json::value> reply)>;

  Connection(boost::asio::io_context& io, const AcpServerOptions& options);
  ~Connection();

  // Serves until the input ends (0) or the channel fails (1).
  int Run();

  // Writes one line to the client.
  void Send(std::string line);
  // Runs `call` on a worker thread and `done` with its result on the loop thread. With `retry`,
  // a kUnavailable result is retried (back-off 0.2 s doubling to 2 s) for options.retry_for.
  void CallDaemon(DaemonCall call, DaemonDone done, bool retry);
  // Sends the client `session/request_permission` for `request` of `session`; returns the
  // JSON-RPC id it used.
  std::int64_t AskPermission(const std::shared_ptr<AttachedSession>& session,
                             const RequestId& request, boost::json::object params);
  // Withdraws an unanswered ask (answered elsewhere first): `$/cancel_request` to the client; its
  // late answer will be ignored.
  void WithdrawAsk(std::int64_t id);

  boost::asio::io_context& io() { return io_; }
  const AcpServerOptions& options() const { return options_; }
  // Bytes waiting for the client (any thread): session followers pause above half the bound.
  std::size_t queued_bytes() const { return channel_.queued_bytes(); }

 private:
  void OnLine(const process::Frame& frame);
  void OnClosed(const Status& why);
  void OnRequest(const jsonrpc::RpcMessage& m);
  void OnNotification(const jsonrpc::RpcMessage& m);
  void OnResponse(const jsonrpc::RpcMessage& m);

  void NewSession(const jsonrpc::RpcId& id, const boost::json::value& params);
  void AttachSession(const jsonrpc::RpcId& id, const boost::json::value& params, bool replay);
  void ListSessions(const jsonrpc::RpcId& id, const boost::json::value& params);
  void CloseSession(const jsonrpc::RpcId& id, const boost::json::value& params);
  void Prompt(const jsonrpc::RpcId& id, const boost::json::value& params);
  void SetValue(const jsonrpc::RpcId& id, const boost::json::value& params, bool config);

  // The attached session params.sessionId names, or nullptr after answering -32002 / -32602.
  std::shared_ptr<AttachedSession> Find(const jsonrpc::RpcId& id, const boost::json::value& params);
  void Reply(const jsonrpc::RpcId& id, const boost::json::value& result);
  void ReplyError(const jsonrpc::RpcId& id, int code, const std::string& message);
  void ReplyStatus(const jsonrpc::RpcId& id, const Status& status);
  void Shutdown(int code);
  void DrainThenStop(std::chrono::steady_clock::time_point deadline);

  boost::asio::io_context& io_;
  AcpServerOptions options_;
  jsonrpc::StdioChannel channel_;
  boost::asio::steady_timer drain_timer_;
  boost::asio::thread_pool workers_;
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  bool initialized_ = false;
  int exit_code_ = 0;
  std::map<std::string, std::shared_ptr<AttachedSession>> sessions_;  // by session (agent) id
  struct Ask {
    std::weak_ptr<AttachedSession> session;
    RequestId request;
    bool withdrawn = false;
  };
  std::map<std::int64_t, Ask> asks_;  // requests sent to the client, by JSON-RPC id
  std::int64_t next_ask_id_ = 1;
};

}  // namespace agentstream::acp_server
