#include "streams/stream_journal.h"

#include <boost/json.hpp>
#include <functional>
#include <utility>

#include "sqlite/db.h"

namespace agentstream::streams {

namespace json = boost::json;

namespace {

// Messages are stored in the order they were appended (`seq`, the rowid), whatever their stream:
// a commit of N appends to N streams writes the last page or two of one b-tree, not N scattered
// pages. Deleting a stream removes its metadata row at once and its messages later, a window of
// rows at a time, when the writer is idle (Purge); loading skips messages of unknown streams.
constexpr const char* kSchema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    // One connection owns the file: no file locks per transaction, no shared-memory index.
    "PRAGMA locking_mode=EXCLUSIVE;"
    // Takes the exclusive lock now, and keeps it: a second daemon fails here, not later.
    "BEGIN EXCLUSIVE; COMMIT;"
    "CREATE TABLE IF NOT EXISTS ds_streams(id INTEGER PRIMARY KEY, meta TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS ds_dead(stream_id INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS ds_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);";

constexpr const char* kMessages =
    "CREATE TABLE ds_messages(seq INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL,"
    " offset TEXT NOT NULL, data BLOB NOT NULL)";

// Databases written before messages were stored in append order (a table keyed by stream and
// offset) are converted once, in one transaction.
constexpr const char* kMigrateKeyedMessages =
    "BEGIN;"
    "ALTER TABLE ds_messages RENAME TO ds_messages_keyed;"
    "CREATE TABLE ds_messages(seq INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL,"
    " offset TEXT NOT NULL, data BLOB NOT NULL);"
    "INSERT INTO ds_messages(stream_id, offset, data)"
    " SELECT stream_id, offset, data FROM ds_messages_keyed ORDER BY stream_id, offset;"
    "DROP TABLE ds_messages_keyed;"
    "COMMIT;";

// Rows examined by one purge step: bounds how long an idle writer holds off the next commit.
constexpr std::int64_t kPurgeWindow = 4096;

std::int64_t Int(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

std::uint64_t UInt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->as_uint64();
  return v->is_int64() ? static_cast<std::uint64_t>(v->as_int64()) : 0;
}

std::optional<std::string> Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string(v->as_string());
}

// Loading stopped early: another process holds the database (it is opened exclusively), or the
// file is damaged.
Status Unreadable(const sqlite::Db& db) {
  return Error(ErrorCode::kIoError,
               "cannot read the streams database (is another daemon using this data directory?): " +
                   db.LastError());
}

// Runs the query `sql` and calls `row` on each of its rows, in order. Unreadable when the query
// failed; the first error `row` returns stops it and is returned as it is.
Status EachRow(sqlite::Db& db, std::string_view sql,
               const std::function<Status(const sqlite::Stmt&)>& row) {
  Result<sqlite::Stmt> stmt = db.Prepare(sql);
  if (!stmt.ok()) return Unreadable(db);
  for (;;) {
    const Result<bool> more = stmt->Step();
    if (!more.ok()) return Unreadable(db);
    if (!*more) return Status::Ok();
    AS_RETURN_IF_ERROR(row(*stmt));
  }
}

// The SQL that made the messages table ("" when there is none yet).
Result<std::string> MessagesTableSql(sqlite::Db& db) {
  AS_ASSIGN_OR_RETURN(
      sqlite::Stmt stmt,
      db.Prepare("SELECT sql FROM sqlite_master WHERE type='table' AND name='ds_messages'"));
  AS_ASSIGN_OR_RETURN(const bool row, stmt.Step());
  return row ? stmt.Text(0) : std::string();
}

// Makes the messages table, or converts one keyed by stream and offset.
Status PrepareMessagesTable(sqlite::Db& db) {
  const Result<std::string> sql = MessagesTableSql(db);
  const char* setup = nullptr;
  if (sql.ok() && sql->empty()) setup = kMessages;
  if (sql.ok() && sql->find("WITHOUT ROWID") != std::string::npos) setup = kMigrateKeyedMessages;
  if (sql.ok() && (setup == nullptr || db.Exec(setup).ok())) return Status::Ok();
  const std::string message = db.LastError();
  (void)db.Exec("ROLLBACK");  // a conversion that failed midway leaves its transaction open
  return Error(ErrorCode::kIoError, "cannot prepare the streams messages table: " + message);
}

}  // namespace

