// PostgresStreamStore (postgres_streams.h): the queue of writes and its writer thread (group
// commit of appends, one transaction per create or delete, the background sweep), the listener
// that hears the other daemons' commits, and the reads on a pool of reader connections.
#include "streams/postgres_streams.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "pg/commit_outcome.h"
#include "pg/listen_thread.h"
#include "streams/postgres_streams_internal.h"
#include "streams/stream_rules.h"
#include "streams/watchers.h"
#include "system/random_id.h"

namespace agentstream::streams {

namespace {

using pg::Conn;
using pg::Param;
using pg::Rows;
using pgs::Row;

// Background work per pass.
constexpr int kSweepStreams = 100;
constexpr int kPurgeRows = 4096;
constexpr auto kSweepInterval = std::chrono::seconds(1);
constexpr auto kProducerSweepInterval = std::chrono::minutes(10);

bool Storable(const CreateArgs& a) {
  return pgs::StorableText(a.path) && pgs::StorableText(a.content_type) &&
         pgs::StorableText(a.expires_at.value_or("")) &&
         pgs::StorableText(a.forked_from.value_or(""));
}

bool Storable(const AppendArgs& a) {
  return pgs::StorableText(a.path) && pgs::StorableText(a.stream_seq.value_or("")) &&
         pgs::StorableText(a.producer ? a.producer->id : "");
}

class PostgresStreamStore final : public StreamStore {
 public:
  // `stamps` is registered on `writer`.
  PostgresStreamStore(PostgresStreamsOptions options, Conn writer, Conn listening,
                      pg::CommitStamps stamps)
      : options_(std::move(options)),
        channel_(pgs::Channel(options_.schema)),
        writer_conn_(std::move(writer)),
        stamps_(std::move(stamps)),
        watchers_(options_.limits.max_watchers) {
    writer_pid_ = writer_conn_.BackendPid();
    writer_ = std::thread([this] { WriteLoop(); });
    listener_ = std::make_unique<pg::ListenThread>(
        std::move(listening),
        pg::ListenThread::Handlers{
            [this]() -> Result<Conn> { return Listen(); },
            [this](int pid) { return pid == writer_pid_.load(); },
            [this](const std::vector<std::string>& payloads) { Heard(payloads); },
            // what was announced while nobody listened
            [this] { watchers_.WakeAll(); }});
  }

  ~PostgresStreamStore() override {
    {
      std::lock_guard lock(queue_mu_);
      stop_ = true;
    }
    queue_cv_.notify_all();
    writer_.join();  // the queued writes are made first
    listener_.reset();
    if (!writer_conn_.Broken()) stamps_.Forget(writer_conn_);
  }

  void CreateAsync(CreateArgs args, Done done) override {
    if (!Storable(args)) return done(WithCode(Code::kInvalidText));
    const std::size_t bytes = args.body.size();
    Enqueue(Op{std::move(args), std::move(done), bytes});
  }
  void AppendAsync(AppendArgs args, Done done) override {
    if (!Storable(args)) return done(WithCode(Code::kInvalidText));
    const std::size_t bytes = args.body.size();
    Enqueue(Op{std::move(args), std::move(done), bytes});
  }
  void DeleteAsync(std::string path, Done done) override {
    if (!pgs::StorableText(path)) return done(WithCode(Code::kNotFound));
    Enqueue(Op{std::move(path), std::move(done), 0});
  }

  OpResult Head(const std::string& path, bool touch) override;
  ReadResult Read(const std::string& path, std::optional<Offset> after) override;
  std::map<std::string, Offset> Tails(const std::vector<std::string>& paths) override;
  std::vector<std::string> Paths(const std::string& prefix) override;

  // Every write's `done` ran after its commit: there is nothing left to wait for.
  void WhenDurable(std::function<void(bool ok)> fn) override { fn(true); }

  std::uint64_t Watch(const std::string& path, std::function<void()> fn) override {
    return watchers_.Add(path, std::move(fn));
  }
  void Unwatch(const std::string& path, std::uint64_t id) override { watchers_.Remove(path, id); }
  void SetChangeHook(std::function<void(const std::string&)> hook) override {
    watchers_.SetHook(std::move(hook));
  }
  const StreamLimits& limits() const override { return options_.limits; }

 private:
  struct Op {
    std::variant<AppendArgs, CreateArgs, std::string> what;  // std::string: a delete's path
    Done done;
    std::size_t bytes = 0;
  };

