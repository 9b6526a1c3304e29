// PostgresEventLog: the EventLog on a PostgreSQL server, for several daemons sharing one database.
//
// The same rules as every backend (store/log_state.h) and the same row layout as SQLite: events
// are stored as record batches (store/record_batch.h) in `events`, one row per commit of one
// (session, epoch). Each of a daemon's writer connections (two by default) has a thread that
// commits group-wise: it takes the requests queued for it since its last commit (up to a bound),
// locks the sessions they touch (`SELECT ... FOR UPDATE`, in id order, so two writers never
// deadlock over appends), reads their state, writes the accepted appends in one transaction and
// acknowledges them after COMMIT. While a session has writes queued or committing, its new ones
// go to the same writer, so its commits keep the order they were queued in; a session with none
// goes to the first writer unless that one has a backlog, then to the next (so a light load
// makes few, large commits on one connection and a heavy one commits on all side by side, one's
// statements running while another's COMMIT waits for the server's WAL flush). Writes that
// belong to no one session (consumers, devices, schedules, the daemon registry, the indexes) go
// through the first.
// Because each transaction reads the sessions it writes under their row locks, appends from several
// daemons to one session keep dense seqs, expected-seq checks and producer de-duplication exact. A
// commit is two round trips in libpq's pipeline mode: BEGIN with the statements that lock and read
// the sessions, then the writes (one statement per table, many rows each), the NOTIFY, the commit
// stamp and COMMIT.
//
// Durability::kFsync: the server's `synchronous_commit = on` (COMMIT returns once the server's WAL
// is flushed). Durability::kOs: `synchronous_commit = off` (a server crash may lose the latest
// acknowledged commits; never a daemon crash).
//
// Failures: a statement that fails inside a batch rolls the whole batch back (its requests fail
// with kUnavailable, nothing was written; the server runs nothing of a pipeline after a failed
// statement) and the writer reconnects when the connection is gone; a connection the server ended
// while its writer was idle is reopened before the next batch. A COMMIT whose answer is lost
// with the connection is not guessed: the writer reconnects (with a multi-host conninfo, to the
// standby promoted meanwhile) and looks up the batch's commit stamp (pg/commit_outcome.h), for up
// to `outcome_wait`. A batch that landed is acknowledged as usual; one that did not fails with
// kUnavailable (nothing was written; a retry with the same producer ids is safe either way). Only
// when the outcome still cannot be told after `outcome_wait` does the batch fail with kIoError
// ("outcome unknown"); the log then refuses writes (kUnavailable) until a later attempt tells it,
// and takes them again without a reopen.
//
// Commit notices (SubscribeCommits) report this daemon's commits at once and the other daemons'
// through LISTEN/NOTIFY (one channel per schema, announced inside each commit). While the
// listening connection is down (it is reopened every second), another daemon's commits reach
// this daemon's live readers with the session's next commit or read.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "pg/setup.h"
#include "store/event_log.h"

namespace agentstream {

struct PostgresLogOptions {
  std::string conninfo;  // a libpq connection string or URL ("postgres://user@host/db")
  std::string schema;    // tables live in this schema (created when missing); empty: the default
  Durability durability = Durability::kFsync;
  LogLimits limits;
  // AppendAsync blocks while this many wait (shared evenly among the writer connections).
  std::size_t max_queued_requests = 16384;
  std::size_t max_batch_requests = 4096;   // requests committed in one transaction
  std::size_t max_reader_connections = 4;  // concurrent reads beyond this wait
  // Writer connections, each with a thread of its own committing group-wise; the next is used
  // when the ones before it have a backlog. 1 to kMaxWriterConnections.
  std::size_t writer_connections = 2;
  // Reader connections one search runs on at once, each reading a share of the index's
  // partitions on a thread of the log's own (search_index.h): 1 to kSearchPartitions, at most
  // max_reader_connections; 0: the machine's hardware threads, within those bounds.
  std::size_t search_slices = 0;
  // How long the writer keeps reconnecting to learn whether a COMMIT whose answer was lost
  // landed, while later writes wait in the queue (docs/operations.md, "High availability").
  std::chrono::steady_clock::duration outcome_wait = std::chrono::seconds(60);
  // The server ends a writer transaction that waits this long for its next statement, and the
  // connection with it: a daemon cut off mid-commit by a partition the server does not see leaves
  // no session rows locked for the next owner (pg::EndTransactionsIdleFor; docs/operations.md,
  // "Limits").
  std::chrono::milliseconds writer_idle_in_transaction = pg::kWriterIdleInTransaction;
};

// Connects and creates the schema when missing. Errors: kUnavailable when the server cannot be
// reached, kUnsupportedVersion when the stored schema is newer than this build.
Result<std::unique_ptr<EventLog>> OpenPostgresEventLog(PostgresLogOptions options);

// The most writer connections a log opens (PostgresLogOptions::writer_connections).
inline constexpr std::size_t kMaxWriterConnections = 8;

// The schema version this build writes (table agentstream_schema).
inline constexpr int kPostgresSchemaVersion = 10;

}  // namespace agentstream
