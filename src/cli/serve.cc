#include "cli/serve.h"

#include <fmt/core.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/build_info.h"
#include "cli/daemon_identity.h"
#include "cli/sd_notify.h"
#include "cluster/http_forwarder.h"
#include "consumers/consumer_service.h"
#include "devices/device_service.h"
#include "log/log.h"
#include "mcp_server/mcp_http.h"
#include "net/http_url.h"
#include "notify/notifications.h"
#include "notify/notify_sink.h"
#include "process/child_process.h"
#include "process/event_loop.h"
#include "process/leftovers.h"
#include "push/vapid.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "server/api_router.h"
#include "server/http_server.h"
#include "server/inbox.h"
#include "server/notify_routes.h"
#include "server/static_files.h"
#include "server/workspace_routes.h"
#include "store/log_factory.h"
#include "streams/streams_factory.h"
#include "system/random_id.h"

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

// Splits "NAME=VALUE"; kInvalidArgument naming `flag` when malformed.
Result<std::pair<std::string, std::string>> NameValue(const std::string& text, const char* flag) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Error(ErrorCode::kInvalidArgument, std::string(flag) + " takes NAME=VALUE, got " + text);
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

// The providers' settings from the serve options.
Result<runtime::ProviderFactoryOptions> ProviderOptions(const ServeOptions& options) {
  runtime::ProviderFactoryOptions out;
  out.claude_program = options.claude_program;
  out.codex_program = options.codex_program;
  out.opencode_program = options.opencode_program;
  for (const std::string& entry : options.acp_agents) {
    AS_ASSIGN_OR_RETURN(auto name_value, NameValue(entry, "--acp-agent"));
    providers::acp::AgentCommand command;
    command.name = "acp:" + name_value.first;
    std::istringstream words(name_value.second);
    for (std::string word; words >> word;) command.argv.push_back(word);
    out.acp_agents[command.name] = std::move(command);
  }
  for (const std::string& entry : options.acp_programs) {
    AS_ASSIGN_OR_RETURN(auto name_value, NameValue(entry, "--acp-program"));
    out.acp_programs[name_value.first] = name_value.second;
  }
  return out;
}

bool IsWildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host.empty();
}

// The URL other daemons forward commands to: --advertise, else this server's own address (https
// with TLS).
std::string AdvertisedUrl(const ServeOptions& options, const std::string& host,
                          std::uint16_t port) {
  if (!options.advertise.empty()) return options.advertise;
  if (IsWildcard(host)) return "";
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", options.tls_cert.empty() ? "http" : "https", v6 ? "[" : "",
                     host, v6 ? "]" : "", port);
}

// A 32-byte key (64 hex characters) named `name`: shared by every daemon of a store that keeps
// secrets (PostgreSQL; the first daemon's key wins), else this daemon's own, in the file `path`
// of its data directory ("" for a new key per run).
Result<std::string> SharedKey(EventLog& log, const std::string& name, const std::string& path) {
  AS_ASSIGN_OR_RETURN(std::string key, server::LoadOrCreateInboxKey(path));
  Result<std::string> shared = log.coordination().SharedSecret(name, key);
  if (!shared.ok() && shared.status().code() == ErrorCode::kUnavailable) return key;
  return shared;
}

// The inbox key (inbox.h).
Result<std::string> InboxKey(EventLog& log, const ServeOptions& options) {
  return SharedKey(log, "inbox", options.inbox_key_path);
}

// The VAPID key of Web Push (docs/notifications.md): kept as the inbox key is.
Result<push::VapidKey> VapidKey(EventLog& log, const ServeOptions& options) {
  AS_ASSIGN_OR_RETURN(std::string secret, SharedKey(log, "vapid", options.vapid_key_path));
  return notify::VapidKeyFromSecret(secret);
}

