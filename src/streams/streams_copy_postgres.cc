// The PostgreSQL side of a streams copy (streams_copy_side.h): the `ds_*` tables of the store's
// database (postgres_streams.h), read and written row by row: a stream's row with its offsets as
// the store keeps them, its producers' rows, its messages, the subscriptions' rows and the keys.
#include <algorithm>
#include <limits>
#include <utility>

#include "streams/postgres_streams_internal.h"
#include "streams/streams_copy_side.h"
#include "streams/subscription_records.h"

namespace agentstream::streams::copy {

namespace {

using pg::Conn;
using pg::Param;
using pg::Rows;

Param PgBool(bool b) { return Param(b ? "true" : "false"); }
Param PgOptInt(const std::optional<std::int64_t>& v) { return v ? Param(*v) : Param(); }
Param PgU64(std::uint64_t v) { return Param(static_cast<std::int64_t>(v)); }

// The columns a copy writes, in the order of StreamParams.
constexpr const char* kWritten =
    "path, content_type, ttl_seconds, expires_at, expires_at_ms, created_ms, closed, "
    "closed_by_producer, closed_by_epoch, closed_by_seq, forked_from, forked_from_id, "
    "fork_read_seq, fork_byte_pos, fork_sub_offset, soft_deleted, last_stream_seq, "
    "tail_read_seq, tail_byte_pos";

std::vector<Param> StreamParams(const StoredStream& s, std::optional<std::int64_t> source_id) {
  const StreamMeta& m = s.meta;
  const std::optional<ClosedBy>& by = m.closed_by;
  return {m.path,
          m.content_type,
          PgOptInt(m.ttl_seconds),
          Param(m.expires_at),
          m.expires_at ? Param(m.expires_at_ms) : Param(),
          Param(m.created_ms),
          PgBool(m.closed),
          by ? Param(by->producer) : Param(),
          by ? PgU64(by->epoch) : Param(),
          by ? PgU64(by->seq) : Param(),
          Param(m.forked_from),
          PgOptInt(source_id),
          PgU64(m.fork_offset.read_seq),
          PgU64(m.fork_offset.byte_pos),
          PgU64(m.fork_sub_offset),
          PgBool(m.soft_deleted),
          Param(m.last_stream_seq),
          PgU64(s.tail.read_seq),
          PgU64(s.tail.byte_pos)};
}

// "$1, $2, ..., $n".
std::string Placeholders(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += (i > 1 ? ", $" : "$") + std::to_string(i);
  return out;
}

class PostgresSide final : public Side {
 public:
  PostgresSide(Conn conn, std::string name) : conn_(std::move(conn)), name_(std::move(name)) {}

  // Creates or checks the tables (`create`), else finds whether there are any.
  Status Prepare(bool create) {
    if (create) {
      AS_RETURN_IF_ERROR(pgs::EnsureSchema(conn_, ""));
      has_tables_ = true;
      return Status::Ok();
    }
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT to_regclass('ds_schema') IS NOT NULL"));
    has_tables_ = r.Text(0, 0) == "t";
    if (!has_tables_) return Status::Ok();
    AS_ASSIGN_OR_RETURN(Rows v, conn_.Exec("SELECT coalesce(max(version), 0) FROM ds_schema"));
    if (v.Int(0, 0) > kPostgresStreamsSchemaVersion) {
      return Error(ErrorCode::kUnsupportedVersion,
                   "the generic streams of " + name_ + " have schema version " +
                       std::to_string(v.Int(0, 0)) + "; this build reads up to " +
                       std::to_string(kPostgresStreamsSchemaVersion));
    }
    return Status::Ok();
  }

  const std::string& name() const override { return name_; }
  bool keeps_access_times() const override { return true; }

  Result<std::int64_t> NowMs() override {
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT " + std::string(pgs::kNowMs)));
    return r.Int(0, 0);
  }

