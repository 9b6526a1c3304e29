// The generic Durable Streams on PostgreSQL, for several daemons sharing one database: the
// streams, their messages and producer states (OpenPostgresStreamStore), and the subscriptions
// with their leases and the signing and token keys (OpenPostgresSubscriptionRecords) live in
// tables of their own (`ds_*`, docs/event-log-format.md), so any daemon serves any stream.
//
// PostgreSQL is the source of truth; a daemon holds no stream in memory. Every mutation is one
// transaction that locks the rows of the streams it touches (`SELECT ... FOR UPDATE`, in path
// order, so two daemons never deadlock on each other) and reads their state under the locks, so
// Stream-Seq checks, idempotent producers (epoch/seq), closing, deletion and forks keep the
// protocol's rules exactly whichever daemon a request reaches. One writer thread per daemon
// commits appends group-wise: the appends queued since its last commit (up to max_batch_ops and
// max_batch_bytes) are decided and written in one transaction with a fixed number of statements.
// Creates and deletes are one transaction each. Reads are served from the database by a bounded
// pool of reader connections, on the caller's thread. Times (TTL, expiry, producer state age)
// are the database's clock (`clock_timestamp()`), never a daemon's.
//
// Acknowledged: a mutation's `done` runs on the writer thread after its transaction committed
// (the server's `synchronous_commit`, on by default: its WAL is flushed), so WhenDurable has
// nothing left to wait for.
//
// Failures: a statement that fails (a lost connection, a refusal) rolls the transaction back and
// its requests fail with kStorageDown (503, nothing was written); the next batch reconnects. A
// COMMIT whose answer is lost with the connection is not guessed: every write transaction stamps
// the writer's row in `ds_commit_stamps` (pg/commit_outcome.h), and the writer reconnects (with a
// multi-host conninfo, to the standby promoted meanwhile) and looks the stamp up, for up to
// `outcome_wait`. A transaction that landed is acknowledged as usual; one that did not fails with
// kStorageDown (nothing was written; a retry with the same Producer-Seq lands once). Only when
// the outcome still cannot be told after `outcome_wait` do its requests fail with
// kOutcomeUnknown (500); producers' retries are de-duplicated as usual. Nothing is sticky: the
// next request tries again. A daemon killed mid-append leaves the transaction uncommitted, and
// PostgreSQL rolls it back.
//
// Live readers: each commit announces the streams it changed with NOTIFY (one channel per
// schema, delivered when the commit is); every daemon LISTENs on a connection of its own and
// wakes its watchers (long-polls, SSE readers) and its change hook (the subscriptions). While
// that connection is down (reopened every second) live readers on this daemon see other
// daemons' appends at their next timeout (the long-poll timeout or the SSE idle interval); once
// it is back every watcher is woken once.
//
// Background work on the writer thread, about once a second: expired and deleted streams
// without live forks are removed (100 per pass), the messages of removed streams purged (4,096
// rows per pass), idle producer states dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"
#include "pg/setup.h"
#include "streams/stream_store.h"
#include "streams/subscription_records.h"

namespace agentstream::streams {

struct PostgresStreamsOptions {
  std::string conninfo;  // a libpq connection string or URL ("postgresql://user@host/db")
  std::string schema;    // tables live in this schema (created when missing); empty: the default
  StreamLimits limits;   // max_total_bytes does not apply: the data is the server's to hold
  std::size_t max_batch_ops = 1024;                     // appends committed in one transaction
  std::size_t max_batch_bytes = std::size_t{16} << 20;  // their bodies, at least one append
  std::size_t max_reader_connections = 4;  // concurrent reads beyond this wait for a connection
  // How long the writer keeps looking up a COMMIT whose answer was lost (every
  // pg::kOutcomePollInterval); later writes wait in the queue meanwhile.
  std::chrono::steady_clock::duration outcome_wait = std::chrono::seconds(60);
  // The server ends a writer transaction that waits this long for its next statement, and the
  // connection with it (pg::EndTransactionsIdleFor; docs/operations.md, "Limits").
  std::chrono::milliseconds writer_idle_in_transaction = pg::kWriterIdleInTransaction;
};

// The schema version this build writes (table ds_schema); older ones are brought up to it on open.
inline constexpr int kPostgresStreamsSchemaVersion = 2;

// Connects, creates the tables when missing (under an advisory lock) and starts the writer and
// listener threads. kUnavailable when the server cannot be reached; kUnsupportedVersion when
// the stored schema is newer than this build.
Result<std::unique_ptr<StreamStore>> OpenPostgresStreamStore(PostgresStreamsOptions options);

// The subscriptions of every daemon on the database (subscription_records.h): a change of one
// subscription is a transaction under a lock on its id, timed by the database's clock; the keys
// are created once (the first daemon to start) and shared. One connection, used by one change
// at a time. Open the stream store first (it creates the tables).
Result<std::unique_ptr<SubscriptionRecords>> OpenPostgresSubscriptionRecords(
    const PostgresStreamsOptions& options);

}  // namespace agentstream::streams
