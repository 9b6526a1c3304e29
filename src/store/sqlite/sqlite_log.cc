// The SQLite log's lifecycle and its writer's commit path: opening the file, starting and stopping
// the writer, syncer and checkpointer, appends, and the group commit that makes a batch durable
// before it is acknowledged (sqlite_log.h).
#include "store/sqlite/sqlite_log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <variant>

#include "sqlite/db.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/record_batch.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/sqlite_log_impl.h"
#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/sqlite_writer.h"
#include "store/sqlite/wal_syncer.h"

namespace agentstream {
namespace sqlite {

SqliteEventLog::SqliteEventLog(SqliteLogOptions options, Db write_db)
    : options_(std::move(options)),
      writer_state_(std::move(write_db), options_.limits, options_.max_cached_sessions),
      readers_(options_.path, options_.vfs, options_.max_reader_connections, options_.limits,
               &floor_),
      search_runner_(store_internal::BoundSearchSlices(options_.search_slices,
                                                       options_.max_reader_connections)),
      queue_(Queue::Options{options_.max_queued_requests, options_.max_batch_requests,
                            std::chrono::microseconds(options_.commit_linger_micros)}) {}

Status SqliteEventLog::Start() {
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

SqliteEventLog::~SqliteEventLog() {
  queue_.Stop();
  syncer_.reset();  // completes every commit still waiting for its sync
  checkpointer_.reset();
}

void SqliteEventLog::AppendAsync(AppendRequest request, AppendCallback done) {
  Status checked = store_internal::CheckBatch(request.events, options_.limits, false);
  if (!checked.ok()) return done(checked);
  queue_.Enqueue(PendingAppend{std::move(request), std::move(done)});
}

ListenerRegistration SqliteEventLog::SubscribeCommits(CommitListener listener) {
  return listeners_->Add(std::move(listener));
}

Status SqliteEventLog::Health() { return queue_.Writable(); }

LogStats SqliteEventLog::Stats() {
  LogStats stats = queue_.stats();
  if (syncer_) stats.sync_micros = syncer_->sync_micros();
  return stats;
}

void SqliteEventLog::RunBatch(std::vector<Op>& batch) {
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
  committed->time = w.now();
  // Only this thread gives the syncer work, so an idle syncer stays idle: a commit synced inside
  // COMMIT can then be acknowledged here, in order, without a thread hop.
  if (!overlapped || (sync_inline && syncer_->Idle())) return Finish(*committed, Status::Ok());
  const auto appends = static_cast<std::size_t>(
      std::count_if(committed->ops.begin(), committed->ops.end(),
                    [](const Op& op) { return std::holds_alternative<PendingAppend>(op); }));
  syncer_->Submit([this, committed](const Status& synced) { Finish(*committed, synced); }, appends,
                  !sync_inline);
  if (wal_frames_.load() > kMaxWalFrames) {
    // The checkpointer is not keeping up: wait for it rather than let the WAL grow.
    syncer_->Drain();
    (void)checkpointer_->RunNow();
  }
}

void SqliteEventLog::Finish(Committed& c, const Status& synced) {
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
  const auto records = Queue::TakeRecords(c.ops, c.outcomes, c.results, c.time);
  for (const auto& [id, t] : c.touched) {
    listeners_->Notify(CommitNotice{SessionId(id), t.epoch, t.after,
                                    Queue::RecordsEndingAt(records, id, t.epoch, t.after)});
  }
  Queue::Acknowledge(c.ops, c.outcomes, c.results);
}

int SqliteEventLog::OnWalCommit(void* self, sqlite3* /*db*/, const char* /*name*/, int frames) {
  auto* log = static_cast<SqliteEventLog*>(self);
  log->wal_frames_.store(frames);
  if (frames >= kCheckpointFrames) log->checkpointer_->Poke();
  return SQLITE_OK;
}

Status SqliteEventLog::ApplyAppend(Writer& w, const AppendRequest& request, AppendResult& result) {
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

}  // namespace sqlite

Result<std::unique_ptr<EventLog>> OpenSqliteEventLog(SqliteLogOptions options) {
  if (options.path.empty())
    return Error(ErrorCode::kInvalidArgument, "the SQLite log needs a path");
  AS_ASSIGN_OR_RETURN(sqlite::Db db,
                      sqlite::Db::Open(options.path, {.create = true, .vfs = options.vfs}));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=WAL"));
  // Overlapped fsync commits run unsynced and are synced by the WalSyncer (see sqlite_log.h).
  const char* sync = options.durability == Durability::kOs ? "PRAGMA synchronous=NORMAL"
                     : options.overlap_syncs               ? "PRAGMA synchronous=OFF"
                                                           : "PRAGMA synchronous=FULL";
  AS_RETURN_IF_ERROR(db.Exec(sync));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA wal_autocheckpoint=16384"));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA cache_size=-65536"));
  AS_RETURN_IF_ERROR(sqlite::EnsureSchema(db));
  auto log = std::make_unique<sqlite::SqliteEventLog>(std::move(options), std::move(db));
  AS_RETURN_IF_ERROR(log->Start());
  return std::unique_ptr<EventLog>(std::move(log));
}

}  // namespace agentstream
