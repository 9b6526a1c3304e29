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
#include "server/scheduler.h"
#include "server/schedules.h"
#include "server/static_files.h"
#include "server/workspace_routes.h"
#include "store/log_factory.h"
#include "streams/streams_factory.h"
#include "system/bounded_file.h"
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
  for (const std::string& path : options.acp_catalogs) {
    Result<std::string> text = system::ReadBoundedFile(path, providers::acp::kMaxCatalogBytes);
    if (!text.ok()) {
      return Error(ErrorCode::kInvalidArgument,
                   "--acp-catalog " + path + ": " + text.status().message());
    }
    AS_RETURN_IF_ERROR(out.acp_catalog.Merge(*text, path));
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

// The server's options from the command line. kInvalidArgument (exit code 2) for a malformed
// option, kUnauthenticated (exit code 1) for a listen address that needs a token it was not given;
// the message is what to print.
Result<server::ServerOptions> ServerOptionsFrom(const ServeOptions& options) {
  server::ServerOptions server_options;
  if (!SplitListen(options.listen, &server_options.host, &server_options.port))
    return Error(ErrorCode::kInvalidArgument, "--listen takes HOST:PORT, got " + options.listen);
  if (Status tls = server::CheckTlsOptions(options.tls_cert, options.tls_key); !tls.ok())
    return Error(ErrorCode::kInvalidArgument, tls.message());
  auto proxies = server::TrustedProxies::Parse(options.trusted_proxies);
  if (!proxies.ok())
    return Error(ErrorCode::kInvalidArgument, "--trusted-proxy: " + proxies.status().message());
  server_options.trusted_proxies = std::move(*proxies);
  // Without a token, only loopback clients are the owner; a proxy that sends no X-Forwarded-For
  // makes every client look like one (docs/operations.md, "Behind a reverse proxy").
  if (!options.trusted_proxies.empty() && options.token.empty())
    log::Warn("daemon.proxy_without_token", {{"trusted_proxies", options.trusted_proxies.size()}});
  if (!options.public_url.empty()) {
    if (auto url = net::ParseHttpUrl(options.public_url); !url.ok())
      return Error(ErrorCode::kInvalidArgument, "--public-url: " + url.status().message());
  }
  server_options.pairing_public_url = options.public_url;
  server_options.tls_cert_file = options.tls_cert;
  server_options.tls_key_file = options.tls_key;
  server_options.threads = options.io_threads;
  server_options.request_threads = options.request_threads;
  server_options.security.token = options.token;
  server_options.security.allowed_origins = options.allow_origins;
  server_options.security.allowed_hosts = options.allow_hosts;
  // Other daemons forward to --advertise, naming its host; Location headers name it too.
  if (auto advertised = net::ParseHttpUrl(options.advertise); advertised.ok())
    server_options.security.allowed_hosts.push_back(advertised->host);
  server_options.public_url = options.advertise;
  server_options.web_root =
      options.web_root.empty() ? server::DefaultWebRoot("/proc/self/exe") : options.web_root;
  server_options.long_poll_timeout = std::chrono::milliseconds(options.long_poll_ms);
  if (Status bind = server::CheckBind(server_options.host, options.token); !bind.ok())
    return Error(ErrorCode::kUnauthenticated, bind.message());
  if (options.owner_renew_ms >= options.owner_ttl_ms) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("--owner-renew-ms ({}) must be below --owner-ttl-ms ({})",
                             options.owner_renew_ms, options.owner_ttl_ms));
  }
  return server_options;
}

