#include "cli/store_cli.h"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <filesystem>

#include "store/copy/copy_conn.h"
#include "store/copy/store_copy.h"
#include "store/log_factory.h"
#include "store/sqlite/sqlite_backup.h"
#include "streams/streams_copy.h"
#include "streams/streams_factory.h"
#include "system/wall_clock.h"

namespace agentstream::cli {

namespace {

// 1 when the outcome is an I/O failure, 2 when the input was refused (the header's split).
int ExitCode(const Status& status) {
  const ErrorCode code = status.code();
  return code == ErrorCode::kIoError || code == ErrorCode::kInternal ? 1 : 2;
}

int Fail(const Status& status) {
  fmt::print(stderr, "agentstream: {}\n", status.message());
  return ExitCode(status);
}

double Seconds(TimestampMs since) {
  return static_cast<double>(system::WallClockMs() - since) / 1000.0;
}

// How often the progress of a copy is shown, at most (the last line of each phase always is).
constexpr TimestampMs kProgressEveryMs = 200;

// Shows a copy's progress on stderr: a line rewritten in place on a terminal, JSON lines with
// --json, nothing otherwise.
class CopyProgressView {
 public:
  CopyProgressView(bool json, TimestampMs start)
      : json_(json), tty_(isatty(STDERR_FILENO) == 1), start_(start) {}
  ~CopyProgressView() {
    if (tty_ && !json_ && shown_) fmt::print(stderr, "\n");
  }
  CopyProgressView(const CopyProgressView&) = delete;
  CopyProgressView& operator=(const CopyProgressView&) = delete;

  void Show(const CopyProgress& p) {
    if (!Due(p.phase, p.sessions_done, p.sessions_total, p.events_done)) return;
    const double seconds = Seconds();
    if (json_) {
      boost::json::object line{{"phase", p.phase},
                               {"sessions_done", p.sessions_done},
                               {"sessions_total", p.sessions_total},
                               {"events_done", p.events_done},
                               {"events_total", p.events_total},
                               {"seconds", seconds}};
      fmt::print(stderr, "{}\n", boost::json::serialize(line));
    } else if (tty_) {
      fmt::print(stderr, "\r\033[K{:<6} sessions {}/{}  events {}/{} ({:.0f}%)  {:.1f} s", p.phase,
                 p.sessions_done, p.sessions_total, p.events_done, p.events_total,
                 Percent(p.events_done, p.events_total), seconds);
      shown_ = true;
    }
  }

  void Show(const streams::StreamsCopyProgress& p) {
    if (!Due(p.phase, p.streams_done, p.streams_total, p.messages_done)) return;
    const double seconds = Seconds();
    if (json_) {
      boost::json::object line{{"phase", p.phase},
                               {"streams_done", p.streams_done},
                               {"streams_total", p.streams_total},
                               {"messages_done", p.messages_done},
                               {"messages_total", p.messages_total},
                               {"seconds", seconds}};
      fmt::print(stderr, "{}\n", boost::json::serialize(line));
    } else if (tty_) {
      fmt::print(stderr, "\r\033[K{:<14} streams {}/{}  messages {}/{} ({:.0f}%)  {:.1f} s",
                 p.phase, p.streams_done, p.streams_total, p.messages_done, p.messages_total,
                 Percent(p.messages_done, p.messages_total), seconds);
      shown_ = true;
    }
  }

 private:
  // True when a progress line is due: at most every kProgressEveryMs within a phase, and always
  // the first line of a phase and its last (`done` == `total`) once.
  bool Due(const std::string& phase, std::int64_t done, std::int64_t total, std::int64_t items) {
    const TimestampMs now = system::WallClockMs();
    const bool phase_end = done == total;
    if (phase == phase_ && !phase_end && now - last_ms_ < kProgressEveryMs) return false;
    if (phase == phase_ && phase_end && last_done_ == done && last_items_ == items) return false;
    phase_ = phase;
    last_ms_ = now;
    last_done_ = done;
    last_items_ = items;
    return true;
  }
  double Seconds() const { return static_cast<double>(last_ms_ - start_) / 1000.0; }
  static double Percent(std::int64_t done, std::int64_t total) {
    return total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  }

  bool json_;
  bool tty_;
  TimestampMs start_;
  std::string phase_;
  TimestampMs last_ms_ = 0;
  std::int64_t last_done_ = -1;
  std::int64_t last_items_ = -1;
  bool shown_ = false;
};

// The generic streams of a copy (streams/streams_copy.h), copied while CopyStore holds both
// stores: checked before anything is written, copied after the sessions.
class StreamsPart final : public CopyPart {
 public:
  StreamsPart(streams::StreamsConfig from, streams::StreamsConfig to,
              streams::StreamsCopyOptions options)
      : copy_(std::move(from), std::move(to), std::move(options)) {}