std::string EncodeMeta(const StreamMeta& m) {
  json::object o;
  o["path"] = m.path;
  o["content_type"] = m.content_type;
  if (m.ttl_seconds) o["ttl"] = *m.ttl_seconds;
  if (m.expires_at) o["expires_at"] = *m.expires_at;
  o["expires_at_ms"] = m.expires_at_ms;
  o["created_ms"] = m.created_ms;
  o["closed"] = m.closed;
  if (m.closed_by) {
    o["closed_by"] = json::object{{"producer", m.closed_by->producer},
                                  {"epoch", m.closed_by->epoch},
                                  {"seq", m.closed_by->seq}};
  }
  if (m.forked_from) {
    o["forked_from"] = *m.forked_from;
    o["fork_offset"] = FormatOffset(m.fork_offset);
    o["fork_sub_offset"] = m.fork_sub_offset;
  }
  o["soft_deleted"] = m.soft_deleted;
  if (m.last_stream_seq) o["last_stream_seq"] = *m.last_stream_seq;
  json::object producers;
  for (const auto& [id, p] : m.producers)
    producers[id] =
        json::object{{"epoch", p.epoch}, {"last_seq", p.last_seq}, {"updated_ms", p.updated_ms}};
  o["producers"] = std::move(producers);
  return json::serialize(o);
}

Result<StreamMeta> DecodeMeta(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Error(ErrorCode::kCorruption, "stream metadata is not JSON");
  const json::object& o = v.as_object();
  StreamMeta m;
  m.path = Str(o, "path").value_or("");
  m.content_type = Str(o, "content_type").value_or("");
  if (o.contains("ttl")) m.ttl_seconds = Int(o, "ttl");
  m.expires_at = Str(o, "expires_at");
  m.expires_at_ms = Int(o, "expires_at_ms");
  m.created_ms = Int(o, "created_ms");
  m.closed = o.contains("closed") && o.at("closed").is_bool() && o.at("closed").as_bool();
  if (const json::value* cb = o.if_contains("closed_by"); cb != nullptr && cb->is_object()) {
    const json::object& c = cb->as_object();
    m.closed_by = ClosedBy{Str(c, "producer").value_or(""), UInt(c, "epoch"), UInt(c, "seq")};
  }
  m.forked_from = Str(o, "forked_from");
  if (m.forked_from) {
    auto offset = ParseOffset(Str(o, "fork_offset").value_or(""));
    if (!offset) return Error(ErrorCode::kCorruption, "bad fork offset in stream metadata");
    m.fork_offset = *offset;
    m.fork_sub_offset = UInt(o, "fork_sub_offset");
  }
  m.soft_deleted = o.contains("soft_deleted") && o.at("soft_deleted").is_bool() &&
                   o.at("soft_deleted").as_bool();
  m.last_stream_seq = Str(o, "last_stream_seq");
  if (const json::value* ps = o.if_contains("producers"); ps != nullptr && ps->is_object()) {
    for (const auto& [id, p] : ps->as_object()) {
      if (!p.is_object()) continue;
      const json::object& po = p.as_object();
      m.producers[std::string(id)] =
          ProducerState{UInt(po, "epoch"), UInt(po, "last_seq"), Int(po, "updated_ms")};
    }
  }
  return m;
}

// The connection, and the statements of the writer thread, prepared once.
struct StreamJournal::Connection {
  Status PrepareStatements() {
    AS_ASSIGN_OR_RETURN(put_meta,
                        db.Prepare("INSERT OR REPLACE INTO ds_streams(id, meta) VALUES(?, ?)"));
    AS_ASSIGN_OR_RETURN(
        put_message,
        db.Prepare("INSERT INTO ds_messages(stream_id, offset, data) VALUES(?, ?, ?)"));
    AS_ASSIGN_OR_RETURN(put_state,
                        db.Prepare("INSERT OR REPLACE INTO ds_state(key, value) VALUES(?, ?)"));
    AS_ASSIGN_OR_RETURN(delete_state, db.Prepare("DELETE FROM ds_state WHERE key=?"));
    return Status::Ok();
  }

  sqlite::Db db;  // declared first: closed after the statements are finalized
  sqlite::Stmt put_meta;
  sqlite::Stmt put_message;
  sqlite::Stmt put_state;
  sqlite::Stmt delete_state;
};