  void Enqueue(Op op) {
    {
      std::lock_guard lock(queue_mu_);
      if (queue_.size() < options_.limits.max_pending_writes && !stop_) {
        queue_.push_back(std::move(op));
        queue_cv_.notify_one();
        return;
      }
    }
    op.done(WithCode(Code::kFull));
  }

  void WriteLoop();
  void RunAppends(std::vector<Op>& batch);
  void RunOne(Op& op);
  void Sweep();
  // Opens the writer's connection again when it broke; false when the server cannot be reached.
  bool WriterReady();
  // Announces `changed` to the other daemons (delivered at COMMIT).
  Status Announce(const std::vector<std::string>& changed);
  // Stamps the open transaction (pg/commit_outcome.h) and commits it: kOk once it is known to
  // have landed; kStorageDown when it did not (nothing was written), also after its answer was
  // lost and the stamp was looked up; kOutcomeUnknown when the lookup could not tell within
  // outcome_wait.
  Code StampAndCommit();
  // Commits the open transaction, unstamped (the sweep's removals, which another pass repeats):
  // kStorageDown or kOutcomeUnknown when it failed.
  Code Commit();
  bool Stopping() {
    std::lock_guard lock(queue_mu_);
    return stop_;
  }
  void Rollback() { (void)writer_conn_.ExecScript("ROLLBACK"); }
  void Notify(const std::vector<std::string>& changed);
  // A connection that LISTENs on the schema's channel.
  Result<Conn> Listen();
  // Wakes the watchers of the paths other daemons announced (all of them for a kWakeAll).
  void Heard(const std::vector<std::string>& payloads);

  // Runs `body(conn)` on an idle reader connection (opening one while fewer than the bound are
  // open); nullopt when no connection could be had.
  template <class Body>
  auto WithReader(Body body) -> std::optional<decltype(body(std::declval<Conn&>()))>;

  const PostgresStreamsOptions options_;
  const std::string channel_;
  Conn writer_conn_;         // writer thread only
  pg::CommitStamps stamps_;  // writer thread only
  std::atomic<int> writer_pid_{0};
  Watchers watchers_;

  std::mutex queue_mu_;  // guards queue_ and stop_
  std::condition_variable queue_cv_;
  std::deque<Op> queue_;
  bool stop_ = false;

  pg::ReaderPool readers_{options_.max_reader_connections,
                          [this] { return pgs::Connect(options_, false); }};