// Blocks the stop signals and SIGHUP (reload) in this thread and every thread started from it,
// for WaitForStop's sigwait; returns them.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The parts of a running daemon, in the order they start. StopDaemon ends them in the order that
// keeps what each one uses alive; what it leaves goes in reverse order, as members do.
struct Daemon {
  std::unique_ptr<EventLog> log;
  process::EventLoop loop;
  std::unique_ptr<runtime::DefaultProviderFactory> factory;
  std::unique_ptr<cluster::HttpForwarder> forwarder;
  std::unique_ptr<runtime::AgentManager> manager;
  std::unique_ptr<LoopThread> loop_thread;
  std::unique_ptr<streams::Streams> streams;
  std::unique_ptr<server::Inbox> inbox;
  std::unique_ptr<consumers::ConsumerService> consumers;
  std::unique_ptr<notify::Notifications> notifications;
  std::unique_ptr<server::NotifyRoutes> notify_routes;
  std::unique_ptr<devices::DeviceService> device_service;
  // /mcp: the MCP server's HTTP transport, its tools calling this daemon's own API (set once the
  // port is known; until then /mcp answers 503).
  std::unique_ptr<mcp_server::McpHttp> mcp;
  std::atomic<mcp_server::McpHttp*> mcp_ready{nullptr};
  std::unique_ptr<workspace::Worktrees> worktrees;
  std::unique_ptr<server::WorkspaceRoutes> workspaces;
  std::unique_ptr<server::TriggerRoutes> triggers;
  std::unique_ptr<server::Scheduler> scheduler;
  std::unique_ptr<server::ScheduleRoutes> schedules;
  std::unique_ptr<server::Server> server;
};

// Claims the daemon's id, opens the store and starts the agents' manager on its loop thread,
// recovering the sessions this daemon owns. The exit code when the daemon cannot start.
std::optional<int> StartAgents(const ServeOptions& options, Daemon& daemon,
                               runtime::OwnershipOptions& ownership) {
  auto identity = DaemonIdentity::Claim(options.data_dir, options.daemon_id);
  if (!identity.ok()) return StartFailed("identity", identity.status().message());
  // This run's mark on every process it starts, set before any thread runs (process/leftovers.h).
  const std::string run = system::RandomHex(16);
  ::setenv(process::kDaemonMarker, (identity->id() + "/" + run).c_str(), 1);

  StoreConfig store;
  store.url = options.store_url;
  store.search_slices = static_cast<std::size_t>(options.search_slices);
  store.writer_connections = static_cast<std::size_t>(options.store_writers);
  auto log = OpenEventLog(store);
  if (!log.ok()) return StartFailed("open_store", log.status().ToString());
  daemon.log = std::move(*log);
  auto provider_options = ProviderOptions(options);
  if (!provider_options.ok()) {
    fmt::print(stderr, "agentstream: {}\n", provider_options.status().message());
    return 2;
  }
  ownership.daemon_id = identity->id();
  ownership.host = identity->host();
  ownership.data_dir = options.data_dir;
  ownership.ttl = process::Millis(options.owner_ttl_ms);
  ownership.renew_every = process::Millis(options.owner_renew_ms);
  // Another live daemon may not hold this id (only possible with --daemon-id).
  if (Status claimed = daemon.log->coordination().Heartbeat(
          DaemonRecord{ownership.daemon_id, "", ownership.host, ownership.data_dir, 0, 0, 0},
          options.owner_ttl_ms);
      !claimed.ok()) {
    return StartFailed("claim_id", claimed.ToString());
  }
  // The id is this daemon's alone now: what an earlier run of it left behind dies.
  if (const std::size_t killed = process::KillLeftovers(identity->id(), run); killed > 0)
    log::Warn("daemon.leftovers_killed", {{"processes", killed}});
  provider_options->scripted_chunk_gap = process::Millis(options.scripted_chunk_ms);
  daemon.factory = std::make_unique<runtime::DefaultProviderFactory>(*provider_options);
  daemon.forwarder = std::make_unique<cluster::HttpForwarder>(
      cluster::HttpForwarderOptions{ownership.daemon_id, options.token});
  runtime::AgentManagerOptions manager_options;
  manager_options.ownership = ownership;
  manager_options.max_live_agents = static_cast<std::size_t>(options.max_live_agents);
  daemon.manager = std::make_unique<runtime::AgentManager>(
      *daemon.log, *daemon.factory, daemon.loop, manager_options, daemon.forwarder.get());
  daemon.loop_thread = std::make_unique<LoopThread>(daemon.loop);
  std::promise<Status> recovered;
  daemon.manager->Recover([&recovered](Status status) { recovered.set_value(std::move(status)); });
  if (Status status = recovered.get_future().get(); !status.ok())
    log::Error("daemon.recovery_failed", {{"error", status.ToString()}});
  return std::nullopt;
}

