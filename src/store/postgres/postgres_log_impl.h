// Internal to the PostgreSQL backend: the PostgresEventLog class behind OpenPostgresEventLog
// (postgres_log.h). Its methods are defined by job: the lifecycle and the writer's commit path in
// postgres_log.cc, sessions, metadata, checkpoints and their snapshot reads in
// postgres_log_sessions.cc, ownership leases, the daemon registry and shared secrets in
// postgres_log_coordination.cc, and the timeline and search indexes in postgres_log_index.cc.
// Included only by those files.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pg/commit_outcome.h"
#include "pg/listen_thread.h"
#include "pg/pg.h"
#include "pg/setup.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/coordination.h"
#include "store/event_log.h"
#include "store/item_index.h"
#include "store/log_state.h"
#include "store/postgres/postgres_consumer_store.h"
#include "store/postgres/postgres_device_store.h"
#include "store/postgres/postgres_log.h"
#include "store/postgres/postgres_schedule_store.h"
#include "store/postgres/postgres_search_index.h"
#include "store/postgres/snapshot.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"
#include "store/search_index.h"
#include "store/search_slices.h"

namespace agentstream::pg {

// A connection of the log to options.conninfo; the writer's (`writer`) turns synchronous_commit
// off under Durability::kOs and has its idle transactions ended by the server
// (options.writer_idle_in_transaction).
Result<Conn> Connect(const PostgresLogOptions& options, bool writer);

// A connection that LISTENs on the schema's commit channel.
Result<Conn> Listen(const PostgresLogOptions& options);

// The EventLog on a PostgreSQL server (postgres_log.h), which is also the store's Coordination
// and its timeline and search indexes: every write runs in a batch transaction on the thread of
// one of writers_, every read on a connection of readers_.
class PostgresEventLog final : public EventLog,
                               public Coordination,
                               public ItemIndexStore,
                               public SearchIndexStore {
  using Queue = pg::WriteQueue;
  using Op = Queue::Op;
  using PendingAppend = Queue::Append;
  using PendingControl = Queue::Control;
  using AppendPlan = store_internal::AppendPlan;

 public:
  // A writer connection with the stamps of its commits (registered already).
  struct WriterConnection {
    Conn conn;
    pg::CommitStamps stamps;
  };

  // `writers`: options.writer_connections of them. `listening` already LISTENs, so every commit
  // made after the log is open is heard.
  PostgresEventLog(PostgresLogOptions options, std::vector<WriterConnection> writers,
                   Conn listening);
  ~PostgresEventLog() override;

  // ---- sessions, metadata, checkpoints and their reads (postgres_log_sessions.cc) ----
  Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                     std::vector<NewEvent> initial) override;
  Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                            SessionMeta meta, std::vector<NewEvent> initial) override;
  Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                              std::vector<NewEvent> initial) override;
  Result<SessionInfo> GetSession(const SessionId& id) override;
  Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                std::size_t limit) override;
  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override;
  Result<ReadResult> Read(const ReadRequest& request) override;
  Result<Cursor> Tail(const SessionId& session) override;
  Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) override;
  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session) override;

  // ---- appends and commit notices (postgres_log.cc) ----
  void AppendAsync(AppendRequest request, AppendCallback done) override;
  ListenerRegistration SubscribeCommits(CommitListener listener) override;

  ConsumerStore& consumers() override { return consumers_; }
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override { return devices_; }
  ScheduleStore& schedules() override { return schedules_; }
  ItemIndexStore* item_index() override { return this; }
  SearchIndexStore* search_index() override { return this; }

  // ---- ItemIndexStore: reads on a reader connection, writes in the writer's batch ----
  // (postgres_log_index.cc)
  Result<std::optional<ItemIndexState>> LoadItemState(const SessionId& session,
                                                      Epoch epoch) override;
  Result<std::optional<HistoryBase>> EpochBase(const SessionId& session, Epoch epoch) override;
  Result<std::vector<ItemRow>> ItemsBetween(const SessionId& session, Epoch epoch, std::uint64_t lo,
                                            std::uint64_t hi) override;
  Result<std::vector<ItemRow>> ItemsByKeys(const SessionId& session, Epoch epoch,
                                           const std::vector<std::string>& keys) override;
  Result<std::optional<std::uint64_t>> FirstOrdinalStartingAfter(const SessionId& session,
                                                                 Epoch epoch, Seq seq) override;
  Result<std::vector<ItemRow>> ItemsOpenAcross(const SessionId& session, Epoch epoch,
                                               Seq seq) override;
  Result<std::vector<Status>> CommitItemsTogether(std::span<const ItemCommit> commits) override;
  Status DropItems(const SessionId& session, Epoch epoch) override;

  // ---- SearchIndexStore: reads on a reader connection, writes in the writer's batch ----
  // (postgres_log_index.cc)
  Result<std::optional<Cursor>> LoadSearchState(const SessionId& session) override;
  Result<std::vector<Status>> CommitDocumentsTogether(
      std::span<const DocumentCommit> commits) override;
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override;

  // ---- Coordination (postgres_log_coordination.cc) ----
  Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                      std::int64_t ttl_ms) override;
  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override;
  Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) override;
  Result<OwnerLease> GetOwnership(const SessionId& session) override;
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override;
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) override;
  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override;
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) override;
  Result<std::string> SharedSecret(const std::string& name, const std::string& candidate) override;

  // ---- health (postgres_log.cc) ----
  Status Health() override;
  LogStats Stats() override;

 private:
  // One writer connection with its thread and queue. While a session has writes queued or
  // committing, its new ones go to the same writer (Claim), so that its commits and their notices
  // keep their order; the writers commit side by side, one's statements running while another's
  // COMMIT waits for the server's WAL flush.
  struct Writer {
    Writer(WriterConnection connection, Queue::Options options)
        : conn(std::move(connection.conn)),
          stamps(std::move(connection.stamps)),
          pid(conn.BackendPid()),
          queue(options) {}
    Conn conn;                // its thread only
    pg::CommitStamps stamps;  // its thread only
    // A batch whose outcome is still unknown (0: none); written by its thread only.
    std::atomic<std::int64_t> unresolved{0};
    std::atomic<int> pid;  // the server process of its connection
    Queue queue;           // last: it stops first
  };

  // The writer of a write to `session`, counted as pending until Release: the writer its
  // pending writes went to, else the first writer with fewer than kSpillQueued requests waiting,
  // else the one with the fewest. So a light load stays on the first writer (bigger commits,
  // fewer of them) and a heavy one spreads over all.
  Writer& Claim(const SessionId& session);
  void Release(const SessionId& session);

  // Requests waiting for a writer beyond which a session without pending writes goes to the next.
  static constexpr std::size_t kSpillQueued = 128;

  static Status AppendInitial(Txn& t, const SessionId& id, Txn::Session& s,
                              const std::vector<NewEvent>& initial, AppendResult& out);

  static Status ApplyAppend(Txn& t, const AppendRequest& request, AppendResult& result);

  static Result<SessionInfo> SessionOf(Snapshot& snap, const SessionId& id);

  // pg::WithReader on this log's reader connections.
  template <class T, class Body>
  Result<T> WithReader(Body body) {
    return pg::WithReader<T>(readers_, std::move(body));
  }

  // Runs `body` in a batch of the writer of `session`, or of the first writer when the write
  // belongs to no one session (the queue the consumer, device and schedule stores share).
  template <class T, class Body>
  Result<T> RunControl(Body body) {
    return writers_.front()->queue.template RunControl<T>(std::move(body));
  }
  template <class T, class Body>
  Result<T> RunControl(const SessionId& session, Body body) {
    if (writers_.size() == 1) return RunControl<T>(std::move(body));
    Result<T> out = Claim(session).queue.template RunControl<T>(std::move(body));
    Release(session);
    return out;
  }

  void FailAll(std::vector<Op>& batch, const Status& status);

  // Reconnects a writer connection that broke, or that the server ended while the writer was
  // idle; false (with the batch failed) when that fails.
  bool WriterReady(Writer& w, std::vector<Op>& batch);

  // The outcome of an earlier batch that stayed unknown: false (with `batch` failed) while it
  // still cannot be told; once it can, the writer takes writes again.
  bool EarlierOutcomeKnown(Writer& w, std::vector<Op>& batch);

  void RunBatch(Writer& w, std::vector<Op>& batch);

  // Sends the batch's writes, its announcement, its stamp and COMMIT in one round trip: true once
  // the batch is known to have landed. A COMMIT whose answer was lost is looked up
  // (pg/commit_outcome.h) on the server that is the primary by then; a batch that did not land
  // fails with kUnavailable, to be retried with the same ids, and false is returned. When the
  // server failed a statement, the transaction is rolled back and the error returned (the
  // batch's ops are left to the caller).
  Result<bool> Commit(Writer& w, std::vector<Op>& batch, Txn& t);

  // How many times a batch the server aborted for another transaction's sake (a deadlock) runs
  // again before its ops fail.
  static constexpr int kAbortedBatchRetries = 3;

  const PostgresLogOptions options_;
  std::shared_ptr<store_internal::CommitListeners> listeners_ =
      std::make_shared<store_internal::CommitListeners>();

  pg::ReaderPool readers_{options_.max_reader_connections,
                          [this] { return Connect(options_, false); }};
  pg::SlicedSearch search_{readers_, store_internal::BoundSearchSlices(
                                         options_.search_slices, options_.max_reader_connections)};
  // New documents leave the GIN indexes' pending lists within a second (PendingListFlusher).
  pg::PendingListFlusher flusher_{readers_, std::chrono::milliseconds(1000)};

  std::unique_ptr<pg::ListenThread> hearing_;
  // The sessions with writes queued or committing: their writer and how many (Claim).
  struct Route {
    std::size_t writer = 0;
    std::size_t pending = 0;
  };
  std::mutex routes_mu_;
  std::unordered_map<std::string, Route> routes_;  // guarded by routes_mu_
  // Never empty; after what their threads use: they stop first.
  std::vector<std::unique_ptr<Writer>> writers_;
  // They use the first writer's queue and the readers.
  pg::PostgresConsumerStore consumers_{writers_.front()->queue, readers_};
  pg::PostgresDeviceStore devices_{writers_.front()->queue, readers_};
  pg::PostgresScheduleStore schedules_{writers_.front()->queue, readers_};
};

}  // namespace agentstream::pg