  std::chrono::steady_clock::time_point last_sweep_{};           // writer thread only
  std::chrono::steady_clock::time_point last_producer_sweep_{};  // writer thread only
  std::thread writer_;
  std::unique_ptr<pg::ListenThread> listener_;
};

void PostgresStreamStore::WriteLoop() {
  for (;;) {
    std::vector<Op> batch;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait_for(lock, kSweepInterval, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) {
        if (stop_) return;
        lock.unlock();
        Sweep();
        continue;
      }
      // A run of appends commits together; a create or a delete alone.
      std::size_t bytes = 0;
      while (!queue_.empty() && batch.size() < options_.max_batch_ops) {
        Op& next = queue_.front();
        const bool append = std::holds_alternative<AppendArgs>(next.what);
        if (!batch.empty() && (!append || bytes + next.bytes > options_.max_batch_bytes)) break;
        bytes += next.bytes;
        batch.push_back(std::move(next));
        queue_.pop_front();
        if (!append) break;
      }
    }
    if (std::holds_alternative<AppendArgs>(batch.front().what)) {
      RunAppends(batch);
    } else {
      RunOne(batch.front());
    }
    Sweep();
  }
}

bool PostgresStreamStore::WriterReady() {
  // A connection the server ended while the writer was idle (a restart, a failover) is replaced
  // before the batch rather than failing it.
  if (writer_conn_.UsableAfterIdle()) return true;
  Result<Conn> reopened = pgs::Connect(options_, true);
  if (!reopened.ok()) return false;
  writer_conn_ = std::move(*reopened);
  writer_pid_ = writer_conn_.BackendPid();
  return true;
}

Status PostgresStreamStore::Announce(const std::vector<std::string>& changed) {
  if (changed.empty()) return Status::Ok();
  return writer_conn_
      .Exec("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p",
            {channel_, pgs::TextArray(pgs::NoticePayloads(changed))})
      .status();
}

Code PostgresStreamStore::Commit() {
  Status committed = writer_conn_.ExecScript("COMMIT");
  if (committed.ok()) return Code::kOk;
  if (writer_conn_.Broken()) return Code::kOutcomeUnknown;  // the answer was lost
  Rollback();
  return Code::kStorageDown;
}

Code PostgresStreamStore::StampAndCommit() {
  // The stamp and COMMIT in one round trip (the server runs no COMMIT after a failed stamp).
  const pg::Statement statements[] = {stamps_.Stamp(), pg::Statement{"COMMIT", {}}};
  const std::int64_t stamp = stamps_.last();
  const std::vector<Result<pg::Rows>> answers = writer_conn_.ExecPipeline(statements);
  const Result<pg::Rows>* failed = pg::FirstFailure(answers);
  if (failed == nullptr) return Code::kOk;
  const Status& why = failed->status();
  if (why.code() != ErrorCode::kUnavailable) {
    Rollback();
    return Code::kStorageDown;
  }
  // The connection broke with COMMIT sent: look the stamp up on whichever server is the primary
  // by then.
  Result<bool> landed = pg::ResolveOutcome(
      stamps_, stamp, writer_conn_, [this] { return pgs::Connect(options_, true); },
      options_.outcome_wait, [this] { return !Stopping(); });
  writer_pid_ = writer_conn_.BackendPid();
  if (!landed.ok()) return Code::kOutcomeUnknown;
  return *landed ? Code::kOk : Code::kStorageDown;
}

void PostgresStreamStore::Notify(const std::vector<std::string>& changed) {
  std::set<std::string> unique(changed.begin(), changed.end());
  for (const std::string& path : unique) watchers_.Changed(path);
}

void PostgresStreamStore::RunAppends(std::vector<Op>& batch) {
  std::vector<pgs::AppendOp> ops;
  ops.reserve(batch.size());
  for (Op& op : batch) ops.push_back(pgs::AppendOp{std::move(std::get<AppendArgs>(op.what)), {}});
  auto fail = [&](Code code) {
    for (Op& op : batch) op.done(WithCode(code));
  };
  if (!WriterReady()) return fail(Code::kStorageDown);
  std::vector<std::string> changed;
  Status written = writer_conn_.ExecScript("BEGIN");
  if (written.ok())
    written = pgs::AppendBatch(writer_conn_, options_.limits, channel_, ops, &changed);
  if (!written.ok()) {
    Rollback();
    return fail(Code::kStorageDown);
  }
  if (const Code committed = StampAndCommit(); committed != Code::kOk) return fail(committed);
  Notify(changed);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move(ops[i].result));
}

void PostgresStreamStore::RunOne(Op& op) {
  if (!WriterReady()) return op.done(WithCode(Code::kStorageDown));
  OpResult result;
  std::vector<std::string> changed;
  // A create that meets another daemon's create of the same path is tried once more: it then
  // finds that stream.
  for (int attempt = 0; attempt < 2; ++attempt) {
    result = OpResult{};
    changed.clear();
    Status written = writer_conn_.ExecScript("BEGIN");
    if (written.ok()) {
      if (const auto* create = std::get_if<CreateArgs>(&op.what)) {
        written = pgs::CreateStream(writer_conn_, options_.limits, *create, &result, &changed);
      } else {
        written =
            pgs::DeleteStream(writer_conn_, std::get<std::string>(op.what), &result, &changed);
      }
    }
    if (written.ok()) written = Announce(changed);
    if (written.ok()) break;
    Rollback();
    if (written.code() != ErrorCode::kConflict || attempt == 1)
      return op.done(WithCode(Code::kStorageDown));
  }
  if (const Code committed = StampAndCommit(); committed != Code::kOk)
    return op.done(WithCode(committed));
  Notify(changed);
  op.done(std::move(result));
}

