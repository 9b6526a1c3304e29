#include "store/copy/copy_session.h"

#include <openssl/evp.h>

#include <memory>
#include <vector>

#include "store/copy/copy_sql.h"
#include "store/copy/store_copy.h"
#include "store/log_state.h"
#include "store/record_batch.h"

namespace agentstream::store_copy {

namespace {

using K = ColumnKind;

// The `sessions` row but its key. The lease columns are not copied: no daemon holds a lease
// on the copy (owner '' and expiry 0); the generation is, so that the next grant is newer than
// every writer of the copied batches.
const std::vector<Column> kSessionColumns = {
    {"id", K::kText},        {"provider", K::kText},       {"cwd", K::kText},
    {"title", K::kText},     {"created_ms", K::kInt},      {"persistence", K::kText},
    {"status", K::kText},    {"forked_session", K::kText}, {"forked_epoch", K::kInt},
    {"forked_seq", K::kInt}, {"current_epoch", K::kInt},   {"owner_generation", K::kInt},
    {"usage", K::kText}};
// The columns of kSessionColumns two copies of one session must agree on.
constexpr std::size_t kImmutable[] = {1, 2, 4, 7, 8, 9};
const std::vector<Column> kEpochColumns = {
    {"epoch", K::kInt}, {"base_session", K::kText}, {"base_epoch", K::kInt}, {"base_seq", K::kInt}};
const std::vector<Column> kProducerColumns = {{"producer", K::kText},
                                              {"epoch", K::kInt},
                                              {"seq", K::kInt},
                                              {"first_seq", K::kInt},
                                              {"last_seq", K::kInt}};
const std::vector<Column> kCheckpointColumns = {
    {"session", K::kText}, {"epoch", K::kInt}, {"seq", K::kInt}, {"body", K::kText}};
const std::vector<Column> kHistoryColumns = {{"session", K::kText}, {"generation", K::kInt},
                                             {"owner", K::kText},   {"granted_ms", K::kInt},
                                             {"epoch", K::kInt},    {"seq", K::kInt}};

struct SessionRows {
  std::int64_t key = 0;
  Row row;  // kSessionColumns
};

Result<std::optional<SessionRows>> ReadSession(CopyConn& c, const std::string& id) {
  const std::string sql =
      "SELECT key, " + SelectList(c, kSessionColumns) + " FROM sessions WHERE id = $1";
  std::vector<ColumnKind> kinds = {K::kInt};
  for (const Column& col : kSessionColumns) kinds.push_back(col.kind);
  AS_ASSIGN_OR_RETURN(auto rows, c.Query(sql, {Value::Text(id)}, kinds, {K::kText}));
  if (rows.empty()) return std::optional<SessionRows>();
  SessionRows out{.key = rows[0][0].integer, .row = Row(rows[0].begin() + 1, rows[0].end())};
  return std::optional<SessionRows>(std::move(out));
}

Result<std::vector<Row>> ReadEpochs(CopyConn& c, std::int64_t key) {
  return c.Query(
      "SELECT " + SelectList(c, kEpochColumns) + " FROM epochs WHERE session = $1 ORDER BY epoch",
      {Value::Int(key)}, Kinds(kEpochColumns), {K::kInt});
}

Result<std::int64_t> CountEvents(CopyConn& c, std::int64_t key) {
  AS_ASSIGN_OR_RETURN(auto rows,
                      c.Query("SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM events "
                              "WHERE session = $1",
                              {Value::Int(key)}, {K::kInt}, {K::kInt}));
  return rows[0][0].integer;
}

// A row of `events`.
struct Batch {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t format = 0;
  std::int64_t writer = 0;
  std::string data;
  bool operator==(const Batch&) const = default;
};

// The batches of (key, epoch) after first_seq `after`, at most kCopyChunkRows of them and
// kCopyChunkBytes of data (at least one): sizes are read first, then the data of those that fit.
Result<std::vector<Batch>> ReadChunk(CopyConn& c, std::int64_t key, std::int64_t epoch,
                                     std::int64_t after) {
  AS_ASSIGN_OR_RETURN(
      auto sizes,
      c.Query("SELECT first_seq, length(data) FROM events WHERE session = $1 AND epoch = $2 "
              "AND first_seq > $3 ORDER BY first_seq LIMIT $4",
              {Value::Int(key), Value::Int(epoch), Value::Int(after),
               Value::Int(static_cast<std::int64_t>(kCopyChunkRows))},
              {K::kInt, K::kInt}, {K::kInt, K::kInt, K::kInt, K::kInt}));
  if (sizes.empty()) return std::vector<Batch>();
  std::int64_t through = sizes[0][0].integer;
  std::size_t bytes = 0;
  for (const Row& r : sizes) {
    bytes += static_cast<std::size_t>(r[1].integer);
    if (bytes > kCopyChunkBytes && r[0].integer != sizes[0][0].integer) break;
    through = r[0].integer;
  }
  AS_ASSIGN_OR_RETURN(
      auto rows,
      c.Query("SELECT first_seq, last_seq, format, data, writer FROM events WHERE "
              "session = $1 AND epoch = $2 AND first_seq > $3 AND first_seq <= $4 "
              "ORDER BY first_seq",
              {Value::Int(key), Value::Int(epoch), Value::Int(after), Value::Int(through)},
              {K::kInt, K::kInt, K::kInt, K::kBlob, K::kInt},
              {K::kInt, K::kInt, K::kInt, K::kInt}));
  std::vector<Batch> out;
  out.reserve(rows.size());
  for (Row& r : rows) {
    out.push_back({r[0].integer, r[1].integer, r[2].integer, r[4].integer, std::move(r[3].bytes)});
  }
  return out;
}

Status Conflict(const std::string& id, const std::string& what) {
  return Error(ErrorCode::kConflict, "session " + id + " differs between the stores: " + what);
}

// The destination's batches of one epoch must be the source's first ones, byte for byte.
// Returns how many events they hold.
Result<std::int64_t> ComparePrefix(CopyConn& from, std::int64_t from_key, CopyConn& to,
                                   std::int64_t to_key, std::int64_t epoch, const std::string& id) {
  std::int64_t after = 0;
  std::int64_t events = 0;
  while (true) {
    AS_ASSIGN_OR_RETURN(std::vector<Batch> have, ReadChunk(to, to_key, epoch, after));
    if (have.empty()) return events;
    AS_ASSIGN_OR_RETURN(std::vector<Batch> want, ReadChunk(from, from_key, epoch, after));
    for (std::size_t i = 0; i < have.size(); ++i) {
      if (i >= want.size() || !(have[i] == want[i])) {
        return Conflict(id, "epoch " + std::to_string(epoch) + " holds other events from seq " +
                                std::to_string(have[i].first));
      }
      events += have[i].last - have[i].first + 1;
    }
    after = have.back().first;
  }
}

Status CompareSessions(const Row& have, const Row& want, const std::string& id) {
  for (std::size_t i : kImmutable) {
    if (!(have[i] == want[i]))
      return Conflict(id, std::string("its ") + kSessionColumns[i].name + " differs");
  }
  return Status::Ok();
}

// Writes `rows` to `to` in one transaction by `write`, rolled back on failure.
template <class Fn>
Status InTransaction(CopyConn& to, Fn&& write) {
  AS_RETURN_IF_ERROR(to.Begin());
  Status s = write();
  if (s.ok()) s = to.Commit();
  if (!s.ok()) to.Rollback();
  return s;
}

// The session's row (inserted, or its changing columns updated) and epochs; its key at `to`.
Result<std::int64_t> WriteSessionRow(CopyConn& from, CopyConn& to, const SessionRows& src) {
  AS_ASSIGN_OR_RETURN(std::vector<Row> epochs, ReadEpochs(from, src.key));
  std::int64_t key = 0;
  AS_RETURN_IF_ERROR(InTransaction(to, [&]() -> Status {
    AS_RETURN_IF_ERROR(Upsert(to, "sessions", kSessionColumns, 1, src.row));
    AS_ASSIGN_OR_RETURN(auto found, ReadSession(to, src.row[0].bytes));
    if (!found) return Error(ErrorCode::kIoError, "session " + src.row[0].bytes + " not written");
    key = found->key;
    std::vector<Column> cols = {{"session", K::kInt}};
    cols.insert(cols.end(), kEpochColumns.begin(), kEpochColumns.end());
    for (const Row& e : epochs) {
      Row r = {Value::Int(key)};
      r.insert(r.end(), e.begin(), e.end());
      AS_RETURN_IF_ERROR(InsertIgnore(to, "epochs", cols, r));
    }
    return Status::Ok();
  }));
  return key;
}

Result<std::int64_t> LastFirstSeq(CopyConn& c, std::int64_t key, std::int64_t epoch) {
  AS_ASSIGN_OR_RETURN(auto rows,
                      c.Query("SELECT coalesce(max(first_seq), 0) FROM events WHERE "
                              "session = $1 AND epoch = $2",
                              {Value::Int(key), Value::Int(epoch)}, {K::kInt}, {K::kInt, K::kInt}));
  return rows[0][0].integer;
}

Result<std::int64_t> CopyEpoch(CopyConn& from, std::int64_t from_key, CopyConn& to,
                               std::int64_t to_key, std::int64_t epoch,
                               const std::function<void(std::int64_t)>& copied) {
  AS_ASSIGN_OR_RETURN(std::int64_t after, LastFirstSeq(to, to_key, epoch));
  std::int64_t total = 0;
  while (true) {
    AS_ASSIGN_OR_RETURN(std::vector<Batch> chunk, ReadChunk(from, from_key, epoch, after));
    if (chunk.empty()) return total;
    std::int64_t events = 0;
    AS_RETURN_IF_ERROR(InTransaction(to, [&]() -> Status {
      for (const Batch& b : chunk) {
        AS_RETURN_IF_ERROR(
            to.Exec("INSERT INTO events(session, epoch, first_seq, last_seq, format, data, writer) "
                    "VALUES($1, $2, $3, $4, $5, $6, $7)",
                    {Value::Int(to_key), Value::Int(epoch), Value::Int(b.first), Value::Int(b.last),
                     Value::Int(b.format), Value::Text(b.data), Value::Int(b.writer)},
                    {K::kInt, K::kInt, K::kInt, K::kInt, K::kInt, K::kBlob, K::kInt}));
        events += b.last - b.first + 1;
      }
      return Status::Ok();
    }));
    total += events;
    after = chunk.back().first;
    if (copied) copied(events);
  }
}

// A session's producers' states, checkpoint and ownership history.
struct Tail {
  std::vector<Row> producers;
  std::vector<Row> checkpoint;
  std::vector<Row> history;
  bool operator==(const Tail&) const = default;
};

Result<Tail> ReadTail(CopyConn& c, std::int64_t key, const std::string& id) {
  Tail t;
  AS_ASSIGN_OR_RETURN(t.producers,
                      c.Query("SELECT " + SelectList(c, kProducerColumns) +
                                  " FROM producers WHERE session = $1 ORDER BY producer",
                              {Value::Int(key)}, Kinds(kProducerColumns), {K::kInt}));
  AS_ASSIGN_OR_RETURN(t.checkpoint,
                      c.Query("SELECT " + SelectList(c, kCheckpointColumns) +
                                  " FROM checkpoints WHERE session = $1",
                              {Value::Text(id)}, Kinds(kCheckpointColumns), {K::kText}));
  AS_ASSIGN_OR_RETURN(t.history,
                      c.Query("SELECT " + SelectList(c, kHistoryColumns) +
                                  " FROM owner_history WHERE session = $1 ORDER BY generation",
                              {Value::Text(id)}, Kinds(kHistoryColumns), {K::kText}));
  return t;
}

// The producers' states (replaced), the checkpoint (upserted) and the ownership history.
Status WriteSessionTail(CopyConn& from, std::int64_t from_key, CopyConn& to, std::int64_t to_key,
                        const std::string& id) {
  AS_ASSIGN_OR_RETURN(Tail tail, ReadTail(from, from_key, id));
  return InTransaction(to, [&]() -> Status {
    AS_RETURN_IF_ERROR(
        to.Exec("DELETE FROM producers WHERE session = $1", {Value::Int(to_key)}, {K::kInt}));
    std::vector<Column> cols = {{"session", K::kInt}};
    cols.insert(cols.end(), kProducerColumns.begin(), kProducerColumns.end());
    for (const Row& p : tail.producers) {
      Row r = {Value::Int(to_key)};
      r.insert(r.end(), p.begin(), p.end());
      AS_RETURN_IF_ERROR(InsertIgnore(to, "producers", cols, r));
    }
    for (const Row& c : tail.checkpoint)
      AS_RETURN_IF_ERROR(Upsert(to, "checkpoints", kCheckpointColumns, 1, c));
    for (const Row& h : tail.history)
      AS_RETURN_IF_ERROR(InsertIgnore(to, "owner_history", kHistoryColumns, h));
    return Status::Ok();
  });
}

void HashInt(EVP_MD_CTX* ctx, std::int64_t n) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(n) >> (8 * i));
  EVP_DigestUpdate(ctx, bytes, sizeof bytes);
}

