// agentstream: the command-line entry point.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/build_info.h"
#include "cli/check.h"
#include "cli/client_cli.h"
#include "cli/config_cli.h"
#include "cli/demo.h"
#include "cli/serve.h"
#include "cli/service.h"
#include "cli/store_cli.h"
#include "core/event_codec.h"
#include "store/log_factory.h"
#include "streams/streams_factory.h"

namespace {

// $XDG_DATA_HOME/agentstream, else ~/.local/share/agentstream.
std::string DefaultDataDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/agentstream";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/agentstream";
}

// Creates the data directory when missing; a failure shows when its files are opened.
void EnsureDataDir(const std::string& data) {
  std::error_code ec;
  std::filesystem::create_directories(data, ec);
  if (ec) fmt::print(stderr, "agentstream: cannot create {}: {}\n", data, ec.message());
}

std::string StoreUrl(const std::string& store, const std::string& data) {
  if (!store.empty()) return store;
  EnsureDataDir(data);
  return "sqlite:" + data + "/agentstream.db";
}

int PrintEvents(const std::string& url, const std::string& session, const std::string& from,
                int limit, bool json) {
  auto log = agentstream::OpenEventLog(agentstream::StoreConfig{url});
  if (!log.ok()) {
    fmt::print(stderr, "agentstream: {}\n", log.status().ToString());
    return 1;
  }
  agentstream::ReadRequest request;
  request.session = agentstream::SessionId(session);
  request.max_items = static_cast<std::size_t>(limit);
  if (!from.empty()) {
    agentstream::Cursor cursor;
    if (!agentstream::ParseCursor(from, &cursor)) {
      fmt::print(stderr, "agentstream: --from takes EPOCH:SEQ\n");
      return 2;
    }
    request.epoch = cursor.epoch;
    request.from = cursor.seq;
  }
  auto page = (*log)->Read(request);
  if (!page.ok()) {
    fmt::print(stderr, "agentstream: {}\n", page.status().ToString());
    return 1;
  }
  for (const auto& record : page->events) {
    if (json) {
      fmt::print("{}\n", agentstream::EncodeEnvelope(record));
    } else {
      fmt::print("{}:{}  {}  {}\n", record.epoch.value(), record.seq.value(),
                 agentstream::EventKindName(agentstream::EventKind(record.kind)), record.payload);
    }
  }
  return 0;
}

// `serve`'s options of the HTTP surface: address, TLS, access, the web page.
void AddServerOptions(CLI::App* serve_cmd, agentstream::cli::ServeOptions& serve) {
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT")->capture_default_str();
  serve_cmd->add_option("--token", serve.token, "bearer token (required off loopback)")
      ->envname("AGENTSTREAM_TOKEN");
  serve_cmd->add_option("--tls-cert", serve.tls_cert,
                        "TLS on the listen port: PEM certificate chain (with --tls-key; reloaded "
                        "when it changes and on SIGHUP)");
  serve_cmd->add_option("--tls-key", serve.tls_key,
                        "TLS on the listen port: PEM private key (with --tls-cert)");
  serve_cmd->add_option("--allow-origin", serve.allow_origins,
                        "browser origin allowed to connect (repeatable; default: this server)");
  serve_cmd->add_option("--allow-host", serve.allow_hosts,
                        "Host header name allowed besides localhost, loopback addresses and the "
                        "listen address, e.g. a load balancer's (repeatable)");
  serve_cmd->add_option("--trusted-proxy", serve.trusted_proxies,
                        "a reverse proxy's address or CIDR (repeatable): its X-Forwarded-Proto, "
                        "-For and -Host headers name the request's scheme, client and Host");
  serve_cmd->add_option("--public-url", serve.public_url,
                        "base URL of pairing links, as a phone reaches this daemon (https, or "
                        "loopback; default: the pairing request's own origin)");
  serve_cmd->add_flag("--push-allow-http", serve.push_allow_http,
                      "accept Web Push endpoints and ntfy servers over plain http:// (tests, "
                      "private networks)");
  serve_cmd->add_option("--web-root", serve.web_root,
                        "built web page served at / (default: web/ beside the binary, else the "
                        "source tree's web/dist)");
  serve_cmd
      ->add_option("--scripted-chunk-ms", serve.scripted_chunk_ms,
                   "gap between the scripted agent's streamed chunks (milliseconds)")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
}

