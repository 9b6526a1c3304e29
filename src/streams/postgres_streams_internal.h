// Internal to the PostgreSQL streams (postgres_streams.h): the schema, connections, a stream row
// as a value, and the reads shared by the writer's transactions and the readers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "pg/pg.h"
#include "pg/setup.h"
#include "streams/postgres_streams.h"
#include "streams/stream_model.h"
#include "streams/stream_store.h"

namespace agentstream::streams::pgs {

// What every PostgreSQL store shares (pg/setup.h): the database's clock in Unix
// milliseconds as an SQL expression, identifiers, array literals, storable text.
using pg::IntArray;
using pg::QuoteIdentifier;
using pg::StorableText;
using pg::TextArray;
inline constexpr std::string_view kNowMs = pg::kServerNowMs;

// The columns of ds_streams in the order RowAt reads them, each prefixed with `table` ("s."
// or ""), followed by the database's clock when `with_now`.
std::string RowColumns(std::string_view table = "", bool with_now = true);

// One stream row (its producer states are loaded apart, when needed).
struct Row {
  StreamMeta meta;
  std::optional<std::int64_t> forked_from_id;
  Offset tail;
  std::int64_t last_access_ms = 0;
  std::int64_t now_ms = 0;  // the database's clock when the row was read

  // Deleted or expired: what is left reads through for forks only.
  bool Dead() const;
};

Row RowAt(const pg::Rows& rows, int i, int first = 0);

// Connects and prepares a connection for `options.schema`; `writer` connections keep the
// server's synchronous_commit, readers turn it off (they only write sliding-TTL accesses).
Result<pg::Conn> Connect(const PostgresStreamsOptions& options, bool writer);
// Creates the tables when missing, under an advisory lock; checks the schema version.
Status EnsureSchema(pg::Conn& conn, const std::string& schema);
// The NOTIFY channel of the streams in `schema`.
std::string Channel(const std::string& schema);

// The NOTIFY payloads announcing changes of `paths`: each path, or "*" (wake every watcher) for
// one too long for a payload.
std::vector<std::string> NoticePayloads(const std::vector<std::string>& paths);
inline constexpr std::string_view kWakeAll = "*";

// True when stream `id` still has a live fork: one not deleted or expired, or one that is but
// has a live fork itself (it reads through).
Result<bool> HasLiveForks(pg::Conn& conn, std::int64_t id, std::int64_t now_ms);

// The stream at `path` with its ancestors (the sources it reads through), nearest first; empty
// when it does not exist. Read without locks.
Result<std::vector<Row>> Chain(pg::Conn& conn, const std::string& path);

// Reads messages of `chain` (a stream and its sources, nearest first, as Chain returns) after
// `after` up to `cap`, at most `max_bytes` (at least one message) and `max_messages`, into `out`.
Status ReadMessages(pg::Conn& conn, const std::vector<Row>& chain, std::optional<Offset> after,
                    Offset cap, std::size_t max_bytes, std::size_t max_messages, ReadResult* out);

// ---- the writer's transactions (postgres_streams_write.cc) ----
// Each runs its statements inside a transaction the caller began and leaves it open: the caller
// announces `changed` (NOTIFY) and commits, or rolls back on an error. An error means a
// statement failed: nothing of the transaction may be kept.

struct AppendOp {
  AppendArgs args;
  OpResult result;  // set by AppendBatch
};

// Decides and writes `ops` in order, and announces what changed on `channel`: a lock
// statement, one more when producers append, then one statement for every write (more only
// for a batch past the protocol's parameter limit).
Status AppendBatch(pg::Conn& conn, const StreamLimits& limits, const std::string& channel,
                   std::vector<AppendOp>& ops, std::vector<std::string>* changed);
// kConflict when another daemon created the same path meanwhile (roll back and retry).
Status CreateStream(pg::Conn& conn, const StreamLimits& limits, const CreateArgs& args,
                    OpResult* out, std::vector<std::string>* changed);
Status DeleteStream(pg::Conn& conn, const std::string& path, OpResult* out,
                    std::vector<std::string>* changed);
// Removes the stream at `path` if it is deleted or expired and no fork reads through it.
Status RemoveIfDead(pg::Conn& conn, const std::string& path, std::vector<std::string>* changed);

}  // namespace agentstream::streams::pgs
