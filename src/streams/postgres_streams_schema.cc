// The PostgreSQL streams' tables, connections, and the reads both the writer and the readers
// make: a stream's row and the sources it reads through, whether forks still read through a
// stream, and a bounded read of messages across a fork chain.
#include <algorithm>
#include <set>

#include "streams/postgres_streams_internal.h"
#include "streams/stream_rules.h"

namespace agentstream::streams::pgs {

using pg::Conn;
using pg::Param;
using pg::Rows;

namespace {

// Version 1. Offsets are (read_seq, byte_pos) pairs; times are Unix milliseconds of the
// database's clock. Messages of removed streams are purged later (ds_dead); ids are never reused.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS ds_schema(version integer NOT NULL);
CREATE TABLE IF NOT EXISTS ds_streams(
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  path text NOT NULL UNIQUE,
  content_type text NOT NULL,
  ttl_seconds bigint,
  expires_at text,
  expires_at_ms bigint,
  created_ms bigint NOT NULL,
  last_access_ms bigint NOT NULL,
  closed boolean NOT NULL,
  closed_by_producer text,
  closed_by_epoch bigint,
  closed_by_seq bigint,
  forked_from text,
  forked_from_id bigint,
  fork_read_seq bigint NOT NULL,
  fork_byte_pos bigint NOT NULL,
  fork_sub_offset bigint NOT NULL,
  soft_deleted boolean NOT NULL,
  last_stream_seq text,
  tail_read_seq bigint NOT NULL,
  tail_byte_pos bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS ds_streams_forks ON ds_streams(forked_from_id)
  WHERE forked_from_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS ds_streams_expiring ON ds_streams(id)
  WHERE soft_deleted OR ttl_seconds IS NOT NULL OR expires_at_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS ds_messages(
  stream_id bigint NOT NULL,
  read_seq bigint NOT NULL,
  byte_pos bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY(stream_id, read_seq, byte_pos)
);
CREATE TABLE IF NOT EXISTS ds_producers(
  stream_id bigint NOT NULL,
  producer text NOT NULL,
  epoch bigint NOT NULL,
  last_seq bigint NOT NULL,
  updated_ms bigint NOT NULL,
  PRIMARY KEY(stream_id, producer)
);
CREATE TABLE IF NOT EXISTS ds_dead(stream_id bigint PRIMARY KEY);
CREATE TABLE IF NOT EXISTS ds_subscriptions(
  id text PRIMARY KEY,
  pattern text NOT NULL,
  paths text[] NOT NULL,
  record text NOT NULL
);
CREATE INDEX IF NOT EXISTS ds_subscriptions_paths ON ds_subscriptions USING gin(paths);
CREATE TABLE IF NOT EXISTS ds_keys(name text PRIMARY KEY, value bytea NOT NULL);
)sql";

// Version 2 adds the writers' commit stamps (pg/commit_outcome.h): each daemon's writer stamps
// its row in every write transaction, so a write whose COMMIT answer was lost is looked up, not
// guessed.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS ds_commit_stamps(
  writer text PRIMARY KEY,
  batch bigint NOT NULL,
  stamped_ms bigint NOT NULL
);
)sql";

constexpr const char* kColumns[] = {"id",
                                    "path",
                                    "content_type",
                                    "ttl_seconds",
                                    "expires_at",
                                    "expires_at_ms",
                                    "created_ms",
                                    "last_access_ms",
                                    "closed",
                                    "closed_by_producer",
                                    "closed_by_epoch",
                                    "closed_by_seq",
                                    "forked_from",
                                    "forked_from_id",
                                    "fork_read_seq",
                                    "fork_byte_pos",
                                    "fork_sub_offset",
                                    "soft_deleted",
                                    "last_stream_seq",
                                    "tail_read_seq",
                                    "tail_byte_pos"};
constexpr int kColumnCount = sizeof kColumns / sizeof kColumns[0];

bool Bool(const Rows& r, int row, int col) { return r.Text(row, col) == "t"; }

std::optional<std::string> OptText(const Rows& r, int row, int col) {
  if (r.IsNull(row, col)) return std::nullopt;
  return r.Text(row, col);
}

std::uint64_t U64(const Rows& r, int row, int col) {
  return static_cast<std::uint64_t>(r.Int(row, col));
}

}  // namespace