void HashText(EVP_MD_CTX* ctx, const Value& v) {
  HashInt(ctx, v.null ? -1 : static_cast<std::int64_t>(v.bytes.size()));
  if (!v.null) EVP_DigestUpdate(ctx, v.bytes.data(), v.bytes.size());
}

Status HashBatch(EVP_MD_CTX* ctx, const Batch& b) {
  std::vector<store_internal::StoredRow> rows;
  AS_RETURN_IF_ERROR(store_internal::DecodeBatch(
      b.data, static_cast<std::uint32_t>(b.format), Seq(static_cast<std::uint64_t>(b.first)),
      Seq(static_cast<std::uint64_t>(b.last)), Seq(static_cast<std::uint64_t>(b.first)),
      Seq(static_cast<std::uint64_t>(b.last)), rows));
  std::int64_t seq = b.first;
  for (const store_internal::StoredRow& row : rows) {
    AS_RETURN_IF_ERROR(store_internal::VerifyRow(row));
    const EventRecord& e = row.record;
    HashInt(ctx, seq++);
    HashInt(ctx, e.time);
    HashInt(ctx, e.kind);
    HashInt(ctx, e.format);
    HashText(ctx, e.turn ? Value::Text(e.turn->str()) : Value::Null());
    HashText(ctx, Value::Text(e.payload));
    HashInt(ctx, b.writer);
  }
  return Status::Ok();
}

}  // namespace