  Status Check() override { return copy_.Check(); }
  Status Copy() override {
    AS_ASSIGN_OR_RETURN(report_, copy_.Copy());
    return Status::Ok();
  }
  const streams::StreamsCopyReport& report() const { return report_; }

 private:
  streams::StreamsCopy copy_;
  streams::StreamsCopyReport report_;
};

// Where the streams of the store at `url` are: StreamsConfigFor with the data directory
// `data_dir`, else that of the SQLite file (where a daemon keeps it by default).
streams::StreamsConfig StreamsOf(const std::string& url, const std::string& data_dir) {
  std::string dir = data_dir;
  if (dir.empty()) {
    const std::optional<std::string> path = SqliteStorePath(url);
    if (path) dir = std::filesystem::absolute(*path).parent_path().string();
  }
  return streams::StreamsConfigFor(url, dir);
}

struct CopyRequest {
  std::string from, to;
  std::string from_data, to_data;  // the SQLite stores' data directories ("" when implied)
  bool merge = false;
  bool json = false;
};

void PrintJsonReport(const CopyReport& r, const streams::StreamsCopyReport& s, double seconds) {
  boost::json::array digests;
  for (const SessionDigest& d : r.digests)
    digests.push_back({{"session", d.session}, {"events", d.events}, {"sha256", d.sha256}});
  boost::json::array stream_digests;
  for (const streams::StreamDigest& d : s.digests) {
    stream_digests.push_back(
        {{"path", d.path}, {"messages", d.messages}, {"tail", d.tail}, {"sha256", d.sha256}});
  }
  boost::json::object out{{"sessions", r.sessions},
                          {"sessions_copied", r.sessions_copied},
                          {"events", r.events},
                          {"events_copied", r.events_copied},
                          {"table_rows", r.table_rows},
                          {"secrets_left", r.secrets_left},
                          {"streams", s.streams},
                          {"streams_copied", s.streams_copied},
                          {"streams_left", s.streams_left},
                          {"messages", s.messages},
                          {"messages_copied", s.messages_copied},
                          {"subscriptions", s.subscriptions},
                          {"subscriptions_copied", s.subscriptions_copied},
                          {"subscription_keys_copied", s.keys_copied},
                          {"seconds", seconds},
                          {"digests", std::move(digests)},
                          {"stream_digests", std::move(stream_digests)}};
  fmt::print("{}\n", boost::json::serialize(out));
}

void PrintTextReport(const CopyRequest& request, const CopyReport& r,
                     const streams::StreamsCopyReport& s, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(r.events_copied) / seconds : 0;
  for (const SessionDigest& d : r.digests)
    fmt::print("{}  {} events  sha256 {}\n", d.session, d.events, d.sha256);
  for (const streams::StreamDigest& d : s.digests)
    fmt::print("stream {}  {} messages  tail {}  sha256 {}\n", d.path, d.messages, d.tail,
               d.sha256);
  fmt::print(
      "copied {} of {} sessions, {} of {} events ({:.0f} events/s), {} rows of consumers, "
      "devices and secrets, from {} to {} in {:.2f} s; digests equal\n",
      r.sessions_copied, r.sessions, r.events_copied, r.events, rate, r.table_rows,
      store_copy::RedactUrl(request.from), store_copy::RedactUrl(request.to), seconds);
  fmt::print(
      "copied {} of {} streams, {} of {} messages, {} of {} subscriptions{}; digests equal\n",
      s.streams_copied, s.streams, s.messages_copied, s.messages, s.subscriptions_copied,
      s.subscriptions, s.keys_copied ? " and their keys" : "");
  if (s.streams_left > 0) {
    fmt::print("{} deleted or expired streams left behind (no fork reads through them)\n",
               s.streams_left);
  }
  if (r.secrets_left > 0) {
    fmt::print(
        "{} shared secrets not copied: a SQLite store keeps its keys in files of the data "
        "directory (docs/operations.md, \"Moving from SQLite to PostgreSQL\")\n",
        r.secrets_left);
  }
}

int RunCopy(const CopyRequest& request) {
  const TimestampMs start = system::WallClockMs();
  std::optional<CopyProgressView> view;
  view.emplace(request.json, start);
  StreamsPart streams(StreamsOf(request.from, request.from_data),
                      StreamsOf(request.to, request.to_data),
                      {.from_name = store_copy::RedactUrl(request.from),
                       .to_name = store_copy::RedactUrl(request.to),
                       .progress = [&](const streams::StreamsCopyProgress& p) { view->Show(p); }});
  Result<CopyReport> report = CopyStore(request.from, request.to,
                                        {.merge = request.merge,
                                         .progress = [&](const CopyProgress& p) { view->Show(p); },
                                         .part = &streams});
  view.reset();
  // Digests that differ after writing: not a refusal with nothing written.
  if (!report.ok() && report.status().code() == ErrorCode::kCorruption) {
    fmt::print(stderr, "agentstream: {}\n", report.status().message());
    return 1;
  }
  if (!report.ok()) return Fail(report.status());
  const double seconds = Seconds(start);
  if (request.json) {
    PrintJsonReport(*report, streams.report(), seconds);
  } else {
    PrintTextReport(request, *report, streams.report(), seconds);
  }
  return 0;
}

}  // namespace

struct StoreCommands::State {
  CLI::App* backup = nullptr;
  CLI::App* restore = nullptr;
  CLI::App* copy = nullptr;
  std::string to;
  std::string from;
  std::string from_data;
  std::string to_data;
  bool merge = false;
  bool json = false;
  int pages_per_step = SqliteBackupOptions{}.pages_per_step;
  bool force = false;
};

StoreCommands::StoreCommands(CLI::App& app) : state_(std::make_unique<State>()) {
  State& s = *state_;
  CLI::App* store = app.add_subcommand(
      "store",
      "back up the SQLite store while a daemon runs, restore it from a backup, or copy a store "
      "between SQLite and PostgreSQL");
  store->require_subcommand(1);
  s.backup = store->add_subcommand(
      "backup", "copy the store, as of one instant, to a new file (the daemon may keep running)");
  s.backup->add_option("--to", s.to, "the backup file to write (must not exist)")->required();
  s.backup
      ->add_option("--pages-per-step", s.pages_per_step,
                   "database pages copied per step of the online backup")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  s.restore = store->add_subcommand(
      "restore", "make the store a copy of a backup (no daemon may be running on it)");
  s.restore->add_option("--from", s.from, "the backup file to restore")->required();
  s.restore->add_flag("--force", s.force,
                      "replace a store that holds sessions (they are lost; back it up first)");
  s.copy = store->add_subcommand(
      "copy",
      "copy every session, consumer, device and generic stream of a store into another (SQLite "
      "or PostgreSQL); resumable, verified by digests; no daemon may serve either");
  s.copy->add_option("--from", s.from, "the store to copy (default: the configured store)");
  s.copy->add_option("--to", s.to, "the store to copy into (a SQLite file or postgresql:// URL)")
      ->required();
  s.copy->add_option("--from-data", s.from_data,
                     "the data directory of a SQLite --from, whose streams.db and "
                     "subscriptions.key are copied (default: --data for the configured store, "
                     "else the SQLite file's directory)");
  s.copy->add_option("--to-data", s.to_data,
                     "the data directory of a SQLite --to, where streams.db and subscriptions.key "
                     "are written (default: the SQLite file's directory)");
  s.copy->add_flag("--merge", s.merge,
                   "copy into a store that holds other sessions (same-id sessions must agree)");
  s.copy->add_flag("--json", s.json, "progress as JSON lines on stderr, the report as JSON");
}

StoreCommands::~StoreCommands() = default;

std::optional<int> StoreCommands::Run(const std::string& store_url,
                                      const std::string& data_dir) const {
  const State& s = *state_;
  if (*s.copy) {
    // The configured store's streams are in --data, as `serve` keeps them.
    const std::string from_data = !s.from_data.empty() ? s.from_data
                                  : s.from.empty()     ? data_dir
                                                       : "";
    return RunCopy({.from = s.from.empty() ? store_url : s.from,
                    .to = s.to,
                    .from_data = from_data,
                    .to_data = s.to_data,
                    .merge = s.merge,
                    .json = s.json});
  }
  if (!*s.backup && !*s.restore) return std::nullopt;
  const std::optional<std::string> path = SqliteStorePath(store_url);
  if (!path) {
    fmt::print(stderr,
               "agentstream: `store {}` works on a SQLite store; back up PostgreSQL with "
               "pg_dump or pg_basebackup (docs/operations.md, \"Backups\")\n",
               *s.backup ? "backup" : "restore");
    return 2;
  }
  const TimestampMs start = system::WallClockMs();
  if (*s.backup) {
    auto report = BackupSqliteStore(*path, s.to, {.pages_per_step = s.pages_per_step});
    if (!report.ok()) return Fail(report.status());
    const double mib = static_cast<double>(report->pages * report->page_size) / (1024.0 * 1024.0);
    fmt::print("backed up {} sessions ({} pages, {:.1f} MiB, {} steps) from {} to {} in {:.2f} s\n",
               report->sessions, report->pages, mib, report->steps, *path, s.to, Seconds(start));
    return 0;
  }
  auto report = RestoreSqliteStore(s.from, *path, {.force = s.force});
  if (!report.ok()) return Fail(report.status());
  fmt::print("restored {} sessions, {} events (schema version {}) from {} to {} in {:.2f} s",
             report->sessions, report->events, report->schema_version, s.from, *path,
             Seconds(start));
  if (report->replaced_sessions > 0)
    fmt::print("; replaced {} sessions", report->replaced_sessions);
  fmt::print("\n");
  return 0;
}

}  // namespace agentstream::cli