Result<std::unique_ptr<StreamJournal>> StreamJournal::Open(const std::string& path,
                                                           std::size_t max_pending) {
  // A file name, never a URI; no waiting on a lock: a second daemon on the file fails at once.
  Result<sqlite::Db> opened =
      sqlite::Db::Open(path, {.create = true, .uri = false, .busy_timeout_ms = 0});
  if (!opened.ok())
    return Error(ErrorCode::kIoError,
                 "cannot open the streams database: " + opened.status().message());
  auto connection = std::make_unique<Connection>();
  connection->db = std::move(opened).value();
  sqlite::Db& db = connection->db;
  if (!db.Exec(kSchema).ok()) {
    std::string message = db.LastError();
    if (db.Busy()) message += " (another daemon is using this data directory)";
    return Error(ErrorCode::kIoError, "cannot prepare the streams database: " + message);
  }
  AS_RETURN_IF_ERROR(PrepareMessagesTable(db));
  if (Status prepared = connection->PrepareStatements(); !prepared.ok())
    return Error(ErrorCode::kIoError, "cannot prepare the streams database: " + prepared.message());
  auto journal =
      std::unique_ptr<StreamJournal>(new StreamJournal(std::move(connection), max_pending));
  // Deletions not yet purged when the daemon stopped: purged again from the start, and their ids
  // are never given to new streams before that. A read error only ends the list (Load meets it).
  (void)EachRow(db, "SELECT stream_id FROM ds_dead ORDER BY stream_id",
                [&](const sqlite::Stmt& row) {
                  const std::int64_t id = row.Int(0);
                  journal->purge_next_.push_back(id);
                  journal->purging_ = true;
                  journal->min_next_id_ = std::max(journal->min_next_id_, id + 1);
                  return Status::Ok();
                });
  journal->writer_ = std::thread([j = journal.get()] { j->Run(); });
  return journal;
}

StreamJournal::StreamJournal(std::unique_ptr<Connection> connection, std::size_t max_pending)
    : connection_(std::move(connection)), max_pending_(max_pending) {}

StreamJournal::~StreamJournal() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

Result<std::vector<Stream>> StreamJournal::Load() {
  std::lock_guard lock(mu_);  // before any write: the writer thread is idle
  sqlite::Db& db = connection_->db;
  std::vector<Stream> streams;
  std::map<std::int64_t, std::size_t> index;
  AS_RETURN_IF_ERROR(EachRow(db, "SELECT id, meta FROM ds_streams ORDER BY id",
                             [&](const sqlite::Stmt& row) -> Status {
                               AS_ASSIGN_OR_RETURN(StreamMeta meta, DecodeMeta(row.Text(1)));
                               meta.id = row.Int(0);
                               index[meta.id] = streams.size();
                               Stream s;
                               s.meta = std::move(meta);
                               s.tail = s.meta.forked_from ? s.meta.fork_offset : Offset{};
                               streams.push_back(std::move(s));
                               return Status::Ok();
                             }));
  AS_RETURN_IF_ERROR(EachRow(db, "SELECT stream_id, offset, data FROM ds_messages ORDER BY seq",
                             [&](const sqlite::Stmt& row) -> Status {
                               auto it = index.find(row.Int(0));
                               auto offset = ParseOffset(row.Text(1));
                               if (it == index.end() || !offset) return Status::Ok();
                               Stream& s = streams[it->second];
                               auto data = std::make_shared<const std::string>(row.Text(2));
                               s.bytes += data->size();
                               s.messages.push_back(Message{*offset, std::move(data)});
                               s.tail = *offset;
                               return Status::Ok();
                             }));
  return streams;
}

void StreamJournal::PutMeta(const StreamMeta& meta) {
  Push(Op{Op::kMeta, meta.id, EncodeMeta(meta), nullptr, nullptr});
}

void StreamJournal::PutMessage(std::int64_t stream_id, const Message& message) {
  Push(Op{Op::kMessage, stream_id, FormatOffset(message.offset), message.data, nullptr});
}

void StreamJournal::DeleteStream(std::int64_t stream_id) {
  Push(Op{Op::kDelete, stream_id, "", nullptr, nullptr});
}

void StreamJournal::PutState(const std::string& key, const std::string& value) {
  Push(Op{Op::kState, 0, key, std::make_shared<const std::string>(value), nullptr});
}

Result<std::map<std::string, std::string>> StreamJournal::LoadState() {
  std::lock_guard lock(mu_);  // before any write: the writer thread is idle
  std::map<std::string, std::string> state;
  AS_RETURN_IF_ERROR(EachRow(connection_->db, "SELECT key, value FROM ds_state",
                             [&](const sqlite::Stmt& row) -> Status {
                               state[row.Text(0)] = row.Text(1);
                               return Status::Ok();
                             }));
  return state;
}

void StreamJournal::AfterCommit(std::function<void(bool ok)> fn) {
  Push(Op{Op::kCallback, 0, "", nullptr, std::move(fn)});
}

bool StreamJournal::Full() const {
  std::lock_guard lock(mu_);
  return queue_.size() >= max_pending_;
}