Result<SessionPlan> PlanSession(CopyConn& from, CopyConn& to, const std::string& id) {
  AS_ASSIGN_OR_RETURN(auto src, ReadSession(from, id));
  if (!src) return Error(ErrorCode::kNotFound, "session " + id + " vanished from the source");
  SessionPlan plan{.id = id};
  AS_ASSIGN_OR_RETURN(plan.events, CountEvents(from, src->key));
  AS_ASSIGN_OR_RETURN(auto dst, ReadSession(to, id));
  if (!dst) return plan;
  plan.present = true;
  AS_RETURN_IF_ERROR(CompareSessions(dst->row, src->row, id));
  AS_ASSIGN_OR_RETURN(std::vector<Row> want, ReadEpochs(from, src->key));
  AS_ASSIGN_OR_RETURN(std::vector<Row> have, ReadEpochs(to, dst->key));
  for (const Row& e : have) {
    bool found = false;
    for (const Row& w : want) found = found || w == e;
    if (!found) return Conflict(id, "epoch " + std::to_string(e[0].integer) + " differs");
    AS_ASSIGN_OR_RETURN(std::int64_t n,
                        ComparePrefix(from, src->key, to, dst->key, e[0].integer, id));
    plan.copied += n;
  }
  if (plan.copied == plan.events && have.size() == want.size() && dst->row == src->row) {
    AS_ASSIGN_OR_RETURN(Tail want_tail, ReadTail(from, src->key, id));
    AS_ASSIGN_OR_RETURN(Tail have_tail, ReadTail(to, dst->key, id));
    plan.complete = want_tail == have_tail;
  }
  return plan;
}