void PostgresStreamStore::Sweep() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sweep_ < kSweepInterval || !WriterReady()) return;
  last_sweep_ = now;
  // Deleted or expired streams no fork reads through (a source whose forks are all gone goes
  // with its last fork).
  Result<Rows> dead = writer_conn_.Exec(
      "SELECT path FROM ds_streams s WHERE (soft_deleted OR (expires_at_ms IS NOT NULL AND "
      "expires_at_ms <= " +
          std::string(pgs::kNowMs) +
          ") OR (ttl_seconds IS NOT NULL AND last_access_ms + ttl_seconds * 1000 <= " +
          std::string(pgs::kNowMs) +
          ")) AND NOT EXISTS (SELECT 1 FROM ds_streams f WHERE f.forked_from_id = s.id) LIMIT $1",
      {Param(std::int64_t{kSweepStreams})});
  if (!dead.ok()) return;
  for (int i = 0; i < dead->size(); ++i) {
    std::vector<std::string> changed;
    Status removed = writer_conn_.ExecScript("BEGIN");
    if (removed.ok()) removed = pgs::RemoveIfDead(writer_conn_, dead->Text(i, 0), &changed);
    if (removed.ok()) removed = Announce(changed);
    if (!removed.ok()) return Rollback();
    if (Commit() != Code::kOk) return;
    Notify(changed);
  }
  // The messages of removed streams, a window at a time.
  Result<Rows> purge = writer_conn_.Exec("SELECT stream_id FROM ds_dead LIMIT 1");
  if (purge.ok() && purge->size() > 0) {
    const Param id(purge->Int(0, 0));
    Result<Rows> deleted = writer_conn_.Exec(
        "DELETE FROM ds_messages WHERE ctid = ANY(ARRAY(SELECT ctid FROM ds_messages WHERE "
        "stream_id = $1 LIMIT $2))",
        {id, Param(std::int64_t{kPurgeRows})});
    if (deleted.ok() && deleted->Affected() < kPurgeRows)
      (void)writer_conn_.Exec("DELETE FROM ds_dead WHERE stream_id = $1", {id});
  }
  if (now - last_producer_sweep_ >= kProducerSweepInterval) {
    last_producer_sweep_ = now;
    (void)writer_conn_.Exec(
        "DELETE FROM ds_producers WHERE updated_ms < " + std::string(pgs::kNowMs) + " - $1",
        {Param(options_.limits.producer_state_ttl_ms)});
  }
}

Result<Conn> PostgresStreamStore::Listen() {
  AS_ASSIGN_OR_RETURN(Conn conn, pgs::Connect(options_, false));
  AS_RETURN_IF_ERROR(conn.ExecScript("LISTEN " + pgs::QuoteIdentifier(channel_)));
  return conn;
}

void PostgresStreamStore::Heard(const std::vector<std::string>& payloads) {
  std::set<std::string> paths;
  bool all = false;
  for (const std::string& payload : payloads) {
    if (payload == pgs::kWakeAll) {
      all = true;
    } else {
      paths.insert(payload);
    }
  }
  for (const std::string& path : paths) watchers_.Changed(path);
  if (all) watchers_.WakeAll();
}

template <class Body>
auto PostgresStreamStore::WithReader(Body body)
    -> std::optional<decltype(body(std::declval<Conn&>()))> {
  Result<Conn> conn = readers_.Acquire();
  if (!conn.ok()) return std::nullopt;
  auto out = body(*conn);
  readers_.Release(std::move(*conn));  // a broken connection is dropped; the next opens another
  return out;
}

// A sliding TTL's access; skipped while the writer holds the row (its append counts as one).
Status Touch(Conn& conn, const Row& row) {
  if (!row.meta.ttl_seconds) return Status::Ok();
  return conn
      .Exec({"UPDATE ds_streams SET last_access_ms = GREATEST(last_access_ms, $2) WHERE id = "
             "(SELECT id FROM ds_streams WHERE id = $1 FOR UPDATE SKIP LOCKED)",
             {Param(row.meta.id), Param(row.now_ms)},
             /*reuse=*/true})
      .status();
}

// kOk, or why `row` cannot be read.
Result<Code> Readable(Conn& conn, const Row& row) {
  if (!row.Dead()) return Code::kOk;
  AS_ASSIGN_OR_RETURN(bool forks, pgs::HasLiveForks(conn, row.meta.id, row.now_ms));
  return forks ? Code::kGone : Code::kNotFound;
}

OpResult PostgresStreamStore::Head(const std::string& path, bool touch) {
  if (!pgs::StorableText(path)) return WithCode(Code::kNotFound);
  auto result = WithReader([&](Conn& conn) -> Result<OpResult> {
    AS_ASSIGN_OR_RETURN(
        Rows r, conn.Exec({"SELECT " + pgs::RowColumns() + " FROM ds_streams WHERE path = $1",
                           {path},
                           /*reuse=*/true}));
    if (r.size() == 0) return WithCode(Code::kNotFound);
    const Row row = pgs::RowAt(r, 0);
    AS_ASSIGN_OR_RETURN(Code readable, Readable(conn, row));
    if (readable != Code::kOk) return WithCode(readable);
    if (touch) AS_RETURN_IF_ERROR(Touch(conn, row));
    OpResult out;
    out.info = InfoOf(row.meta, row.tail);
    return out;
  });
  if (!result || !result->ok()) return WithCode(Code::kStorageDown);
  return **result;
}