bool StreamJournal::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void StreamJournal::FinishedLoading() {
  {
    std::lock_guard lock(mu_);
    loaded_ = true;
  }
  cv_.notify_one();
}

void StreamJournal::Push(Op op) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu_);
    loaded_ = true;  // writes come after the reads
    was_empty = queue_.empty();
    queue_.push_back(std::move(op));
  }
  // The writer waits only on an empty queue: later pushes find it awake (an append makes three).
  if (was_empty) cv_.notify_one();
}

bool StreamJournal::Apply(const Op& op) {
  Connection& c = *connection_;
  switch (op.kind) {
    case Op::kMeta:
      return c.put_meta.Bind(1, op.id).Bind(2, op.text).Exec().ok();
    case Op::kMessage:
      return c.put_message.Bind(1, op.id).Bind(2, op.text).BindBlob(3, *op.data).Exec().ok();
    case Op::kDelete: {
      const std::string id = std::to_string(op.id);
      return c.db
          .Exec("DELETE FROM ds_streams WHERE id=" + id +
                ";INSERT OR IGNORE INTO ds_dead(stream_id) VALUES(" + id + ");")
          .ok();
    }
    case Op::kState:
      if (op.data->empty()) return c.delete_state.Bind(1, op.text).Exec().ok();
      return c.put_state.Bind(1, op.text).Bind(2, *op.data).Exec().ok();
    case Op::kCallback:
      return true;
  }
  return false;
}

void StreamJournal::Run() {
  std::vector<Op> batch;
  std::uint64_t batches = 0;
  {
    // The connection has no mutex of its own (SQLITE_OPEN_NOMUTEX): while Load reads on the
    // caller's thread, even a pending purge waits.
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stop_ || loaded_; });
  }
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // With purging left to do, an empty queue is no reason to sleep.
      const bool purge = !failed_ && (!purge_ids_.empty() || !purge_next_.empty());
      if (!purge) cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;  // an unfinished purge resumes at the next start
      batch.swap(queue_);
    }
    bool ok = !failed();
    if (!batch.empty()) {
      ++batches;
      ok = ok && Commit(batch);
      for (Op& op : batch) {
        if (op.kind == Op::kCallback) op.done(ok);
        if (ok && op.kind == Op::kDelete) {
          purge_next_.push_back(op.id);
          purging_ = true;  // before the deletion's own callbacks, which come after it
        }
      }
      batch.clear();
    }
    bool idle = false;
    {
      std::lock_guard lock(mu_);
      idle = queue_.empty();
    }
    // A purge step runs when no write waits, and at least every 64th batch under a load that
    // never lets the queue empty.
    if (ok && (idle || batches % 64 == 0)) ok = PurgeStep();
    purging_ = !purge_ids_.empty() || !purge_next_.empty();
    if (!ok) {
      std::lock_guard lock(mu_);
      failed_ = true;
    }
  }
}

bool StreamJournal::Commit(const std::vector<Op>& batch) {
  sqlite::Db& db = connection_->db;
  bool ok = db.Exec("BEGIN").ok();
  for (const Op& op : batch)
    if (ok) ok = Apply(op);
  if (ok) return db.Exec("COMMIT").ok();
  (void)db.Exec("ROLLBACK");
  return false;
}

bool StreamJournal::PurgeStep() {
  sqlite::Db& db = connection_->db;
  if (purge_ids_.empty()) {
    if (purge_next_.empty()) return true;
    // Every message of a deleted stream was committed before its deletion: none lies beyond.
    Result<std::int64_t> end = db.QueryInt("SELECT MAX(seq) FROM ds_messages");
    if (!end.ok()) return false;
    purge_ids_.swap(purge_next_);
    purge_cursor_ = 0;
    purge_end_ = *end;
  }
  const std::int64_t to = purge_cursor_ + kPurgeWindow;
  const std::string window = "DELETE FROM ds_messages WHERE seq > " +
                             std::to_string(purge_cursor_) + " AND seq <= " + std::to_string(to) +
                             " AND stream_id IN (SELECT stream_id FROM ds_dead);";
  std::string sql = "BEGIN;" + window;
  const bool last = to >= purge_end_;
  if (last)
    for (const std::int64_t id : purge_ids_)
      sql += "DELETE FROM ds_dead WHERE stream_id=" + std::to_string(id) + ";";
  sql += "COMMIT;";
  if (!db.Exec(sql).ok()) {
    (void)db.Exec("ROLLBACK");
    return false;
  }
  purge_cursor_ = to;
  if (last) purge_ids_.clear();
  return true;
}

}  // namespace agentstream::streams
