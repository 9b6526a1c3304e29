#include "mcp_server/mcp_server.h"

#include <fmt/core.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <memory>
#include <thread>

#include "jsonrpc/stdio_channel.h"
#include "mcp_server/mcp_protocol.h"
#include "mcp_server/mcp_tools.h"
#include "process/child_process.h"

namespace agentstream::mcp_server {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

class Server {
 public:
  Server(asio::io_context& io, const McpServerOptions& options)
      : io_(io),
        options_(options),
        channel_(io, options.in_fd, options.out_fd, options.limits),
        drain_timer_(io),
        workers_(options.worker_threads),
        protocol_(options.version),
        env_(DaemonToolEnv(options_.http, options_.retry_for, stopping_)) {
    env_.calling_agent = options_.calling_agent;
  }

  ~Server() {
    *stopping_ = true;
    workers_.join();
  }

  int Run() {
    channel_.Start([this](const process::Frame& frame) { OnLine(frame); },
                   [this](const Status& why) { OnClosed(why); });
    io_.run();
    return exit_code_;
  }

 private:
  void OnLine(const process::Frame& frame) {
    jsonrpc::Inbound in = jsonrpc::ReadLine(frame);  // JSON-RPC 2.0, bounded lines
    if (!in.error_line.empty()) return channel_.Write(std::move(in.error_line));
    if (!in.message) return;
    Dispatch d = protocol_.OnMessage(*in.message);
    if (d.reply_line) channel_.Write(std::move(*d.reply_line));
    if (d.tool) RunTool(std::move(*d.tool));
    if (d.cancel) {
      auto it = running_.find(d.cancel->Key());
      if (it != running_.end()) *it->second = true;
    }
  }

  // Runs the call on a worker. A call the client cancelled (notifications/cancelled) is not
  // answered, as MCP wants, and its wait ends.
  void RunTool(ToolInvocation call) {
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    const std::string key = call.id.Key();
    running_[key] = cancel;  // a repeated id replaces the older call's entry
    asio::post(workers_, [this, call = std::move(call), cancel, key, stopping = stopping_] {
      std::string line;  // a call cancelled before it started does nothing
      if (!*cancel && !*stopping)
        line = ToolReplyLine(call.id, CallTool(env_, call.name, call.arguments, cancel.get()));
      if (*stopping) return;
      asio::post(io_, [this, line = std::move(line), cancel, key]() mutable {
        if (auto it = running_.find(key); it != running_.end() && it->second == cancel)
          running_.erase(it);
        if (!*cancel) channel_.Write(std::move(line));
      });
    });
  }

  void OnClosed(const Status& why) {
    if (!why.ok()) fmt::print(stderr, "agentstream mcp: disconnecting: {}\n", why.message());
    exit_code_ = why.ok() ? 0 : 1;
    *stopping_ = true;  // running waits end; their agents' turns run on
    DrainThenStop(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  }

  void DrainThenStop(std::chrono::steady_clock::time_point deadline) {
    if (channel_.drained() || std::chrono::steady_clock::now() >= deadline) return io_.stop();
    drain_timer_.expires_after(std::chrono::milliseconds(10));
    drain_timer_.async_wait(
        [this, deadline](const boost::system::error_code&) { DrainThenStop(deadline); });
  }

  asio::io_context& io_;
  const McpServerOptions& options_;
  jsonrpc::StdioChannel channel_;
  asio::steady_timer drain_timer_;
  asio::thread_pool workers_;
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  McpProtocol protocol_;
  ToolEnv env_;
  // The calls running, by their JSON-RPC id's Key(), with the flag that cancels each.
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> running_;
  int exit_code_ = 0;
};

}  // namespace

int RunMcpServer(const McpServerOptions& options) {
  process::IgnoreBrokenPipes();
  asio::io_context io;
  Server server(io, options);
  return server.Run();
}

}  // namespace agentstream::mcp_server