  Result<std::vector<StoredStream>> Streams() override {
    std::vector<StoredStream> out;
    if (!has_tables_) return out;
    AS_ASSIGN_OR_RETURN(Rows r,
                        conn_.Exec("SELECT " + pgs::RowColumns() + " FROM ds_streams ORDER BY id"));
    std::map<std::int64_t, std::size_t> index;
    for (int i = 0; i < r.size(); ++i) {
      pgs::Row row = pgs::RowAt(r, i);
      index[row.meta.id] = out.size();
      out.push_back({std::move(row.meta), row.tail, 0, row.last_access_ms});
    }
    AS_ASSIGN_OR_RETURN(Rows p, conn_.Exec("SELECT stream_id, producer, epoch, last_seq, "
                                           "updated_ms FROM ds_producers ORDER BY 1, 2"));
    for (int i = 0; i < p.size(); ++i) {
      auto it = index.find(p.Int(i, 0));
      if (it == index.end()) continue;
      out[it->second].meta.producers[p.Text(i, 1)] =
          ProducerState{static_cast<std::uint64_t>(p.Int(i, 2)),
                        static_cast<std::uint64_t>(p.Int(i, 3)), p.Int(i, 4)};
    }
    AS_ASSIGN_OR_RETURN(
        Rows c, conn_.Exec("SELECT stream_id, count(*) FROM ds_messages GROUP BY stream_id"));
    for (int i = 0; i < c.size(); ++i) {
      auto it = index.find(c.Int(i, 0));
      if (it != index.end()) out[it->second].messages = c.Int(i, 1);
    }
    return out;
  }

  Result<std::vector<Message>> Messages(std::int64_t id, std::optional<Offset> after,
                                        std::size_t max_messages, std::size_t max_bytes) override {
    std::vector<Message> out;
    if (!has_tables_) return out;
    const Offset from = after.value_or(Offset{});
    // The rows up to `max_messages`, cut where the bytes before a row reach `max_bytes`.
    AS_ASSIGN_OR_RETURN(
        Rows r,
        conn_.Exec("SELECT read_seq, byte_pos, data FROM (SELECT read_seq, byte_pos, data, "
                   "sum(octet_length(data)) OVER (ORDER BY read_seq, byte_pos) - "
                   "octet_length(data) AS before FROM (SELECT read_seq, byte_pos, data FROM "
                   "ds_messages WHERE stream_id = $1 AND (read_seq, byte_pos) > ($2, $3) ORDER "
                   "BY read_seq, byte_pos LIMIT $4) m) w WHERE before < $5 ORDER BY read_seq, "
                   "byte_pos",
                   {Param(id), Param(after ? static_cast<std::int64_t>(from.read_seq) : -1),
                    Param(after ? static_cast<std::int64_t>(from.byte_pos) : -1),
                    Param(static_cast<std::int64_t>(max_messages)),
                    Param(static_cast<std::int64_t>(std::clamp<std::size_t>(
                        max_bytes, 1, std::numeric_limits<std::int64_t>::max())))}));
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(Message{
          Offset{static_cast<std::uint64_t>(r.Int(i, 0)), static_cast<std::uint64_t>(r.Int(i, 1))},
          std::make_shared<const std::string>(r.Bytes(i, 2))});
    }
    return out;
  }

  Result<std::int64_t> PutStream(const StoredStream& s,
                                 std::optional<std::int64_t> source_id) override {
    AS_RETURN_IF_ERROR(conn_.ExecScript("BEGIN"));
    Result<std::int64_t> id = WriteStream(s, source_id);
    if (id.ok()) id = Finish(conn_.ExecScript("COMMIT"), *id);
    if (!id.ok()) (void)conn_.ExecScript("ROLLBACK");
    return id;
  }

  Status AddMessages(std::int64_t id, const std::vector<Message>& messages) override {
    if (messages.empty()) return Status::Ok();
    AS_RETURN_IF_ERROR(conn_.ExecScript("BEGIN"));
    Status written = WriteMessages(id, messages);
    if (written.ok()) written = conn_.ExecScript("COMMIT");
    if (!written.ok()) (void)conn_.ExecScript("ROLLBACK");
    return written;
  }

  Result<std::map<std::string, std::string>> Subscriptions() override {
    std::map<std::string, std::string> out;
    if (!has_tables_) return out;
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT id, record FROM ds_subscriptions"));
    for (int i = 0; i < r.size(); ++i) out.emplace(r.Text(i, 0), r.Text(i, 1));
    return out;
  }

  Status PutSubscription(const std::string& id, const std::string& record) override {
    // The pattern and the followed paths beside the record, as the records keep them.
    const std::optional<SubscriptionRecord> sub = DecodeSubscription(record);
    if (!sub) return Error(ErrorCode::kCorruption, "the subscription " + id + " is unreadable");
    if (!pgs::StorableText(id) || !pgs::StorableText(record))
      return Error(ErrorCode::kInvalidArgument,
                   "the subscription " + id + " is not text PostgreSQL can store");
    std::vector<std::string> paths;
    for (const auto& [path, link] : sub->streams) paths.push_back(path);
    return conn_
        .Exec(
            "INSERT INTO ds_subscriptions(id, pattern, paths, record) VALUES($1, $2, "
            "$3::text[], $4) ON CONFLICT (id) DO UPDATE SET pattern = excluded.pattern, "
            "paths = excluded.paths, record = excluded.record",
            {id, sub->pattern, pgs::TextArray(paths), record})
        .status();
  }