// "memory", "sqlite" or "postgresql": what the log says of the store (its URL may hold a
// password).
std::string_view StoreKind(const std::string& url) {
  if (url.rfind("memory:", 0) == 0) return "memory";
  if (url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0) return "postgresql";
  return "sqlite";
}

// The password of a postgresql:// URL (USER:PASSWORD@HOST, or ?password=), for the log to mask.
std::string StorePassword(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const std::size_t host = scheme + 3;
  const std::size_t end = std::min(url.find_first_of("/?", host), url.size());
  const std::size_t at = url.rfind('@', end);
  const std::size_t colon = url.find(':', host);
  if (at != std::string::npos && at >= host && colon < at)
    return url.substr(colon + 1, at - colon - 1);
  const std::size_t key = url.find("password=", end);
  if (key == std::string::npos) return "";
  const std::size_t value = key + std::string_view("password=").size();
  return url.substr(value, url.find('&', value) - value);
}

// Configures the log from --log-level and --log-format; false, after saying why, when either is
// malformed. The token and the store's password are masked in every line.
bool ConfigureLog(const ServeOptions& options) {
  const std::optional<log::Level> level = log::ParseLevel(options.log_level);
  const std::optional<log::Format> format = log::ParseFormat(options.log_format);
  if (!level || !format) {
    fmt::print(stderr,
               "agentstream: --log-level takes trace, debug, info, warn, error or off, and "
               "--log-format text or json\n");
    return false;
  }
  log::Configure(log::Options{*level, *format, {options.token, StorePassword(options.store_url)}});
  return true;
}

// Waits for a stop signal of `signals` and returns it; a SIGHUP meanwhile reloads the server's
// TLS certificate (a no-op without TLS).
int WaitForStop(const sigset_t& signals, server::Server& server) {
  while (true) {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (signal_number != SIGHUP) return signal_number;
    log::Info("daemon.reload", {{"signal", process::SignalName(signal_number)}});
    server.ReloadTls();
  }
}

// A failure to start once the options were read: logged; the exit code.
int StartFailed(std::string_view step, const std::string& error) {
  log::Error("daemon.start_failed", {{"step", step}, {"error", error}});
  return 1;
}

}  // namespace

