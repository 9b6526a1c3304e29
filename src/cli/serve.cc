#include "cli/serve.h"

#include <fmt/core.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <thread>

#include "process/event_loop.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "server/http_server.h"
#include "store/log_factory.h"

namespace agentstream::cli {

namespace {

using namespace std::chrono_literals;

// "HOST:PORT" -> host, port. False when malformed.
bool SplitListen(const std::string& listen, std::string* host, std::uint16_t* port) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = listen.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']')
    *host = host->substr(1, host->size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || value > 65535)
    return false;
  *port = static_cast<std::uint16_t>(value);
  return true;
}

// The manager's event loop on its own thread, stopped and joined on destruction.
class LoopThread {
 public:
  explicit LoopThread(process::EventLoop& loop)
      : thread_([this, &loop] {
          while (!stop_) loop.RunUntil([this] { return stop_.load(); }, 1000ms);
        }) {}
  ~LoopThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

int RunServe(const ServeOptions& options) {
  server::ServerOptions server_options;
  if (!SplitListen(options.listen, &server_options.host, &server_options.port)) {
    fmt::print(stderr, "agentstream: --listen takes HOST:PORT, got {}\n", options.listen);
    return 2;
  }
  server_options.security.token = options.token;
  server_options.security.allowed_origins = options.allow_origins;
  if (Status bind = server::CheckBind(server_options.host, options.token); !bind.ok()) {
    fmt::print(stderr, "agentstream: {}\n", bind.message());
    return 1;
  }

  // Stop signals are taken by sigwait below; every thread started from here inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto log = OpenEventLog(StoreConfig{options.store_url});
  if (!log.ok()) {
    fmt::print(stderr, "agentstream: cannot open the log: {}\n", log.status().ToString());
    return 1;
  }
  process::EventLoop loop;
  runtime::DefaultProviderFactory factory;
  auto manager = std::make_unique<runtime::AgentManager>(**log, factory, loop);
  auto loop_thread = std::make_unique<LoopThread>(loop);
  std::promise<Status> recovered;
  manager->Recover([&recovered](Status status) { recovered.set_value(std::move(status)); });
  if (Status status = recovered.get_future().get(); !status.ok())
    fmt::print(stderr, "agentstream: recovery: {}\n", status.ToString());

  auto server = std::make_unique<server::Server>(*manager, **log, server_options);
  int code = 0;
  if (Status started = server->Start(); !started.ok()) {
    fmt::print(stderr, "agentstream: {}\n", started.message());
    code = 1;
  } else {
    const bool v6 = server_options.host.find(':') != std::string::npos;
    fmt::print("agentstream: serving on http://{}{}{}:{}\n", v6 ? "[" : "", server_options.host,
               v6 ? "]" : "", server->port());
    std::fflush(stdout);
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    fmt::print(stderr, "agentstream: stopping ({})\n",
               signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  }
  // Order: no new requests, then the agents (open turns end canceled), then their thread, then
  // the server's handlers and the log.
  server->Stop();
  std::promise<void> stopped;
  manager->Shutdown([&stopped] { stopped.set_value(); });
  if (stopped.get_future().wait_for(30s) != std::future_status::ready)
    fmt::print(stderr, "agentstream: agents did not stop within 30 s\n");
  loop_thread.reset();
  server.reset();
  manager.reset();
  log->reset();
  return code;
}

}  // namespace agentstream::cli