  Result<std::string> Keys() override {
    if (!has_tables_) return std::string();
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT value FROM ds_keys WHERE name = $1",
                                           {std::string(kSubscriptionKeysName)}));
    return r.size() > 0 ? r.Bytes(0, 0) : std::string();
  }

  Status PutKeys(const std::string& keys) override {
    return conn_
        .Exec(
            "INSERT INTO ds_keys(name, value) VALUES($1, $2) ON CONFLICT (name) DO UPDATE SET "
            "value = excluded.value",
            {std::string(kSubscriptionKeysName), Param::Bytes(keys)})
        .status();
  }

  Status Sync() override { return Status::Ok(); }  // every write committed when it returned

 private:
  static Result<std::int64_t> Finish(const Status& status, std::int64_t id) {
    if (!status.ok()) return status;
    return id;
  }

  // The stream's row and its producers' rows, in the caller's transaction.
  Result<std::int64_t> WriteStream(const StoredStream& s, std::optional<std::int64_t> source_id) {
    std::vector<Param> params = StreamParams(s, source_id);
    const int n = static_cast<int>(params.size());
    std::int64_t id = s.meta.id;
    if (id == 0) {
      params.push_back(PgOptInt(s.last_access_ms));
      AS_ASSIGN_OR_RETURN(
          Rows r, conn_.Exec("INSERT INTO ds_streams(" + std::string(kWritten) +
                                 ", last_access_ms) VALUES(" + Placeholders(n) + ", coalesce($" +
                                 std::to_string(n + 1) + "::bigint, " + std::string(pgs::kNowMs) +
                                 ")) RETURNING id",
                             params));
      id = r.Int(0, 0);
    } else {
      params.push_back(Param(id));
      AS_RETURN_IF_ERROR(conn_
                             .Exec("UPDATE ds_streams SET (" + std::string(kWritten) + ") = (" +
                                       Placeholders(n) + ") WHERE id = $" + std::to_string(n + 1),
                                   params)
                             .status());
    }
    AS_RETURN_IF_ERROR(
        conn_.Exec("DELETE FROM ds_producers WHERE stream_id = $1", {Param(id)}).status());
    for (const auto& [producer, state] : s.meta.producers) {
      AS_RETURN_IF_ERROR(conn_
                             .Exec("INSERT INTO ds_producers(stream_id, producer, epoch, "
                                   "last_seq, updated_ms) VALUES($1, $2, $3, $4, $5)",
                                   {Param(id), producer, PgU64(state.epoch), PgU64(state.last_seq),
                                    Param(state.updated_ms)})
                             .status());
    }
    return id;
  }

  // The messages and the row's new tail, in the caller's transaction.
  Status WriteMessages(std::int64_t id, const std::vector<Message>& messages) {
    for (const Message& m : messages) {
      AS_RETURN_IF_ERROR(conn_
                             .Exec("INSERT INTO ds_messages(stream_id, read_seq, byte_pos, data) "
                                   "VALUES($1, $2, $3, $4)",
                                   {Param(id), PgU64(m.offset.read_seq), PgU64(m.offset.byte_pos),
                                    Param::Bytes(*m.data)})
                             .status());
    }
    const Offset tail = messages.back().offset;
    return conn_
        .Exec("UPDATE ds_streams SET tail_read_seq = $2, tail_byte_pos = $3 WHERE id = $1",
              {Param(id), PgU64(tail.read_seq), PgU64(tail.byte_pos)})
        .status();
  }

  Conn conn_;
  const std::string name_;
  bool has_tables_ = false;
};

}  // namespace

Result<std::unique_ptr<Side>> OpenPostgresSide(const std::string& conninfo, std::string name,
                                               bool create) {
  PostgresStreamsOptions options;
  options.conninfo = conninfo;
  AS_ASSIGN_OR_RETURN(Conn conn, pgs::Connect(options, /*writer=*/true));
  auto side = std::make_unique<PostgresSide>(std::move(conn), std::move(name));
  AS_RETURN_IF_ERROR(side->Prepare(create));
  return std::unique_ptr<Side>(std::move(side));
}

}  // namespace agentstream::streams::copy