std::string RowColumns(std::string_view table, bool with_now) {
  std::string out;
  for (const char* column : kColumns) {
    if (!out.empty()) out += ", ";
    out.append(table).append(column);
  }
  if (with_now) out.append(", ").append(kNowMs);
  return out;
}

bool Row::Dead() const { return meta.soft_deleted || Expired(meta, last_access_ms, now_ms); }

Row RowAt(const Rows& r, int i, int f) {
  Row row;
  StreamMeta& m = row.meta;
  m.id = r.Int(i, f + 0);
  m.path = r.Text(i, f + 1);
  m.content_type = r.Text(i, f + 2);
  if (!r.IsNull(i, f + 3)) m.ttl_seconds = r.Int(i, f + 3);
  m.expires_at = OptText(r, i, f + 4);
  m.expires_at_ms = r.IsNull(i, f + 5) ? 0 : r.Int(i, f + 5);
  m.created_ms = r.Int(i, f + 6);
  row.last_access_ms = r.Int(i, f + 7);
  m.closed = Bool(r, i, f + 8);
  if (!r.IsNull(i, f + 9))
    m.closed_by = ClosedBy{r.Text(i, f + 9), U64(r, i, f + 10), U64(r, i, f + 11)};
  m.forked_from = OptText(r, i, f + 12);
  if (!r.IsNull(i, f + 13)) row.forked_from_id = r.Int(i, f + 13);
  m.fork_offset = Offset{U64(r, i, f + 14), U64(r, i, f + 15)};
  m.fork_sub_offset = U64(r, i, f + 16);
  m.soft_deleted = Bool(r, i, f + 17);
  m.last_stream_seq = OptText(r, i, f + 18);
  row.tail = Offset{U64(r, i, f + 19), U64(r, i, f + 20)};
  row.now_ms = r.Int(i, f + kColumnCount);
  return row;
}

std::string Channel(const std::string& schema) {
  return schema.empty() ? "agentstream_ds" : "agentstream_ds:" + schema;
}

std::vector<std::string> NoticePayloads(const std::vector<std::string>& paths) {
  // A NOTIFY payload holds less than 8000 bytes.
  constexpr std::size_t kMaxNoticePath = 7900;
  std::set<std::string> payloads;
  for (const std::string& path : paths)
    payloads.insert(path.size() <= kMaxNoticePath ? path : std::string(kWakeAll));
  return {payloads.begin(), payloads.end()};
}

Result<Conn> Connect(const PostgresStreamsOptions& options, bool writer) {
  AS_ASSIGN_OR_RETURN(Conn conn, pg::ConnectTo(options.conninfo, "agentstream-ds", options.schema));
  // Readers write nothing but sliding-TTL accesses, whose loss in a server crash is harmless.
  if (!writer) AS_RETURN_IF_ERROR(conn.ExecScript("SET synchronous_commit TO off"));
  if (writer)
    AS_RETURN_IF_ERROR(pg::EndTransactionsIdleFor(conn, options.writer_idle_in_transaction));
  return conn;
}

Status EnsureSchema(Conn& conn, const std::string& schema) {
  static_assert(kPostgresStreamsSchemaVersion == 2, "a script for each version");
  static const pg::SchemaLayout kLayout{
      0x64737472656d31,  // "dstrem1": serializes daemons starting together
      "ds_schema",
      {kSchemaV1, kSchemaV2},
      "the database's generic streams have",
  };
  return pg::EnsureSchema(conn, schema, kLayout);
}

Result<bool> HasLiveForks(Conn& conn, std::int64_t id, std::int64_t now_ms) {
  constexpr const char* kDead =
      "(soft_deleted OR (expires_at_ms IS NOT NULL AND expires_at_ms <= $2) OR "
      "(ttl_seconds IS NOT NULL AND last_access_ms + ttl_seconds * 1000 <= $2))";
  const std::string sql = std::string("WITH RECURSIVE d(id, dead) AS (SELECT id, ") + kDead +
                          " FROM ds_streams WHERE forked_from_id = $1 UNION ALL SELECT s.id, " +
                          kDead +
                          " FROM ds_streams s JOIN d ON s.forked_from_id = d.id WHERE d.dead) "
                          "SELECT EXISTS(SELECT 1 FROM d WHERE NOT dead)";
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec({sql, {Param(id), Param(now_ms)}, /*reuse=*/true}));
  return r.size() > 0 && r.Text(0, 0) == "t";
}

