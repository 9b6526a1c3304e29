// Backup and restore of the SQLite store (docs/operations.md, "Backups"): `agentstream store
// backup` and `store restore` (src/cli/store_cli.h) are thin shells over these two functions.
//
// A backup is a consistent copy of the store as of one instant, taken while a daemon appends to
// it. It copies the file with SQLite's online backup API a bounded number of pages per step, all
// steps inside one read transaction of the source connection. In WAL mode (the store's mode) a
// reader never blocks the writer, so appends go on throughout; and because the snapshot stays
// open, the copy never restarts when the daemon commits between steps (a backup that let each
// step start a new read would restart on every commit of a busy daemon, and might never end).
// The price: the daemon's passive checkpoints cannot recycle the WAL past that snapshot, so the
// WAL grows by what is appended while the backup runs (the file keeps that size; SQLite writes it
// from its start again after the first checkpoint that follows the backup).
//
// Neither function touches the file they write until it is complete: each writes a temporary
// file beside its target, syncs it and renames it into place, so a crash or a full disk leaves
// the target as it was.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"

namespace agentstream {

struct SqliteBackupOptions {
  // Pages copied per sqlite3_backup_step (4 MiB at SQLite's default 4 KiB pages); at least 1.
  // Between steps the backup gives the CPU and the disk back for a moment.
  int pages_per_step = 1024;
  // Called on the calling thread after every step that left pages to copy, with the pages left
  // and the pages in all (for a progress line); may be empty.
  std::function<void(std::int64_t remaining, std::int64_t total)> progress;
};

struct SqliteBackupReport {
  std::int64_t pages = 0;      // pages in the copy
  std::int64_t page_size = 0;  // bytes per page
  std::int64_t steps = 0;      // sqlite3_backup_step calls, the last (SQLITE_DONE) included
  std::int64_t sessions = 0;   // sessions in the copy
};

// Copies the store at `store_path` to a new file `backup_path` (in rollback-journal mode: one
// self-contained file). Safe while a daemon or any other process writes to the store. Errors:
// kAlreadyExists when `backup_path` exists (an earlier backup is never overwritten); kNotFound
// when there is no file at `store_path`; kCorruption when it is not a SQLite database;
// kInvalidArgument when `pages_per_step` < 1; kIoError when reading or writing fails (a full
// disk among them): then nothing is left at `backup_path`.
Result<SqliteBackupReport> BackupSqliteStore(const std::string& store_path,
                                             const std::string& backup_path,
                                             const SqliteBackupOptions& options = {});

struct SqliteRestoreOptions {
  // Replace a destination that holds sessions (they are lost). Without it such a restore is
  // refused; an empty store or a missing file is replaced either way.
  bool force = false;
};

struct SqliteRestoreReport {
  std::int64_t schema_version = 0;     // PRAGMA user_version of the backup
  std::int64_t sessions = 0;           // sessions restored
  std::int64_t events = 0;             // events restored, in every epoch
  std::int64_t replaced_sessions = 0;  // sessions the destination held before (with `force`)
};

// Makes `store_path` a copy of the backup at `backup_path`. The backup is copied to a temporary
// file beside `store_path`, which must pass `PRAGMA integrity_check` and carry a schema version
// this build reads before it is renamed over `store_path`; a store of an older version is
// migrated by the daemon when it opens it. While it runs, the destination is held with an
// exclusive lock, so no daemon can open it meanwhile.
//
// Errors (the destination is unchanged after each): kNotFound when there is no file at
// `backup_path`; kUnavailable when it cannot be read, or when another process (a daemon, a
// `check`) has the destination open; kCorruption when the backup is not a SQLite database or
// fails the integrity check, or when the destination is not one; kInvalidArgument when the
// backup is a SQLite database but not an agentstream store; kUnsupportedVersion when its schema
// is newer than this build's (kSqliteSchemaVersion); kAlreadyExists when the destination holds
// sessions and `force` is not set, or when it is missing but its WAL (`store_path`-wal) is not;
// kIoError when writing fails (a full disk among them).
Result<SqliteRestoreReport> RestoreSqliteStore(const std::string& backup_path,
                                               const std::string& store_path,
                                               const SqliteRestoreOptions& options = {});

}  // namespace agentstream