Result<std::int64_t> CopySession(CopyConn& from, CopyConn& to, const SessionPlan& plan,
                                 const std::function<void(std::int64_t)>& copied) {
  AS_ASSIGN_OR_RETURN(auto src, ReadSession(from, plan.id));
  if (!src) return Error(ErrorCode::kNotFound, "session " + plan.id + " vanished from the source");
  AS_ASSIGN_OR_RETURN(std::int64_t key, WriteSessionRow(from, to, *src));
  AS_ASSIGN_OR_RETURN(std::vector<Row> epochs, ReadEpochs(from, src->key));
  std::int64_t total = 0;
  for (const Row& e : epochs) {
    AS_ASSIGN_OR_RETURN(std::int64_t n, CopyEpoch(from, src->key, to, key, e[0].integer, copied));
    total += n;
  }
  AS_RETURN_IF_ERROR(WriteSessionTail(from, src->key, to, key, plan.id));
  return total;
}

Result<Digest> DigestSession(CopyConn& conn, const std::string& id) {
  AS_ASSIGN_OR_RETURN(auto session, ReadSession(conn, id));
  if (!session) return Error(ErrorCode::kNotFound, "no session " + id + " in " + conn.name());
  AS_ASSIGN_OR_RETURN(std::vector<Row> epochs, ReadEpochs(conn, session->key));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    return Error(ErrorCode::kInternal, "SHA-256 is unavailable");
  Digest digest;
  for (const Row& e : epochs) {
    HashInt(ctx.get(), e[0].integer);
    HashText(ctx.get(), e[1]);
    HashInt(ctx.get(), e[2].null ? -1 : e[2].integer);
    HashInt(ctx.get(), e[3].null ? -1 : e[3].integer);
    std::int64_t after = 0;
    while (true) {
      AS_ASSIGN_OR_RETURN(std::vector<Batch> chunk,
                          ReadChunk(conn, session->key, e[0].integer, after));
      if (chunk.empty()) break;
      for (const Batch& b : chunk) {
        Status s = HashBatch(ctx.get(), b);
        if (!s.ok()) return Error(s.code(), conn.name() + ", session " + id + ": " + s.message());
        digest.events += b.last - b.first + 1;
      }
      after = chunk.back().first;
    }
  }
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), out, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < size; ++i) {
    digest.sha256 += kHex[out[i] >> 4];
    digest.sha256 += kHex[out[i] & 15];
  }
  return digest;
}

}  // namespace agentstream::store_copy