// The notification sinks' options: the VAPID contact is the public URL when it is https; ntfy's
// Click links into it.
std::shared_ptr<notify::NotifySinkOptions> NotifyOptions(const push::VapidKey& vapid,
                                                         std::string public_base) {
  while (!public_base.empty() && public_base.back() == '/') public_base.pop_back();
  std::string subject =
      public_base.starts_with("https://") ? public_base : std::string(notify::kDefaultVapidSubject);
  return std::make_shared<notify::NotifySinkOptions>(
      notify::NotifySinkOptions{vapid, std::move(subject), std::move(public_base), "", {}});
}

// The inbox, the durable consumers (whose parent-session sink delivers through the inbox), the
// notifications and the paired devices. The exit code when one cannot start.
std::optional<int> StartConsumers(const ServeOptions& options, const std::string& daemon_id,
                                  Daemon& daemon) {
  EventLog& log = *daemon.log;
  auto inbox_key = InboxKey(log, options);
  if (!inbox_key.ok()) return StartFailed("inbox_key", inbox_key.status().ToString());
  daemon.inbox = std::make_unique<server::Inbox>(*daemon.manager, *inbox_key);
  consumers::ConsumerServiceOptions consumer_options;
  // The daemon's id: restarted, it takes its consumer lanes back at once.
  consumer_options.owner = daemon_id;
  // Notifications: a notify consumer per device sends through this daemon's VAPID key.
  auto vapid = VapidKey(log, options);
  if (!vapid.ok()) return StartFailed("vapid_key", vapid.status().ToString());
  consumer_options.notify_sink_factory =
      notify::MakeNotifySinkFactory(log, log.devices(), NotifyOptions(*vapid, options.public_url));
  daemon.consumers = std::make_unique<consumers::ConsumerService>(
      log, consumer_options,
      [&inbox = *daemon.inbox](const SessionId& parent, const consumers::Delivery& delivery,
                               std::function<void(Status)> done) {
        inbox.Append(
            parent, delivery,
            [done = std::move(done)](const Result<server::InboxResult>& r) { done(r.status()); });
      });
  if (Status started = daemon.consumers->Start(); !started.ok())
    return StartFailed("consumers", started.ToString());
  daemon.notifications = std::make_unique<notify::Notifications>(
      log.devices(), *daemon.consumers, options.push_allow_http, push::VapidPublicKey(*vapid));
  if (Status swept = daemon.notifications->Sweep(); !swept.ok())
    log::Warn("notify.sweep_failed", {{"error", swept.ToString()}});
  daemon.notify_routes = std::make_unique<server::NotifyRoutes>(daemon.notifications.get());
  // Paired devices: their tokens, and the poll that closes a revoked device's connections.
  daemon.device_service = std::make_unique<devices::DeviceService>(log.devices());
  // A revoked device's notification consumer goes with it (heard on every daemon; deleting an
  // absent consumer is fine). Stopped with the service, before the consumers.
  daemon.device_service->AddRevocationListener(
      [&notifications = *daemon.notifications](const std::string& device) {
        if (Status s = notifications.Forget(device); !s.ok())
          log::Warn("notify.forget_failed", {{"device", device}, {"error", s.ToString()}});
      });
  daemon.device_service->Start();
  return std::nullopt;
}