int RunServe(const ServeOptions& options) {
  if (!ConfigureLog(options)) return 2;
  server::ServerOptions server_options;
  if (!SplitListen(options.listen, &server_options.host, &server_options.port)) {
    fmt::print(stderr, "agentstream: --listen takes HOST:PORT, got {}\n", options.listen);
    return 2;
  }
  if (Status tls = server::CheckTlsOptions(options.tls_cert, options.tls_key); !tls.ok()) {
    fmt::print(stderr, "agentstream: {}\n", tls.message());
    return 2;
  }
  auto proxies = server::TrustedProxies::Parse(options.trusted_proxies);
  if (!proxies.ok()) {
    fmt::print(stderr, "agentstream: --trusted-proxy: {}\n", proxies.status().message());
    return 2;
  }
  server_options.trusted_proxies = std::move(*proxies);
  // Without a token, only loopback clients are the owner; a proxy that sends no X-Forwarded-For
  // makes every client look like one (docs/operations.md, "Behind a reverse proxy").
  if (!options.trusted_proxies.empty() && options.token.empty())
    log::Warn("daemon.proxy_without_token", {{"trusted_proxies", options.trusted_proxies.size()}});
  if (!options.public_url.empty()) {
    if (auto url = net::ParseHttpUrl(options.public_url); !url.ok()) {
      fmt::print(stderr, "agentstream: --public-url: {}\n", url.status().message());
      return 2;
    }
  }
  server_options.pairing_public_url = options.public_url;
  server_options.tls_cert_file = options.tls_cert;
  server_options.tls_key_file = options.tls_key;
  server_options.threads = options.io_threads;
  server_options.security.token = options.token;
  server_options.security.allowed_origins = options.allow_origins;
  server_options.security.allowed_hosts = options.allow_hosts;
  // Other daemons forward to --advertise, naming its host; Location headers name it too.
  if (auto advertised = net::ParseHttpUrl(options.advertise); advertised.ok())
    server_options.security.allowed_hosts.push_back(advertised->host);
  server_options.public_url = options.advertise;
  server_options.web_root =
      options.web_root.empty() ? server::DefaultWebRoot("/proc/self/exe") : options.web_root;
  if (Status bind = server::CheckBind(server_options.host, options.token); !bind.ok()) {
    fmt::print(stderr, "agentstream: {}\n", bind.message());
    return 1;
  }

  // Stop signals and SIGHUP (reload) are taken by sigwait below; every thread started from here
  // inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  process::IgnoreBrokenPipes();  // a client, sink or agent gone is an error value, not our end

  if (options.owner_renew_ms >= options.owner_ttl_ms) {
    fmt::print(stderr, "agentstream: --owner-renew-ms ({}) must be below --owner-ttl-ms ({})\n",
               options.owner_renew_ms, options.owner_ttl_ms);
    return 2;
  }
  auto identity = DaemonIdentity::Claim(options.data_dir, options.daemon_id);
  if (!identity.ok()) return StartFailed("identity", identity.status().message());
  // This run's mark on every process it starts, set before any thread runs (process/leftovers.h).
  const std::string run = system::RandomHex(16);
  ::setenv(process::kDaemonMarker, (identity->id() + "/" + run).c_str(), 1);

  StoreConfig store;
  store.url = options.store_url;
  store.search_slices = static_cast<std::size_t>(options.search_slices);
  auto log = OpenEventLog(store);
  if (!log.ok()) return StartFailed("open_store", log.status().ToString());
  auto provider_options = ProviderOptions(options);
  if (!provider_options.ok()) {
    fmt::print(stderr, "agentstream: {}\n", provider_options.status().message());
    return 2;
  }
  runtime::AgentManagerOptions manager_options;
  runtime::OwnershipOptions& ownership = manager_options.ownership;
  ownership.daemon_id = identity->id();
  ownership.host = identity->host();
  ownership.data_dir = options.data_dir;
  ownership.ttl = process::Millis(options.owner_ttl_ms);
  ownership.renew_every = process::Millis(options.owner_renew_ms);
  // Another live daemon may not hold this id (only possible with --daemon-id).
  if (Status claimed = (*log)->coordination().Heartbeat(
          DaemonRecord{ownership.daemon_id, "", ownership.host, ownership.data_dir, 0, 0, 0},
          options.owner_ttl_ms);
      !claimed.ok()) {
    return StartFailed("claim_id", claimed.ToString());
  }
  // The id is this daemon's alone now: what an earlier run of it left behind dies.
  if (const std::size_t killed = process::KillLeftovers(identity->id(), run); killed > 0)
    log::Warn("daemon.leftovers_killed", {{"processes", killed}});
  process::EventLoop loop;
  runtime::ProviderFactoryOptions& factory_options = *provider_options;
  factory_options.scripted_chunk_gap = process::Millis(options.scripted_chunk_ms);
  runtime::DefaultProviderFactory factory(factory_options);
  cluster::HttpForwarder forwarder(
      cluster::HttpForwarderOptions{ownership.daemon_id, options.token});
  auto manager =
      std::make_unique<runtime::AgentManager>(**log, factory, loop, manager_options, &forwarder);
  auto loop_thread = std::make_unique<LoopThread>(loop);
  std::promise<Status> recovered;
  manager->Recover([&recovered](Status status) { recovered.set_value(std::move(status)); });
  if (Status status = recovered.get_future().get(); !status.ok())
    log::Error("daemon.recovery_failed", {{"error", status.ToString()}});

  // The generic Durable Streams and their subscriptions: in PostgreSQL with a postgresql://
  // store, else in memory journaled to streams.db (streams_factory.h).
  auto streams = streams::OpenStreams({options.store_url, options.streams_db});
  if (!streams.ok()) return StartFailed("streams", streams.status().ToString());
  server_options.streams = &(*streams)->store();
  server_options.stream_subscriptions = &(*streams)->subscriptions();

  // The inbox, and the durable consumers, whose parent-session sink delivers through it.
  auto inbox_key = InboxKey(**log, options);
  if (!inbox_key.ok()) return StartFailed("inbox_key", inbox_key.status().ToString());
  server::Inbox inbox(*manager, *inbox_key);
  consumers::ConsumerServiceOptions consumer_options;
  // The daemon's id: restarted, it takes its consumer lanes back at once.
  consumer_options.owner = ownership.daemon_id;
  // Notifications: a notify consumer per device sends through this daemon's VAPID key.
  auto vapid = VapidKey(**log, options);
  if (!vapid.ok()) return StartFailed("vapid_key", vapid.status().ToString());
  // The VAPID contact is the public URL when it is https; ntfy's Click links into it.
  std::string public_base = options.public_url;
  while (!public_base.empty() && public_base.back() == '/') public_base.pop_back();
  auto notify_options = std::make_shared<notify::NotifySinkOptions>(notify::NotifySinkOptions{
      *vapid,
      public_base.starts_with("https://") ? public_base : std::string(notify::kDefaultVapidSubject),
      public_base,
      "",
      {}});
  consumer_options.notify_sink_factory =
      notify::MakeNotifySinkFactory(**log, (*log)->devices(), notify_options);
  auto consumers = std::make_unique<consumers::ConsumerService>(
      **log, consumer_options,
      [&inbox](const SessionId& parent, const consumers::Delivery& delivery,
               std::function<void(Status)> done) {
        inbox.Append(
            parent, delivery,
            [done = std::move(done)](const Result<server::InboxResult>& r) { done(r.status()); });
      });
  if (Status started = consumers->Start(); !started.ok())
    return StartFailed("consumers", started.ToString());
  notify::Notifications notifications((*log)->devices(), *consumers, options.push_allow_http,
                                      push::VapidPublicKey(*vapid));
  if (Status swept = notifications.Sweep(); !swept.ok())
    log::Warn("notify.sweep_failed", {{"error", swept.ToString()}});
  server::NotifyRoutes notify_routes(&notifications);
  // Paired devices: their tokens, and the poll that closes a revoked device's connections.
  devices::DeviceService device_service((*log)->devices());
  // A revoked device's notification consumer goes with it (heard on every daemon; deleting an
  // absent consumer is fine). Stopped with the service, before the consumers.
  device_service.AddRevocationListener([&notifications](const std::string& device) {
    if (Status s = notifications.Forget(device); !s.ok())
      log::Warn("notify.forget_failed", {{"device", device}, {"error", s.ToString()}});
  });
  device_service.Start();
  server_options.devices = &device_service;
  server_options.notify_routes = &notify_routes;
  server_options.consumers = consumers.get();
  server_options.inbox = &inbox;
  server_options.long_poll_timeout = std::chrono::milliseconds(options.long_poll_ms);
  // /mcp: the MCP server's HTTP transport, its tools calling this daemon's own API (set once the
  // port is known; until then /mcp answers 503).
  std::unique_ptr<mcp_server::McpHttp> mcp;
  std::atomic<mcp_server::McpHttp*> mcp_ready{nullptr};
  server_options.mcp = [&mcp_ready](const server::HttpRequest& request,
                                    std::function<void(server::HttpResponse)> reply) {
    mcp_server::McpHttp* handler = mcp_ready.load();
    if (handler == nullptr) {
      return reply(server::CodedErrorResponse(503, "unavailable", "the daemon is starting"));
    }
    handler->Handle(request.method, std::string(request.Header("mcp-session-id")),
                    request.client_address, request.body,
                    [reply = std::move(reply)](const mcp_server::McpHttpReply& r) {
                      reply(server::HttpResponse{r.status, r.content_type, r.headers, r.body});
                    });
  };
  // Agents' git worktrees, under the data directory (none with the memory store, which has
  // none: a create asking for a worktree is refused).
  std::unique_ptr<workspace::Worktrees> worktrees;
  std::unique_ptr<server::WorkspaceRoutes> workspaces;
  if (!options.data_dir.empty()) {
    worktrees = std::make_unique<workspace::Worktrees>(
        workspace::Git(), (std::filesystem::path(options.data_dir) / "worktrees").string());
    workspaces = std::make_unique<server::WorkspaceRoutes>(*manager, **log, *worktrees);
    server_options.workspaces = workspaces.get();
  }
  auto server = std::make_unique<server::Server>(*manager, **log, server_options);
  int code = 0;
  if (Status started = server->Start(); !started.ok()) {
    code = StartFailed("listen", started.message());
  } else {
    const bool v6 = server_options.host.find(':') != std::string::npos;
    const std::string url = fmt::format("{}://{}{}{}:{}", server->scheme(), v6 ? "[" : "",
                                        server_options.host, v6 ? "]" : "", server->port());
    cli::client::HttpClientOptions self;  // a wildcard address is reached on loopback
    // (With TLS, /mcp's tools reach the daemon over https: its certificate must be one the
    // system trusts for the listen address.)
    self.url = server_options.host == "0.0.0.0"
                   ? fmt::format("{}://127.0.0.1:{}", server->scheme(), server->port())
               : server_options.host == "::"
                   ? fmt::format("{}://[::1]:{}", server->scheme(), server->port())
                   : url;
    self.token = options.token;
    mcp = std::make_unique<mcp_server::McpHttp>(self, GetBuildInfo().version);
    mcp_ready = mcp.get();
    fmt::print("agentstream: serving on {}\n", url);  // tests and scripts read this line
    std::fflush(stdout);
    // Under systemd (Type=notify): `systemctl start` returns now that the port accepts.
    if (Status notified = Notify("READY=1"); !notified.ok())
      fmt::print(stderr, "agentstream: {}\n", notified.message());
    const std::string advertised = AdvertisedUrl(options, server_options.host, server->port());
    const BuildInfo& build = GetBuildInfo();
    log::Info("daemon.started", {{"daemon", ownership.daemon_id},
                                 {"version", build.version},
                                 {"commit", build.commit},
                                 {"pid", ::getpid()},
                                 {"store", StoreKind(options.store_url)},
                                 {"listen", url},
                                 {"advertise", advertised}});
    // A wildcard address without --advertise: other daemons on this store cannot forward
    // commands for the agents this one runs.
    if (advertised.empty()) log::Warn("daemon.not_advertised", {{"listen", url}});
    manager->SetAdvertisedUrl(advertised);
    const int signal_number = WaitForStop(signals, *server);
    log::Info("daemon.stopping", {{"signal", process::SignalName(signal_number)}});
    (void)Notify("STOPPING=1");  // a failure showed at READY=1
  }
  // Order: no new requests, then the consumers (their parent-session deliveries go to the
  // agents), then the agents (open turns end canceled), then their thread, then the server's
  // handlers and the log.
  server->Stop();
  device_service.Stop();
  if (workspaces) workspaces->Stop();  // before the manager: its jobs call the manager
  mcp_ready = nullptr;
  mcp.reset();  // its running tools end (their daemon calls fail: the server stopped)
  consumers->Stop();
  std::promise<void> stopped;
  manager->Shutdown([&stopped] { stopped.set_value(); });
  if (stopped.get_future().wait_for(30s) != std::future_status::ready)
    log::Warn("daemon.stop_timeout", {{"waited_ms", 30000}});
  loop_thread.reset();
  server.reset();
  consumers.reset();
  manager.reset();
  workspaces.reset();
  log->reset();
  log::Info("daemon.stopped", {{"exit_code", code}});
  return code;
}

}  // namespace agentstream::cli
