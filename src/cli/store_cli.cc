#include "cli/store_cli.h"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include "store/copy/copy_conn.h"
#include "store/copy/store_copy.h"
#include "store/log_factory.h"
#include "store/sqlite/sqlite_backup.h"
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
    const TimestampMs now = system::WallClockMs();
    const bool phase_end = p.sessions_done == p.sessions_total;
    if (p.phase == phase_ && !phase_end && now - last_ms_ < kProgressEveryMs) return;
    if (p.phase == phase_ && phase_end && last_done_ == p.sessions_done &&
        last_events_ == p.events_done)
      return;
    phase_ = p.phase;
    last_ms_ = now;
    last_done_ = p.sessions_done;
    last_events_ = p.events_done;
    const double seconds = static_cast<double>(now - start_) / 1000.0;
    if (json_) {
      boost::json::object line{{"phase", p.phase},
                               {"sessions_done", p.sessions_done},
                               {"sessions_total", p.sessions_total},
                               {"events_done", p.events_done},
                               {"events_total", p.events_total},
                               {"seconds", seconds}};
      fmt::print(stderr, "{}\n", boost::json::serialize(line));
    } else if (tty_) {
      const double percent = p.events_total > 0 ? 100.0 * static_cast<double>(p.events_done) /
                                                      static_cast<double>(p.events_total)
                                                : 100.0;
      fmt::print(stderr, "\r\033[K{:<6} sessions {}/{}  events {}/{} ({:.0f}%)  {:.1f} s", p.phase,
                 p.sessions_done, p.sessions_total, p.events_done, p.events_total, percent,
                 seconds);
      shown_ = true;
    }
  }

 private:
  bool json_;
  bool tty_;
  TimestampMs start_;
  std::string phase_;
  TimestampMs last_ms_ = 0;
  std::int64_t last_done_ = -1;
  std::int64_t last_events_ = -1;
  bool shown_ = false;
};

int RunCopy(const std::string& from, const std::string& to, bool merge, bool json) {
  const TimestampMs start = system::WallClockMs();
  Result<CopyReport> report = [&] {
    CopyProgressView view(json, start);
    return CopyStore(from, to,
                     {.merge = merge, .progress = [&](const CopyProgress& p) { view.Show(p); }});
  }();
  // Digests that differ after writing: not a refusal with nothing written.
  if (!report.ok() && report.status().code() == ErrorCode::kCorruption) {
    fmt::print(stderr, "agentstream: {}\n", report.status().message());
    return 1;
  }
  if (!report.ok()) return Fail(report.status());
  const double seconds = Seconds(start);
  const double rate = seconds > 0 ? static_cast<double>(report->events_copied) / seconds : 0;
  if (json) {
    boost::json::array digests;
    for (const SessionDigest& d : report->digests)
      digests.push_back({{"session", d.session}, {"events", d.events}, {"sha256", d.sha256}});
    boost::json::object out{{"sessions", report->sessions},
                            {"sessions_copied", report->sessions_copied},
                            {"events", report->events},
                            {"events_copied", report->events_copied},
                            {"table_rows", report->table_rows},
                            {"secrets_left", report->secrets_left},
                            {"seconds", seconds},
                            {"digests", std::move(digests)}};
    fmt::print("{}\n", boost::json::serialize(out));
    return 0;
  }
  for (const SessionDigest& d : report->digests)
    fmt::print("{}  {} events  sha256 {}\n", d.session, d.events, d.sha256);
  fmt::print(
      "copied {} of {} sessions, {} of {} events ({:.0f} events/s), {} rows of consumers, "
      "devices and secrets, from {} to {} in {:.2f} s; digests equal\n",
      report->sessions_copied, report->sessions, report->events_copied, report->events, rate,
      report->table_rows, store_copy::RedactUrl(from), store_copy::RedactUrl(to), seconds);
  if (report->secrets_left > 0) {
    fmt::print(
        "{} shared secrets not copied: a SQLite store keeps its keys in files of the data "
        "directory (docs/operations.md, \"Moving from SQLite to PostgreSQL\")\n",
        report->secrets_left);
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
      "copy every session, consumer and device of a store into another (SQLite or "
      "PostgreSQL); resumable, verified by digests; no daemon may serve either");
  s.copy->add_option("--from", s.from, "the store to copy (default: the configured store)");
  s.copy->add_option("--to", s.to, "the store to copy into (a SQLite file or postgresql:// URL)")
      ->required();
  s.copy->add_flag("--merge", s.merge,
                   "copy into a store that holds other sessions (same-id sessions must agree)");
  s.copy->add_flag("--json", s.json, "progress as JSON lines on stderr, the report as JSON");
}

StoreCommands::~StoreCommands() = default;

std::optional<int> StoreCommands::Run(const std::string& store_url) const {
  const State& s = *state_;
  if (*s.copy) return RunCopy(s.from.empty() ? store_url : s.from, s.to, s.merge, s.json);
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