// `serve`'s options of the agents and their ownership.
void AddAgentOptions(CLI::App* serve_cmd, agentstream::cli::ServeOptions& serve) {
  serve_cmd->add_option("--acp-agent", serve.acp_agents,
                        "add the ACP agent acp:NAME: 'NAME=PROGRAM ARG...' (repeatable)");
  serve_cmd->add_option("--acp-program", serve.acp_programs,
                        "the program of an ACP preset: 'gemini=PATH' (repeatable)");
  serve_cmd->add_option("--acp-catalog", serve.acp_catalogs,
                        "a file in the ACP registry's format whose agents join the catalog "
                        "(repeatable; a later entry replaces the one with its id)");
  serve_cmd->add_option("--triggers", serve.triggers_file,
                        "a JSON file of triggers: outside events (GitHub webhooks) made prompts "
                        "at POST /v1/triggers/ID");
  serve_cmd
      ->add_option("--schedule-floor", serve.schedule_floor,
                   "the shortest time between two ticks a new schedule may have "
                   "('30s', '1m', '2h')")
      ->capture_default_str();
  serve_cmd->add_option("--git-author", serve.git_author,
                        "'Name <email>': the author of the commits of git actions on worktrees "
                        "(default: the repository's user.name and user.email)");
  serve_cmd
      ->add_option("--gh-program", serve.gh_program,
                   "the GitHub CLI that opens pull requests of worktrees (git pr)")
      ->capture_default_str();
  serve_cmd->add_option("--claude-program", serve.claude_program, "the claude CLI")
      ->capture_default_str();
  serve_cmd->add_option("--codex-program", serve.codex_program, "the codex CLI")
      ->capture_default_str();
  serve_cmd
      ->add_option("--opencode-program", serve.opencode_program,
                   "the opencode CLI of the opencode provider (opencode serve)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--long-poll-ms", serve.long_poll_ms,
                   "long-poll wait before 204, and SSE idle interval (milliseconds)")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  serve_cmd->add_option("--io-threads", serve.io_threads, "HTTP and WebSocket I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_cmd
      ->add_option("--request-threads", serve.request_threads,
                   "threads that run the /v1 API's requests (pages, searches, commands)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-live-agents", serve.max_live_agents,
                   "agents with a running runtime; a further start stops the one idle the longest")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  serve_cmd->add_option("--daemon-id", serve.daemon_id,
                        "this daemon's id among the daemons sharing a store (default: kept in the "
                        "data directory)");
  serve_cmd->add_option("--advertise", serve.advertise,
                        "base URL other daemons forward commands to (default: http://HOST:PORT of "
                        "--listen)");
  serve_cmd
      ->add_option("--owner-ttl-ms", serve.owner_ttl_ms,
                   "how long an agent's ownership lease lasts without renewal (milliseconds)")
      ->check(CLI::Range(500, 600000))
      ->capture_default_str();
  serve_cmd
      ->add_option("--owner-renew-ms", serve.owner_renew_ms,
                   "how often ownership leases are renewed (milliseconds; below the ttl)")
      ->check(CLI::Range(100, 300000))
      ->capture_default_str();
}

// `serve`'s options of the store and of the daemon's log lines.
void AddStoreAndLogOptions(CLI::App* serve_cmd, agentstream::cli::ServeOptions& serve) {
  serve_cmd
      ->add_option("--search-slices", serve.search_slices,
                   "database connections one search runs on at once (0: the machine's hardware "
                   "threads, at most 4)")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  serve_cmd
      ->add_option("--store-writers", serve.store_writers,
                   "PostgreSQL: writer connections committing side by side (the next one "
                   "takes new work when those before it have a backlog)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  serve_cmd
      ->add_option("--log-level", serve.log_level,
                   "the least level of the log lines on stderr (docs/operations.md, \"Logs\")")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--log-format", serve.log_format, "log lines as text, or one JSON object each")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

// `sessions`: the stored sessions, a line (or a JSON object) each.
int PrintSessions(const std::string& url, bool json) {
  auto log = agentstream::OpenEventLog(agentstream::StoreConfig{url});
  if (!log.ok()) {
    fmt::print(stderr, "agentstream: {}\n", log.status().ToString());
    return 1;
  }
  auto list = (*log)->ListSessions("", 10000);
  if (!list.ok()) {
    fmt::print(stderr, "agentstream: {}\n", list.status().ToString());
    return 1;
  }
  for (const auto& info : *list) {
    if (json) {
      fmt::print("{{\"id\":\"{}\",\"provider\":\"{}\",\"epoch\":{},\"tail\":{}}}\n", info.id.str(),
                 info.meta.provider, info.epoch.value(), info.tail.value());
    } else {
      fmt::print("{}  {:<10} {}:{}  {}\n", info.id.str(), info.meta.provider, info.epoch.value(),
                 info.tail.value(), info.meta.title);
    }
  }
  return 0;
}

// `serve` with the store at `url`: the streams, the inbox and push keys live in the data
// directory whatever the store, unless it is in memory.
int Serve(agentstream::cli::ServeOptions& serve, const std::string& url, const std::string& data) {
  serve.store_url = url;
  if (url.rfind("memory:", 0) != 0) {
    EnsureDataDir(data);
    serve.streams_db = agentstream::streams::StreamsConfigFor(url, data).streams_db;
    serve.inbox_key_path = data + "/inbox.key";
    serve.vapid_key_path = data + "/vapid.key";
    serve.data_dir = data;
  }
  return agentstream::cli::RunServe(serve);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agentstream: runs coding agents and keeps every event in a durable session log"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return agentstream::cli::VersionText(); },
      "print the version, the commit and build type, and the stores compiled in");
  // Global options (--data, --store, --url, ...) may also follow the subcommand:
  // `agentstream serve --data DIR` as well as `agentstream --data DIR serve`.
  app.fallthrough();
  std::string data = DefaultDataDir();
  std::string store;
  app.add_option("--data", data, "data directory")->capture_default_str();
  app.add_option(
      "--store", store,
      "store URL (memory:, sqlite:PATH, postgresql://...); default: SQLite in the data directory");

  agentstream::cli::DemoOptions demo;
  auto* demo_cmd =
      app.add_subcommand("demo", "play a scripted agent session into the log and follow it live");
  demo_cmd->add_option("--turns", demo.turns, "scripted turns to play")->check(CLI::Range(1, 1000));
  demo_cmd->add_option("--delay-ms", demo.delay_ms, "pause between streamed deltas")
      ->check(CLI::Range(0, 10000));
  demo_cmd->add_flag("--json", demo.json, "print JSON envelopes");
  demo_cmd->add_flag("--stop-mid-turn", demo.stop_mid_turn,
                     "leave the last turn open, as a crash would (for `check`)");

  std::string session, from;
  int limit = 100;
  bool json = false;
  auto* events_cmd = app.add_subcommand("events", "print stored events of a session");
  events_cmd->add_option("session", session, "session id")->required();
  events_cmd->add_option("--from", from, "first cursor EPOCH:SEQ");
  events_cmd->add_option("--limit", limit, "events to print")->check(CLI::Range(1, 10000));
  events_cmd->add_flag("--json", json, "print JSON envelopes");

  agentstream::cli::CheckCommand check;
  auto* check_cmd = app.add_subcommand(
      "check", "check the turn invariants of stored sessions; exit 1 on any violation");
  check_cmd->add_option("session", check.session, "session id (default: every session)");
  check_cmd->add_flag("--allow-open", check.allow_open,
                      "a turn still running at a session's tail is not a violation");
  check_cmd->add_flag("--json", check.json, "print violations as JSON lines");

  agentstream::cli::ServeOptions serve;
  auto* serve_cmd = app.add_subcommand("serve", "run the daemon: HTTP and WebSocket on --listen");
  AddServerOptions(serve_cmd, serve);
  AddAgentOptions(serve_cmd, serve);
  AddStoreAndLogOptions(serve_cmd, serve);

  auto* sessions_cmd = app.add_subcommand("sessions", "list stored sessions");
  sessions_cmd->add_flag("--json", json, "print JSON");

  agentstream::cli::ClientCommands client_commands(app);
  agentstream::cli::ServiceCommands service_commands(app);
  agentstream::cli::StoreCommands store_commands(app);
  // --config and `config show`: the file's top-level keys set the global options, [serve] serve's.
  agentstream::cli::ConfigLayer config(app, {serve_cmd});

  try {
    config.Parse(argc, argv);  // app.parse, then the environment and the configuration file
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // 2: usage
  }
  if (auto code = client_commands.Run()) return *code;
  if (auto code = service_commands.Run(data)) return *code;
  if (auto code = config.Run()) return *code;
  const std::string url = StoreUrl(store, data);
  if (auto code = store_commands.Run(url, data)) return *code;
  if (*demo_cmd) {
    demo.store_url = url;
    return agentstream::cli::RunDemo(demo);
  }
  if (*serve_cmd) return Serve(serve, url, data);
  if (*events_cmd) return PrintEvents(url, session, from, limit, json);
  if (*check_cmd) {
    check.store_url = url;
    return agentstream::cli::RunCheck(check);
  }
  if (*sessions_cmd) return PrintSessions(url, json);
  return 0;
}
