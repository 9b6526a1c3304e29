#include "cli/store_cli.h"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

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

}  // namespace

struct StoreCommands::State {
  CLI::App* backup = nullptr;
  CLI::App* restore = nullptr;
  std::string to;
  std::string from;
  int pages_per_step = SqliteBackupOptions{}.pages_per_step;
  bool force = false;
};

StoreCommands::StoreCommands(CLI::App& app) : state_(std::make_unique<State>()) {
  State& s = *state_;
  CLI::App* store = app.add_subcommand(
      "store", "back up the SQLite store while a daemon runs, or restore it from a backup");
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
}

StoreCommands::~StoreCommands() = default;

std::optional<int> StoreCommands::Run(const std::string& store_url) const {
  const State& s = *state_;
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