Result<std::vector<Row>> Chain(Conn& conn, const std::string& path) {
  const std::string sql =
      "WITH RECURSIVE chain AS (SELECT 0 AS depth, " + RowColumns("", false) +
      " FROM ds_streams WHERE path = $1 UNION ALL SELECT c.depth + 1, " + RowColumns("s.", false) +
      " FROM ds_streams s JOIN chain c ON s.id = c.forked_from_id WHERE c.depth < 10000) SELECT " +
      RowColumns("", true) + " FROM chain ORDER BY depth";
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec({sql, {path}, /*reuse=*/true}));
  std::vector<Row> chain;
  chain.reserve(static_cast<std::size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) chain.push_back(RowAt(r, i));
  return chain;
}

Status ReadMessages(Conn& conn, const std::vector<Row>& chain, std::optional<Offset> after,
                    Offset cap, std::size_t max_bytes, std::size_t max_messages, ReadResult* out) {
  // The stream's own messages, then (read first) those of each source up to the fork offset of
  // the stream that reads through it, while `after` lies before that fork offset.
  std::vector<std::pair<const Row*, Offset>> segments;
  Offset c = cap;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    segments.emplace_back(&chain[k], c);
    const Row& r = chain[k];
    if (!r.forked_from_id || k + 1 >= chain.size() || chain[k + 1].meta.id != *r.forked_from_id)
      break;
    if (after && !(*after < r.meta.fork_offset)) break;
    c = std::min(c, r.meta.fork_offset);
  }
  std::reverse(segments.begin(), segments.end());
  const Offset from = after.value_or(Offset{});
  const std::int64_t from_seq = after ? static_cast<std::int64_t>(from.read_seq) : -1;
  const std::int64_t from_pos = after ? static_cast<std::int64_t>(from.byte_pos) : -1;
  std::size_t bytes = 0;
  for (const auto& [row, segment_cap] : segments) {
    if (!out->up_to_date) return Status::Ok();
    const std::size_t room = max_messages - std::min(max_messages, out->messages.size());
    if (room == 0 || (bytes >= max_bytes && !out->messages.empty())) {
      out->up_to_date = false;
      return Status::Ok();
    }
    const auto budget = static_cast<std::int64_t>(bytes < max_bytes ? max_bytes - bytes : 1);
    AS_ASSIGN_OR_RETURN(
        Rows r,
        conn.Exec(pg::Statement{
            "SELECT read_seq, byte_pos, CASE WHEN before < $6 THEN data END FROM (SELECT "
            "read_seq, byte_pos, data, sum(octet_length(data)) OVER (ORDER BY read_seq, "
            "byte_pos) - octet_length(data) AS before FROM (SELECT read_seq, byte_pos, data FROM "
            "ds_messages WHERE stream_id = $1 AND (read_seq, byte_pos) > ($2, $3) AND "
            "(read_seq, byte_pos) <= ($4, $5) ORDER BY read_seq, byte_pos LIMIT $7) m) w "
            "ORDER BY read_seq, byte_pos",
            {Param(row->meta.id), Param(from_seq), Param(from_pos),
             Param(static_cast<std::int64_t>(segment_cap.read_seq)),
             Param(static_cast<std::int64_t>(segment_cap.byte_pos)), Param(budget),
             Param(static_cast<std::int64_t>(room + 1))},
            /*reuse=*/true}));
    for (int i = 0; i < r.size(); ++i) {
      if (r.IsNull(i, 2) || static_cast<std::size_t>(i) == room) {
        out->up_to_date = false;
        return Status::Ok();
      }
      Message m{
          Offset{static_cast<std::uint64_t>(r.Int(i, 0)), static_cast<std::uint64_t>(r.Int(i, 1))},
          std::make_shared<const std::string>(r.Bytes(i, 2))};
      bytes += m.data->size();
      out->messages.push_back(std::move(m));
    }
  }
  return Status::Ok();
}

}  // namespace agentstream::streams::pgs