ReadResult PostgresStreamStore::Read(const std::string& path, std::optional<Offset> after) {
  ReadResult out;
  if (!pgs::StorableText(path)) {
    out.code = Code::kNotFound;
    return out;
  }
  auto result = WithReader([&](Conn& conn) -> Result<ReadResult> {
    ReadResult read;
    AS_ASSIGN_OR_RETURN(std::vector<Row> chain, pgs::Chain(conn, path));
    if (chain.empty()) {
      read.code = Code::kNotFound;
      return read;
    }
    const Row& row = chain.front();
    AS_ASSIGN_OR_RETURN(read.code, Readable(conn, row));
    if (read.code != Code::kOk) return read;
    AS_RETURN_IF_ERROR(Touch(conn, row));
    AS_RETURN_IF_ERROR(pgs::ReadMessages(conn, chain, after, row.tail,
                                         options_.limits.max_read_bytes,
                                         options_.limits.max_read_messages, &read));
    read.info = InfoOf(row.meta, row.tail);
    read.json = IsJsonType(row.meta.content_type);
    return read;
  });
  if (!result || !result->ok()) {
    out.code = Code::kStorageDown;
    return out;
  }
  return std::move(**result);
}

std::map<std::string, Offset> PostgresStreamStore::Tails(const std::vector<std::string>& paths) {
  std::vector<std::string> storable;
  for (const std::string& path : paths)
    if (pgs::StorableText(path)) storable.push_back(path);
  auto result = WithReader([&](Conn& conn) -> Result<std::map<std::string, Offset>> {
    std::map<std::string, Offset> out;
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec({"SELECT " + pgs::RowColumns() +
                                               " FROM ds_streams WHERE path = ANY($1::text[])",
                                           {pgs::TextArray(storable)},
                                           /*reuse=*/true}));
    for (int i = 0; i < r.size(); ++i) {
      const Row row = pgs::RowAt(r, i);
      if (!row.Dead()) out[row.meta.path] = row.tail;
    }
    return out;
  });
  if (!result || !result->ok()) return {};
  return std::move(**result);
}

std::vector<std::string> PostgresStreamStore::Paths(const std::string& prefix) {
  if (!pgs::StorableText(prefix)) return {};
  auto result = WithReader([&](Conn& conn) -> Result<std::vector<std::string>> {
    AS_ASSIGN_OR_RETURN(
        Rows r, conn.Exec("SELECT path FROM ds_streams WHERE starts_with(path, $1) ORDER BY path "
                          "LIMIT $2",
                          {prefix, Param(static_cast<std::int64_t>(options_.limits.max_streams))}));
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i) out.push_back(r.Text(i, 0));
    return out;
  });
  if (!result || !result->ok()) return {};
  return std::move(**result);
}

}  // namespace

Result<std::unique_ptr<StreamStore>> OpenPostgresStreamStore(PostgresStreamsOptions options) {
  if (options.conninfo.empty())
    return Error(ErrorCode::kInvalidArgument, "the PostgreSQL streams need a connection string");
  AS_ASSIGN_OR_RETURN(Conn setup, Conn::Open(options.conninfo));
  AS_RETURN_IF_ERROR(pgs::EnsureSchema(setup, options.schema));
  AS_ASSIGN_OR_RETURN(Conn writer, pgs::Connect(options, true));
  AS_ASSIGN_OR_RETURN(Conn listening, pgs::Connect(options, false));
  AS_RETURN_IF_ERROR(
      listening.ExecScript("LISTEN " + pgs::QuoteIdentifier(pgs::Channel(options.schema))));
  pg::CommitStamps stamps("ds_commit_stamps", system::RandomId("writer", 32));
  AS_RETURN_IF_ERROR(stamps.Register(writer));
  return std::unique_ptr<StreamStore>(std::make_unique<PostgresStreamStore>(
      std::move(options), std::move(writer), std::move(listening), std::move(stamps)));
}

}  // namespace agentstream::streams
