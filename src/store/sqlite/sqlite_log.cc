#include "store/sqlite/sqlite_log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <variant>

#include "sqlite/db.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/record_batch.h"
#include "store/search_slices.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/durable_floor.h"
#include "store/sqlite/sqlite_consumer_store.h"
#include "store/sqlite/sqlite_device_store.h"
#include "store/sqlite/sqlite_item_index.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/sqlite_search_index.h"
#include "store/sqlite/sqlite_writer.h"
#include "store/sqlite/wal_syncer.h"
#include "system/wall_clock.h"

namespace agentstream {

namespace {

using sqlite::Db;
using sqlite::Stmt;
using store_internal::AppendPlan;

using sqlite::Touched;
using sqlite::Writer;

// SQL failures of a write are recorded on the Writer and fail the whole batch.
using Queue = sqlite::WriteQueue;
using Op = Queue::Op;
using PendingAppend = Queue::Append;
using PendingControl = Queue::Control;

class SqliteEventLog final : public EventLog,
                             public Coordination,
                             public ItemIndexStore,
                             public SearchIndexStore {
 public:
  SqliteEventLog(SqliteLogOptions options, Db write_db)
      : options_(std::move(options)),
        writer_state_(std::move(write_db), options_.limits, options_.max_cached_sessions),
        readers_(options_.path, options_.vfs, options_.max_reader_connections, options_.limits,
                 &floor_),
        search_runner_(store_internal::BoundSearchSlices(options_.search_slices,
                                                         options_.max_reader_connections)),
        queue_(Queue::Options{options_.max_queued_requests, options_.max_batch_requests,
                              std::chrono::microseconds(options_.commit_linger_micros)}) {}

  Status Start() {
    AS_RETURN_IF_ERROR(writer_state_.Prepare());
    if (Overlapped(options_)) {
      AS_ASSIGN_OR_RETURN(checkpointer_, sqlite::Checkpointer::Start(options_.path, options_.vfs));
      syncer_ = std::make_unique<sqlite::WalSyncer>(
          options_.path, options_.vfs, kMaxCommitsInSync,
          std::chrono::microseconds(options_.commit_linger_micros));
      // A WAL hook replaces SQLite's own checkpoints on the writer's connection.
      sqlite3_wal_hook(writer_state_.db().raw(), &SqliteEventLog::OnWalCommit, this);
    }
    queue_.Start([this](std::vector<Op>& batch) { RunBatch(batch); });
    return Status::Ok();
  }

  ~SqliteEventLog() override {
    queue_.Stop();
    syncer_.reset();  // completes every commit still waiting for its sync
    checkpointer_.reset();
  }

  // Whether commits are synced by the WalSyncer rather than inside COMMIT.
  static bool Overlapped(const SqliteLogOptions& options) {
    return options.durability == Durability::kFsync && options.overlap_syncs;
  }

  Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                     std::vector<NewEvent> initial) override {
    if (id.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>(
        [&, meta = std::move(meta)](Writer& w, AppendResult& out) mutable -> Status {
          auto existing = w.Load(id);
          if (existing.ok())
            return Error(ErrorCode::kAlreadyExists, "session " + id.str() + " exists");
          if (existing.status().code() != ErrorCode::kNotFound) return existing.status();
          AS_ASSIGN_OR_RETURN(Writer::Cached * cached,
                              w.InsertSession(id, std::move(meta), std::nullopt));
          return AppendInitial(w, id, *cached, initial, out);
        });
  }

  Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                            SessionMeta meta, std::vector<NewEvent> initial) override {
    if (child.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>(
        [&, meta = std::move(meta)](Writer& w, AppendResult& out) mutable -> Status {
          AS_ASSIGN_OR_RETURN(Writer::Cached * p, w.Load(parent));
          AS_RETURN_IF_ERROR(store_internal::CheckPrefix(p->state, parent, at));
          auto existing = w.Load(child);
          if (existing.ok())
            return Error(ErrorCode::kAlreadyExists, "session " + child.str() + " exists");
          if (existing.status().code() != ErrorCode::kNotFound) return existing.status();
          AS_ASSIGN_OR_RETURN(
              Writer::Cached * cached,
              w.InsertSession(child, std::move(meta), HistoryBase{parent, at.epoch, at.seq}));
          return AppendInitial(w, child, *cached, initial, out);
        });
  }

  Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                              std::vector<NewEvent> initial) override {
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>([&](Writer& w, AppendResult& out) -> Status {
      AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
      AS_RETURN_IF_ERROR(store_internal::CheckPrefix(cached->state, session, to));
      AS_RETURN_IF_ERROR(w.StartEpoch(*cached, HistoryBase{session, to.epoch, to.seq}));
      return AppendInitial(w, session, *cached, initial, out);
    });
  }

