// What every PostgreSQL store of the daemon shares (the session log, postgres_log.cc, and the
// generic streams, src/streams/postgres_streams*.cc): opening a connection into a schema, laying
// out and versioning its tables, the server's clock, literals and the text PostgreSQL can hold.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "pg/pg.h"

namespace agentstream::pg {

// The server's clock in milliseconds since the Unix epoch, as an SQL expression: leases, expiries
// and TTLs are judged by it, so the daemons sharing a database agree on time whatever their own
// clocks say.
inline constexpr std::string_view kServerNowMs =
    "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
// The same as one row of one bigint.
std::string ServerNowSql();

// `name` as an SQL identifier, quoted.
std::string QuoteIdentifier(const std::string& name);

// A text[] / bigint[] literal for `ANY($1::text[])`.
std::string TextArray(const std::vector<std::string>& items);
std::string IntArray(const std::vector<std::int64_t>& items);

// PostgreSQL text holds neither NUL bytes nor ill-formed UTF-8.
bool StorableText(std::string_view text);

// Opens a connection to `conninfo` named APPLICATION (or APPLICATION:SCHEMA) in
// pg_stat_activity, whose search_path is `schema` when one is given.
Result<Conn> ConnectTo(const std::string& conninfo, const std::string& application,
                       const std::string& schema);

// Has the server end `conn`'s transaction, and the connection with it, when the transaction
// waits `limit` for the next statement (idle_in_transaction_session_timeout). For a writer's
// connection: a daemon cut off in the middle of a transaction by a partition the server does not
// see would otherwise keep its row locks until the server's keepalive gives up on it.
Status EndTransactionsIdleFor(Conn& conn, std::chrono::milliseconds limit);
// The stores' default for their writers' EndTransactionsIdleFor (docs/operations.md, "Limits").
inline constexpr std::chrono::milliseconds kWriterIdleInTransaction = std::chrono::seconds(5);

// A store's tables and their versions.
struct SchemaLayout {
  std::int64_t lock_key = 0;  // of pg_advisory_xact_lock: one per layout
  // The table holding the version, one row.
  std::string version_table;
  // scripts[0] makes version 1 and the version table, idempotently (it runs at every opening);
  // scripts[i] goes from version i to i + 1.
  std::vector<const char*> scripts;
  // Names the tables in an error: "the database has", "the database's generic streams have".
  std::string what;
};

// Creates `schema` (when given) and brings its tables to the layout's newest version, in one
// transaction under the layout's advisory lock, so daemons starting together do it once.
// kUnsupportedVersion when the tables are newer than this build.
Status EnsureSchema(Conn& conn, const std::string& schema, const SchemaLayout& layout);

// A bounded pool of reader connections. Acquire waits for an idle connection, or opens one while
// fewer than `max` are open, in place of an idle one the server ended; Release gives it back, or
// drops it when it broke while in use, so the next Acquire opens another in its place.
class ReaderPool {
 public:
  ReaderPool(std::size_t max, std::function<Result<Conn>()> open)
      : max_(max), open_(std::move(open)) {}

  // The error of opening a connection when none was idle and opening failed.
  Result<Conn> Acquire();
  void Release(Conn conn);

 private:
  const std::size_t max_;
  const std::function<Result<Conn>()> open_;
  std::mutex mu_;  // guards idle_ and open_count_
  std::condition_variable freed_;
  std::vector<Conn> idle_;
  std::size_t open_count_ = 0;  // idle, in use, or being opened
};

}  // namespace agentstream::pg