// /mcp's route: the MCP server once it is set, 503 before.
auto McpRoute(std::atomic<mcp_server::McpHttp*>& mcp_ready) {
  return [&mcp_ready](const server::HttpRequest& request,
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
}

// How this daemon's own tools (/mcp) reach it: a wildcard address is reached on loopback. (With
// TLS, they reach the daemon over https: its certificate must be one the system trusts for the
// listen address.)
client::TransportOptions SelfClient(const std::string& host, const server::Server& server,
                                    const std::string& url, const std::string& token) {
  client::TransportOptions self;
  self.url = host == "0.0.0.0" ? fmt::format("{}://127.0.0.1:{}", server.scheme(), server.port())
             : host == "::"    ? fmt::format("{}://[::1]:{}", server.scheme(), server.port())
                               : url;
  self.token = token;
  return self;
}

// The daemon listens: says so (stdout, systemd, the log), serves until a stop signal and returns
// the exit code.
int Serve(const ServeOptions& options, const std::string& host, const std::string& daemon_id,
          const sigset_t& signals, Daemon& daemon) {
  server::Server& server = *daemon.server;
  if (Status started = server.Start(); !started.ok())
    return StartFailed("listen", started.message());
  const bool v6 = host.find(':') != std::string::npos;
  const std::string url = fmt::format("{}://{}{}{}:{}", server.scheme(), v6 ? "[" : "", host,
                                      v6 ? "]" : "", server.port());
  daemon.mcp = std::make_unique<mcp_server::McpHttp>(SelfClient(host, server, url, options.token),
                                                     GetBuildInfo().version);
  daemon.mcp_ready = daemon.mcp.get();
  fmt::print("agentstream: serving on {}\n", url);  // tests and scripts read this line
  std::fflush(stdout);
  // Under systemd (Type=notify): `systemctl start` returns now that the port accepts.
  if (Status notified = Notify("READY=1"); !notified.ok())
    fmt::print(stderr, "agentstream: {}\n", notified.message());
  const std::string advertised = AdvertisedUrl(options, host, server.port());
  const BuildInfo& build = GetBuildInfo();
  log::Info("daemon.started", {{"daemon", daemon_id},
                               {"version", build.version},
                               {"commit", build.commit},
                               {"pid", ::getpid()},
                               {"store", StoreKind(options.store_url)},
                               {"listen", url},
                               {"advertise", advertised}});
  // A wildcard address without --advertise: other daemons on this store cannot forward commands
  // for the agents this one runs.
  if (advertised.empty()) log::Warn("daemon.not_advertised", {{"listen", url}});
  daemon.manager->SetAdvertisedUrl(advertised);
  const int signal_number = WaitForStop(signals, server);
  log::Info("daemon.stopping", {{"signal", process::SignalName(signal_number)}});
  (void)Notify("STOPPING=1");  // a failure showed at READY=1
  return 0;
}

// Order: no new requests, then the consumers (their parent-session deliveries go to the agents),
// then the agents (open turns end canceled), then their thread, then the server's handlers and
// the log.
void StopDaemon(Daemon& daemon) {
  if (daemon.server) daemon.server->Stop();
  if (daemon.device_service) daemon.device_service->Stop();
  if (daemon.scheduler) daemon.scheduler->Stop();    // its firings call the manager
  if (daemon.workspaces) daemon.workspaces->Stop();  // before the manager: its jobs call it
  daemon.mcp_ready = nullptr;
  daemon.mcp.reset();  // its running tools end (their daemon calls fail: the server stopped)
  if (daemon.consumers) daemon.consumers->Stop();
  if (daemon.manager) {
    std::promise<void> stopped;
    daemon.manager->Shutdown([&stopped] { stopped.set_value(); });
    if (stopped.get_future().wait_for(30s) != std::future_status::ready)
      log::Warn("daemon.stop_timeout", {{"waited_ms", 30000}});
  }
  daemon.loop_thread.reset();
  daemon.server.reset();
  daemon.consumers.reset();
  daemon.manager.reset();
  daemon.workspaces.reset();
  daemon.log.reset();
}

// --git-author (docs/workspaces.md, "Git actions"), --triggers and --schedule-floor
// (docs/automation.md).
Status AutomationOptions(const ServeOptions& options, server::WorkspaceRoutesOptions& workspace,
                         std::vector<server::Trigger>& triggers, std::int64_t& schedule_floor_ms) {
  workspace.git.gh_program = options.gh_program;
  Result<std::int64_t> floor = server::ParseInterval(options.schedule_floor);
  if (!floor.ok())
    return Error(ErrorCode::kInvalidArgument, "--schedule-floor: " + floor.status().message());
  schedule_floor_ms = *floor;
  if (!options.git_author.empty()) {
    auto identity = workspace::ParseGitIdentity(options.git_author);
    if (!identity.ok())
      return Error(ErrorCode::kInvalidArgument, "--git-author: " + identity.status().message());
    workspace.git.identity = std::move(*identity);
  }
  if (options.triggers_file.empty()) return Status::Ok();
  auto read = [](const std::string& path) {
    return system::ReadBoundedFile(path, server::kMaxTriggersFileBytes);
  };
  Result<std::string> text = read(options.triggers_file);
  Result<std::vector<server::Trigger>> parsed =
      text.ok() ? server::ParseTriggers(*text, read)
                : Result<std::vector<server::Trigger>>(text.status());
  if (!parsed.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "--triggers " + options.triggers_file + ": " + parsed.status().message());
  }
  triggers = std::move(*parsed);
  return Status::Ok();
}

}  // namespace

