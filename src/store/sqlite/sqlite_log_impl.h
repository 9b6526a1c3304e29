// Internal to the SQLite backend: the SqliteEventLog class behind OpenSqliteEventLog
// (sqlite_log.h). Its methods are defined by job: the lifecycle and the writer's commit path in
// sqlite_log.cc, sessions, metadata and checkpoints in sqlite_log_sessions.cc, ownership leases,
// the daemon registry and shared secrets in sqlite_log_coordination.cc, and the timeline and
// search indexes in sqlite_log_index.cc. Included only by those files.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlite/db.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/coordination.h"
#include "store/event_log.h"
#include "store/item_index.h"
#include "store/log_state.h"
#include "store/search_index.h"
#include "store/search_slices.h"
#include "store/sqlite/checkpointer.h"
#include "store/sqlite/durable_floor.h"
#include "store/sqlite/sqlite_consumer_store.h"
#include "store/sqlite/sqlite_device_store.h"
#include "store/sqlite/sqlite_log.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_schedule_store.h"
#include "store/sqlite/sqlite_writer.h"
#include "store/sqlite/wal_syncer.h"

namespace agentstream::sqlite {

// The embedded EventLog (sqlite_log.h), which is also the store's Coordination and its timeline
// and search indexes: every write runs on the one writer thread of queue_, every read on a
// connection of readers_.
class SqliteEventLog final : public EventLog,
                             public Coordination,
                             public ItemIndexStore,
                             public SearchIndexStore {
  // SQL failures of a write are recorded on the Writer and fail the whole batch.
  using Queue = sqlite::WriteQueue;
  using Op = Queue::Op;
  using PendingAppend = Queue::Append;
  using PendingControl = Queue::Control;
  using AppendPlan = store_internal::AppendPlan;

 public:
  SqliteEventLog(SqliteLogOptions options, Db write_db);
  Status Start();
  ~SqliteEventLog() override;

  // Whether commits are synced by the WalSyncer rather than inside COMMIT.
  static bool Overlapped(const SqliteLogOptions& options) {
    return options.durability == Durability::kFsync && options.overlap_syncs;
  }

  // ---- sessions, metadata and checkpoints (sqlite_log_sessions.cc) ----
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

  // ---- appends and commit notices (sqlite_log.cc) ----
  void AppendAsync(AppendRequest request, AppendCallback done) override;
  ListenerRegistration SubscribeCommits(CommitListener listener) override;

  ConsumerStore& consumers() override { return consumers_; }
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override { return devices_; }
  ScheduleStore& schedules() override { return schedules_; }
  ItemIndexStore* item_index() override { return this; }
  SearchIndexStore* search_index() override { return this; }

  // ---- ItemIndexStore: reads on a reader connection, writes on the writer thread ----
  // (sqlite_log_index.cc)
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

  // ---- SearchIndexStore: reads on a reader connection, writes on the writer thread ----
  // (sqlite_log_index.cc)
  Result<std::optional<Cursor>> LoadSearchState(const SessionId& session) override;
  Result<std::vector<Status>> CommitDocumentsTogether(
      std::span<const DocumentCommit> commits) override;
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override;

  // ---- Coordination (sqlite_log_coordination.cc) ----
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
  Result<std::string> SharedSecret(const std::string& name, const std::string&) override;

  // ---- health (sqlite_log.cc) ----
  Status Health() override;
  LogStats Stats() override;

 private:
  // Appends the initial events of a create, fork or rewind.
  static Status AppendInitial(Writer& w, const SessionId& id, Writer::Cached& cached,
                              const std::vector<NewEvent>& initial, AppendResult& out);

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
    TimestampMs time = 0;  // the time its events were stamped with
  };

  void RunBatch(std::vector<Op>& batch);

  // Acknowledges a commit once it is durable (or fails it when its sync failed). Runs in commit
  // order, on the syncer thread (or the writer's when commits sync inside COMMIT).
  void Finish(Committed& c, const Status& synced);

  static int OnWalCommit(void* self, sqlite3* /*db*/, const char* /*name*/, int frames);

  static Status ApplyAppend(Writer& w, const AppendRequest& request, AppendResult& result);

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
  sqlite::SqliteScheduleStore schedules_{queue_, readers_};
};

}  // namespace agentstream::sqlite
