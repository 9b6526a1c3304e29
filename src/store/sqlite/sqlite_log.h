// SqliteEventLog: the embedded, durable EventLog (the default store).
//
// One database file in WAL mode. A single writer thread owns the write connection and commits
// group-wise: it takes every request queued since its last commit (up to a bound), checks each
// against the log's rules, writes the accepted ones in one transaction, commits once, and only
// then acknowledges them. One fsync thus covers many appends from many sessions. Readers use
// their own connections and see only committed events.
//
// Durability::kFsync (default): the WAL is fsynced before an append is acknowledged or readable;
// acknowledged events survive kill -9 and power loss. Syncs overlap the next commit's writes
// (SqliteLogOptions::overlap_syncs).
// Durability::kOs: `synchronous=NORMAL`; acknowledged events are in the OS page cache; they
// survive kill -9 of the daemon but a power loss may lose the most recent ones.
//
// A failed COMMIT (for example an fsync error) has an unknown outcome: the appends of that batch
// fail with kIoError and the log refuses further writes with kUnavailable until it is reopened.
// Reopening reads the file as it is; everything acknowledged before the failure is there.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "store/event_log.h"

namespace agentstream {

struct SqliteLogOptions {
  std::string path;  // the database file; created when missing
  Durability durability = Durability::kFsync;
  LogLimits limits;
  // The SQLite VFS (registered by name) every connection and every sync of the log goes through;
  // empty: the default one.
  std::string vfs;
  std::size_t max_queued_requests = 16384;  // AppendAsync blocks while this many wait
  std::size_t max_batch_requests = 4096;    // requests committed in one transaction
  // When fewer requests wait than the last commit took, the writer waits up to this long for the
  // writers it just acknowledged to come back, so that they share one commit (0: never wait).
  int commit_linger_micros = 200;
  // With Durability::kFsync: sync each commit on a second thread while the writer prepares the
  // next one (SQLite commits with synchronous=OFF; WalSyncer fdatasyncs the WAL before any append
  // of the commit is acknowledged or visible to readers). false: sync inside COMMIT
  // (synchronous=FULL), one commit at a time.
  bool overlap_syncs = true;
  // With overlap_syncs: a commit of fewer requests than this syncs inside COMMIT when no other
  // sync is running (a few appends gain nothing from the overlap and would pay a thread hop).
  std::size_t min_overlapped_requests = 128;
  std::size_t max_cached_sessions = 100000;  // writer's session cache; reloaded on demand
  std::size_t max_reader_connections = 4;    // concurrent reads beyond this wait
  // Reader connections one search runs on at once, each reading a share of the index's parts on
  // a thread of the log's own (search_index.h): 1 to kSearchPartitions, at most
  // max_reader_connections; 0: the machine's hardware threads, within those bounds.
  std::size_t search_slices = 0;
};

// Opens (creating when missing) the log at options.path. Errors: kUnavailable when the file
// cannot be opened, kUnsupportedVersion when its schema is newer than this build, kCorruption
// when it is not a database.
Result<std::unique_ptr<EventLog>> OpenSqliteEventLog(SqliteLogOptions options);

// The schema version this build writes (PRAGMA user_version). Opening an older file migrates it
// in place (version 2 adds the consumers table, version 3 agent ownership, version 4 checkpoints,
// version 5 the timeline's durable item index, version 6 the search index, version 9 splits it
// into four tables, version 10 paired devices, version 11 schedules; docs/event-log-format.md
// lists them all).
inline constexpr int kSqliteSchemaVersion = 11;

}  // namespace agentstream