int RunServe(const ServeOptions& options) {
  if (!ConfigureLog(options)) return 2;
  // Read before anything starts, so that a bad value is exit code 2.
  server::WorkspaceRoutesOptions workspace_options;
  std::vector<server::Trigger> triggers;
  std::int64_t schedule_floor_ms = 0;
  if (Status automation =
          AutomationOptions(options, workspace_options, triggers, schedule_floor_ms);
      !automation.ok()) {
    fmt::print(stderr, "agentstream: {}\n", automation.message());
    return 2;
  }
  auto server_options = ServerOptionsFrom(options);
  if (!server_options.ok()) {
    fmt::print(stderr, "agentstream: {}\n", server_options.status().message());
    return server_options.status().code() == ErrorCode::kUnauthenticated ? 1 : 2;
  }
  const sigset_t signals = BlockStopSignals();
  process::IgnoreBrokenPipes();  // a client, sink or agent gone is an error value, not our end

  Daemon daemon;
  runtime::OwnershipOptions ownership;
  std::optional<int> failed = StartAgents(options, daemon, ownership);
  if (failed) return *failed;  // (nothing runs yet but the store: the daemon's members close it)
  // The generic Durable Streams and their subscriptions: in PostgreSQL with a postgresql://
  // store, else in memory journaled to streams.db (streams_factory.h).
  auto streams = streams::OpenStreams({options.store_url, options.streams_db});
  if (!streams.ok()) failed = StartFailed("streams", streams.status().ToString());
  if (!failed) {
    daemon.streams = std::move(*streams);
    server_options->streams = &daemon.streams->store();
    server_options->stream_subscriptions = &daemon.streams->subscriptions();
    failed = StartConsumers(options, ownership.daemon_id, daemon);
  }
  if (failed) {
    StopDaemon(daemon);
    return *failed;
  }
  server_options->devices = daemon.device_service.get();
  server_options->notify_routes = daemon.notify_routes.get();
  server_options->consumers = daemon.consumers.get();
  server_options->inbox = daemon.inbox.get();
  server_options->mcp = McpRoute(daemon.mcp_ready);
  server_options->catalog = [factory = daemon.factory.get()] {
    return runtime::CatalogToJson(factory->Catalog());
  };
  // Agents' git worktrees, under the data directory (none with the memory store, which has
  // none: a create asking for a worktree is refused).
  if (!options.data_dir.empty()) {
    daemon.worktrees = std::make_unique<workspace::Worktrees>(
        workspace::Git(), (std::filesystem::path(options.data_dir) / "worktrees").string());
    daemon.workspaces = std::make_unique<server::WorkspaceRoutes>(
        *daemon.manager, *daemon.log, *daemon.worktrees, workspace_options);
    server_options->workspaces = daemon.workspaces.get();
  }
  if (!triggers.empty()) {
    daemon.triggers = std::make_unique<server::TriggerRoutes>(
        *daemon.manager, daemon.workspaces.get(), std::move(triggers));
    server_options->triggers = daemon.triggers.get();
  }
  server::SchedulerOptions scheduler;
  scheduler.daemon_id = ownership.daemon_id;
  daemon.scheduler = std::make_unique<server::Scheduler>(
      daemon.log->schedules(), *daemon.manager, daemon.workspaces.get(), std::move(scheduler));
  daemon.schedules = std::make_unique<server::ScheduleRoutes>(*daemon.log, daemon.scheduler.get(),
                                                              schedule_floor_ms);
  server_options->schedules = daemon.schedules.get();
  daemon.server = std::make_unique<server::Server>(*daemon.manager, *daemon.log, *server_options);
  const int code = Serve(options, server_options->host, ownership.daemon_id, signals, daemon);
  StopDaemon(daemon);
  log::Info("daemon.stopped", {{"exit_code", code}});
  return code;
}

}  // namespace agentstream::cli