  Result<SessionInfo> GetSession(const SessionId& id) override { return readers_.GetSession(id); }

  Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                std::size_t limit) override {
    return readers_.ListSessions(after, limit);
  }

  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(id));
             AS_RETURN_IF_ERROR(
                 store_internal::CheckOwner(cached->state, id, update.owner_generation));
             AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("UPDATE sessions SET "
                                                        "persistence=coalesce(?, persistence), "
                                                        "status=coalesce(?, status) WHERE key=?"));
             auto bind = [&](int i, const std::optional<std::string>& v) {
               if (v)
                 s.Bind(i, *v);
               else
                 s.BindNull(i);
             };
             bind(1, update.persistence_handle);
             bind(2, update.status_snapshot);
             s.Bind(3, cached->key);
             AS_RETURN_IF_ERROR(w.Check(s.Exec()));
             SessionMeta& meta = cached->state.meta;
             if (update.persistence_handle) meta.persistence_handle = *update.persistence_handle;
             if (update.status_snapshot) meta.status_snapshot = *update.status_snapshot;
             return Status::Ok();
           })
        .status();
  }

  void AppendAsync(AppendRequest request, AppendCallback done) override {
    Status checked = store_internal::CheckBatch(request.events, options_.limits, false);
    if (!checked.ok()) return done(checked);
    queue_.Enqueue(PendingAppend{std::move(request), std::move(done)});
  }

  Result<ReadResult> Read(const ReadRequest& request) override { return readers_.Read(request); }
  Result<Cursor> Tail(const SessionId& session) override { return readers_.Tail(session); }

  Subscription SubscribeCommits(CommitListener listener) override {
    return listeners_->Add(std::move(listener));
  }

  Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
             AS_RETURN_IF_ERROR(store_internal::CheckCheckpoint(cached->state, session, checkpoint,
                                                                options_.limits));
             AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("INSERT OR REPLACE INTO "
                                                        "checkpoints(session, epoch, seq, body) "
                                                        "VALUES(?,?,?,?)"));
             s.Bind(1, session.str())
                 .Bind(2, static_cast<std::int64_t>(checkpoint.epoch.value()))
                 .Bind(3, static_cast<std::int64_t>(checkpoint.seq.value()))
                 .Bind(4, checkpoint.body);
             return w.Check(s.Exec());
           })
        .status();
  }

  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session) override {
    return readers_.LoadCheckpoint(session);
  }

  ConsumerStore& consumers() override { return consumers_; }
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override { return devices_; }
  ItemIndexStore* item_index() override { return this; }
  SearchIndexStore* search_index() override { return this; }

  // ---- ItemIndexStore: reads on a reader connection, writes on the writer thread ----
  Result<std::optional<ItemIndexState>> LoadItemState(const SessionId& session,
                                                      Epoch epoch) override {
    return readers_.Query<std::optional<ItemIndexState>>(
        [&](Db& db) { return sqlite::LoadItemState(db, session, epoch); });
  }
  Result<std::optional<HistoryBase>> EpochBase(const SessionId& session, Epoch epoch) override {
    return readers_.Query<std::optional<HistoryBase>>(
        [&](Db& db) { return sqlite::LoadEpochBase(db, session, epoch); });
  }
  Result<std::vector<ItemRow>> ItemsBetween(const SessionId& session, Epoch epoch, std::uint64_t lo,
                                            std::uint64_t hi) override {
    return readers_.Query<std::vector<ItemRow>>(
        [&](Db& db) { return sqlite::LoadItemsBetween(db, session, epoch, lo, hi); });
  }
  Result<std::vector<ItemRow>> ItemsByKeys(const SessionId& session, Epoch epoch,
                                           const std::vector<std::string>& keys) override {
    return readers_.Query<std::vector<ItemRow>>(
        [&](Db& db) { return sqlite::LoadItemsByKeys(db, session, epoch, keys); });
  }
  Result<std::optional<std::uint64_t>> FirstOrdinalStartingAfter(const SessionId& session,
                                                                 Epoch epoch, Seq seq) override {
    return readers_.Query<std::optional<std::uint64_t>>(
        [&](Db& db) { return sqlite::LoadFirstOrdinalStartingAfter(db, session, epoch, seq); });
  }
  Result<std::vector<ItemRow>> ItemsOpenAcross(const SessionId& session, Epoch epoch,
                                               Seq seq) override {
    return readers_.Query<std::vector<ItemRow>>(
        [&](Db& db) { return sqlite::LoadItemsOpenAcross(db, session, epoch, seq); });
  }
  Status CommitItems(const SessionId& session, Epoch epoch,
                     const std::optional<ItemIndexState>& expected, const ItemIndexState& next,
                     const std::vector<ItemRow>& rows) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             Result<std::optional<ItemIndexState>> stored =
                 sqlite::LoadItemState(w.db(), session, epoch);
             if (!stored.ok()) return w.Check(stored.status());
             if (*stored != expected)
               return Error(ErrorCode::kConflict,
                            "the timeline index of " + session.str() + " moved on meanwhile");
             return w.Check(sqlite::StoreItems(w.db(), session, epoch, next, rows));
           })
        .status();
  }
  Status DropItems(const SessionId& session, Epoch epoch) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             return w.Check(sqlite::DeleteItems(w.db(), session, epoch));
           })
        .status();
  }

  // ---- SearchIndexStore: reads on a reader connection, writes on the writer thread ----
  Result<std::optional<Cursor>> LoadSearchState(const SessionId& session) override {
    return readers_.Query<std::optional<Cursor>>(
        [&](Db& db) { return sqlite::LoadSearchState(db, session); });
  }
  Status CommitDocuments(const SessionId& session, const std::optional<Cursor>& expected,
                         Cursor next, const std::vector<SearchDocument>& documents) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             Result<std::optional<Cursor>> stored = sqlite::LoadSearchState(w.db(), session);
             if (!stored.ok()) return w.Check(stored.status());
             if (*stored != expected)
               return Error(ErrorCode::kConflict,
                            "the search index of " + session.str() + " moved on meanwhile");
             return w.Check(sqlite::StoreDocuments(w.db(), session, next, documents));
           })
        .status();
  }
  // Each slice on a reader connection of its own, in a read transaction of its own.
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override {
    return store_internal::SearchSlices(
        search_runner_, query.limit, [&](std::size_t, const std::vector<std::size_t>& parts) {
          return readers_.Query<std::vector<store_internal::RankedHit>>(
              [&](Db& db) { return sqlite::FindDocuments(db, query, parts); });
        });
  }

  Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                      std::int64_t ttl_ms) override {
    return RunControl<OwnerGrant>([&](Writer& w, OwnerGrant& out) -> Status {
      AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
      const TimestampMs now = system::WallClockMs();
      // Decided on a copy: a refused or failed grant leaves the cached picture as stored.
      store_internal::SessionState state = cached->state;
      AS_ASSIGN_OR_RETURN(out, store_internal::GrantOwnership(state, session, owner, now, ttl_ms));
      cached->state.owner = state.owner;
      AS_RETURN_IF_ERROR(w.StoreOwner(*cached));
      AS_ASSIGN_OR_RETURN(Stmt h,
                          w.db().Prepare("INSERT INTO owner_history(session, generation, owner, "
                                         "granted_ms, epoch, seq) VALUES(?,?,?,?,?,?)"));
      h.Bind(1, session.str()).Bind(2, sqlite::ToInt64(out.lease.generation)).Bind(3, owner);
      h.Bind(4, now).Bind(5, sqlite::ToInt64(state.current().value()));
      h.Bind(6, sqlite::ToInt64(state.epochs.back().tail.value()));
      return w.Check(h.Exec());
    });
  }

  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override {
    return RunControl<std::vector<SessionId>>(
        [&](Writer& w, std::vector<SessionId>& lost) -> Status {
          const TimestampMs now = system::WallClockMs();
          for (const auto& [session, generation] : leases) {
            auto cached = w.Load(session);
            if (!cached.ok()) {
              if (!w.io().ok()) return w.io();
              lost.push_back(session);
              continue;
            }
            if (!store_internal::RenewOwnership((*cached)->state, owner, generation, now, ttl_ms)) {
              lost.push_back(session);
              continue;
            }
            AS_RETURN_IF_ERROR(w.StoreOwner(**cached));
          }
          return Status::Ok();
        });
  }

  Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
             store_internal::SessionState state = cached->state;
             AS_RETURN_IF_ERROR(store_internal::ReleaseOwnership(state, session, generation));
             cached->state.owner = state.owner;
             return w.StoreOwner(*cached);
           })
        .status();
  }

  Result<OwnerLease> GetOwnership(const SessionId& session) override {
    return readers_.GetOwnership(session, system::WallClockMs());
  }
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override {
    return readers_.ListExpiredOwnerships(system::WallClockMs(), limit);
  }
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) override {
    return readers_.OwnershipHistory(session);
  }

  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override {
    return RunControl<bool>([&](Writer& w, bool&) -> Status {
             const TimestampMs now = system::WallClockMs();
             AS_ASSIGN_OR_RETURN(std::optional<DaemonRecord> stored,
                                 sqlite::LoadDaemon(w.db(), self.id));
             AS_RETURN_IF_ERROR(store_internal::CheckDaemonIdentity(stored.value_or(DaemonRecord{}),
                                                                    self, now, ttl_ms));
             AS_ASSIGN_OR_RETURN(
                 Stmt s, w.db().Prepare("INSERT OR REPLACE INTO daemons(id, url, host, data_dir, "
                                        "started_ms, heartbeat_ms) VALUES(?,?,?,?,?,?)"));
             s.Bind(1, self.id).Bind(2, self.url).Bind(3, self.host).Bind(4, self.data_dir);
             s.Bind(5, self.started_ms).Bind(6, now);
             return w.Check(s.Exec());
           })
        .status();
  }
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) override {
    return readers_.GetDaemon(id, system::WallClockMs());
  }
  Result<std::string> SharedSecret(const std::string& name, const std::string&) override {
    return Error(ErrorCode::kUnavailable,
                 "the SQLite store keeps no shared secrets (asked for " + name + ")");
  }

  Status Health() override { return queue_.Writable(); }

  LogStats Stats() override {
    LogStats stats = queue_.stats();
    if (syncer_) stats.sync_micros = syncer_->sync_micros();
    return stats;
  }

 private:
  // Appends the initial events of a create, fork or rewind.
  static Status AppendInitial(Writer& w, const SessionId& id, Writer::Cached& cached,
                              const std::vector<NewEvent>& initial, AppendResult& out) {
    auto& epoch = cached.state.epochs.back();
    out = AppendResult{cached.state.current(), epoch.tail.next(),
                       Seq(epoch.tail.value() + initial.size()), false};
    AS_RETURN_IF_ERROR(w.InsertEvents(cached.key, out.epoch, out.first_seq, initial));
    if (auto meta = store_internal::MetaAfter(cached.state.meta, initial))
      AS_RETURN_IF_ERROR(w.StoreMeta(cached, std::move(*meta)));
    epoch.tail = out.last_seq;
    w.Touch(id, out.epoch, Seq(out.first_seq.value() - 1), epoch.tail);
    return Status::Ok();
  }

  template <class T, class Body>
  Result<T> RunControl(Body body) {
    return queue_.template RunControl<T>(std::move(body));
  }

  // One commit's ops and outcomes, waiting for the sync that makes it durable.
  struct Committed {
    std::vector<Op> ops;
    std::vector<Status> outcomes;
    std::vector<AppendResult> results;
    std::map<std::string, Touched> touched;
    std::uint64_t number = 0;
  };

  void RunBatch(std::vector<Op>& batch) {
    if (Status sticky = queue_.sticky(); !sticky.ok()) {
      Status refused = Error(ErrorCode::kUnavailable,
                             "the log refuses writes until reopened, after: " + sticky.ToString());
      for (Op& op : batch) Queue::Complete(op, refused);
      return;
    }
    Writer& w = writer_state_;
    const auto started = std::chrono::steady_clock::now();
    w.BeginBatch();
    auto committed = std::make_shared<Committed>();
    committed->outcomes.resize(batch.size());
    committed->results.resize(batch.size());
    committed->number = ++commit_number_;
    // A small commit syncs inside COMMIT (synchronous=FULL, so no reader sees it before it is
    // durable) when no sync is running: for a few appends, overlapping buys nothing and costs a
    // thread hop. A large one overlaps its sync with the writer's work on the next commit.
    // Sessions, forks, rewinds, metadata and positions always sync inside COMMIT.
    const bool overlapped = syncer_ != nullptr;
    const bool sync_inline =
        overlapped && ((batch.size() < options_.min_overlapped_requests && syncer_->Idle()) ||
                       std::any_of(batch.begin(), batch.end(), [](const Op& op) {
                         return std::holds_alternative<PendingControl>(op);
                       }));
    if (sync_inline) (void)w.Check(w.db().Exec("PRAGMA synchronous=FULL"));
    Status begun = w.io().ok() ? w.Check(w.db().Exec("BEGIN IMMEDIATE")) : w.io();
    for (std::size_t i = 0; i < batch.size() && begun.ok() && w.io().ok(); ++i) {
      if (auto* a = std::get_if<PendingAppend>(&batch[i])) {
        committed->outcomes[i] = ApplyAppend(w, a->request, committed->results[i]);
      } else {
        committed->outcomes[i] = std::get<PendingControl>(batch[i]).run(w);
      }
    }
    if (w.io().ok()) (void)w.FlushBatches();
    if (overlapped && !sync_inline) {
      for (const auto& [id, t] : w.touched()) floor_.Hold(id, t.epoch, t.before, committed->number);
    }
    Status status = w.io().ok() ? w.Check(w.db().Exec("COMMIT")) : w.io();
    if (sync_inline) {
      floor_.Clear();  // the full sync covered every earlier commit too
      if (status.ok()) status = w.Check(w.db().Exec("PRAGMA synchronous=OFF"));
    }
    if (!status.ok()) {
      (void)w.db().Exec("ROLLBACK");
      w.DropCache();
      const Status failed =
          Error(ErrorCode::kIoError, "commit failed, outcome unknown: " + status.ToString());
      queue_.FailSticky(failed);
      for (Op& op : batch) Queue::Complete(op, failed);
      return;
    }
    queue_.CountCommit(std::chrono::steady_clock::now() - started);
    committed->ops = std::move(batch);
    batch.clear();
    committed->touched = w.touched();
    // Only this thread gives the syncer work, so an idle syncer stays idle: a commit synced inside
    // COMMIT can then be acknowledged here, in order, without a thread hop.
    if (!overlapped || (sync_inline && syncer_->Idle())) return Finish(*committed, Status::Ok());
    const auto appends = static_cast<std::size_t>(
        std::count_if(committed->ops.begin(), committed->ops.end(),
                      [](const Op& op) { return std::holds_alternative<PendingAppend>(op); }));
    syncer_->Submit([this, committed](const Status& synced) { Finish(*committed, synced); },
                    appends, !sync_inline);
    if (wal_frames_.load() > kMaxWalFrames) {
      // The checkpointer is not keeping up: wait for it rather than let the WAL grow.
      syncer_->Drain();
      (void)checkpointer_->RunNow();
    }
  }

  // Acknowledges a commit once it is durable (or fails it when its sync failed). Runs in commit
  // order, on the syncer thread (or the writer's when commits sync inside COMMIT).
  void Finish(Committed& c, const Status& synced) {
    if (!synced.ok()) {
      const Status failed =
          Error(ErrorCode::kIoError, "sync failed, outcome unknown: " + synced.ToString());
      queue_.FailSticky(failed);
      for (Op& op : c.ops) Queue::Complete(op, failed);
      return;
    }
    queue_.CountAcknowledged(c.ops, c.outcomes, c.results);
    for (const auto& [id, t] : c.touched) floor_.Release(id, t.after, c.number);
    // Listeners hear of a commit before any of its appends is acknowledged.
    for (const auto& [id, t] : c.touched) {
      listeners_->Notify(CommitNotice{SessionId(id), t.epoch, t.after});
    }
    Queue::Acknowledge(c.ops, c.outcomes, c.results);
  }

  static int OnWalCommit(void* self, sqlite3* /*db*/, const char* /*name*/, int frames) {
    auto* log = static_cast<SqliteEventLog*>(self);
    log->wal_frames_.store(frames);
    if (frames >= kCheckpointFrames) log->checkpointer_->Poke();
    return SQLITE_OK;
  }

  static Status ApplyAppend(Writer& w, const AppendRequest& request, AppendResult& result) {
    AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(request.session));
    AS_ASSIGN_OR_RETURN(AppendPlan plan, store_internal::PlanAppend(cached->state, request));
    result = plan.result;
    if (plan.result.duplicate) return Status::Ok();
    AS_RETURN_IF_ERROR(w.InsertEvents(cached->key, plan.result.epoch, plan.result.first_seq,
                                      request.events, request.owner_generation.value_or(0)));
    AS_RETURN_IF_ERROR(w.StoreProducer(cached->key, plan));
    if (plan.meta) AS_RETURN_IF_ERROR(w.StoreMeta(*cached, *plan.meta));
    store_internal::ApplyAppend(cached->state, plan);
    w.Touch(request.session, plan.result.epoch, Seq(plan.result.first_seq.value() - 1),
            plan.result.last_seq);
    return Status::Ok();
  }

  // A checkpoint is asked for at this many WAL frames (pages), and the writer waits for one
  // beyond kMaxWalFrames. Commits waiting for their sync are bounded by kMaxCommitsInSync.
  static constexpr int kCheckpointFrames = 4096;  // 16 MiB with 4 KiB pages
  static constexpr int kMaxWalFrames = 65536;     // 256 MiB
  static constexpr std::size_t kMaxCommitsInSync = 8;

  const SqliteLogOptions options_;
  sqlite::DurableFloor floor_;
  Writer writer_state_;  // writer thread only
  sqlite::ReaderPool readers_;
  store_internal::SliceRunner search_runner_;  // a search's slices run at once on it
  std::unique_ptr<sqlite::Checkpointer> checkpointer_;
  std::unique_ptr<sqlite::WalSyncer> syncer_;
  std::uint64_t commit_number_ = 0;  // writer thread only
  std::atomic<int> wal_frames_{0};
  std::shared_ptr<store_internal::CommitListeners> listeners_ =
      std::make_shared<store_internal::CommitListeners>();

  Queue queue_;  // after what its writer thread uses: it stops first
  sqlite::SqliteConsumerStore consumers_{queue_, readers_};  // uses the queue and the readers
  sqlite::SqliteDeviceStore devices_{queue_, readers_};
};

}  // namespace

Result<std::unique_ptr<EventLog>> OpenSqliteEventLog(SqliteLogOptions options) {
  if (options.path.empty())
    return Error(ErrorCode::kInvalidArgument, "the SQLite log needs a path");
  AS_ASSIGN_OR_RETURN(Db db, Db::Open(options.path, {.create = true, .vfs = options.vfs}));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=WAL"));
  // Overlapped fsync commits run unsynced and are synced by the WalSyncer (see sqlite_log.h).
  const char* sync = options.durability == Durability::kOs ? "PRAGMA synchronous=NORMAL"
                     : options.overlap_syncs               ? "PRAGMA synchronous=OFF"
                                                           : "PRAGMA synchronous=FULL";
  AS_RETURN_IF_ERROR(db.Exec(sync));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint=16384"));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA cache_size=-65536"));
  AS_RETURN_IF_ERROR(sqlite::EnsureSchema(db));
  auto log = std::make_unique<SqliteEventLog>(std::move(options), std::move(db));
  AS_RETURN_IF_ERROR(log->Start());
  return std::unique_ptr<EventLog>(std::move(log));
}

}  // namespace agentstream
