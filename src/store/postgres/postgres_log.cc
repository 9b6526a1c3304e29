#include "store/postgres/postgres_log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <variant>

#include "log/log.h"
#include "pg/pg.h"
#include "pg/replication.h"
#include "pg/setup.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/postgres/commit_outcome.h"
#include "store/postgres/postgres_commit_channel.h"
#include "store/postgres/postgres_consumer_store.h"
#include "store/postgres/postgres_device_store.h"
#include "store/postgres/postgres_item_index.h"
#include "store/postgres/postgres_schema.h"
#include "store/postgres/postgres_search_index.h"
#include "store/postgres/snapshot.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"
#include "store/record_batch.h"
#include "store/snapshot_read.h"
#include "system/wall_clock.h"

namespace agentstream {

namespace {

using pg::CheckText;
using pg::Conn;
using pg::Join;
using pg::Param;
using pg::QuoteIdentifier;
using pg::Rows;
using pg::Snapshot;
using pg::Txn;
using store_internal::AppendPlan;

Status CheckMeta(const SessionId& id, const SessionMeta& meta) {
  return CheckText({{"a session id", id.str()},
                    {"a provider", meta.provider},
                    {"a cwd", meta.cwd},
                    {"a title", meta.title},
                    {"a persistence handle", meta.persistence_handle},
                    {"a status snapshot", meta.status_snapshot}});
}

Result<Conn> Connect(const PostgresLogOptions& options, bool writer) {
  // Names the daemon's connections in pg_stat_activity ("agentstream" or "agentstream:SCHEMA").
  AS_ASSIGN_OR_RETURN(Conn conn, pg::ConnectTo(options.conninfo, "agentstream", options.schema));
  if (writer && options.durability == Durability::kOs)
    AS_RETURN_IF_ERROR(conn.ExecScript("SET synchronous_commit TO off"));
  return conn;
}

// A connection that LISTENs on the schema's commit channel.
Result<Conn> Listen(const PostgresLogOptions& options) {
  AS_ASSIGN_OR_RETURN(Conn conn, Connect(options, false));
  AS_RETURN_IF_ERROR(
      conn.ExecScript("LISTEN " + QuoteIdentifier(pg::CommitChannel(options.schema))));
  return conn;
}

// ---- the log ----

using Queue = pg::WriteQueue;
using Op = Queue::Op;
using PendingAppend = Queue::Append;
using PendingControl = Queue::Control;

class PostgresEventLog final : public EventLog,
                               public Coordination,
                               public ItemIndexStore,
                               public SearchIndexStore {
 public:
  // `listening` already LISTENs, so every commit made after the log is open is heard.
  PostgresEventLog(PostgresLogOptions options, Conn writer, Conn listening, pg::CommitStamps stamps)
      : options_(std::move(options)),
        writer_conn_(std::move(writer)),
        stamps_(std::move(stamps)),
        queue_(Queue::Options{options_.max_queued_requests, options_.max_batch_requests}) {
    writer_pid_ = writer_conn_.BackendPid();
    queue_.Start([this](std::vector<Op>& batch) { RunBatch(batch); });
    hearing_ = pg::HearCommits(
        std::move(listening), [this] { return Listen(options_); },
        [this] { return writer_pid_.load(); }, listeners_);
  }

  ~PostgresEventLog() override {
    queue_.Stop();
    hearing_.reset();
    if (!writer_conn_.Broken()) stamps_.Forget(writer_conn_);
  }

  Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                     std::vector<NewEvent> initial) override {
    if (id.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
    AS_RETURN_IF_ERROR(CheckMeta(id, meta));
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>(
        [&, meta = std::move(meta)](Txn& t, AppendResult& out) mutable -> Status {
          AS_ASSIGN_OR_RETURN(Txn::Session * s, t.InsertSession(id, std::move(meta), std::nullopt));
          return AppendInitial(t, id, *s, initial, out);
        });
  }

  Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                            SessionMeta meta, std::vector<NewEvent> initial) override {
    if (child.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
    AS_RETURN_IF_ERROR(CheckMeta(child, meta));
    AS_RETURN_IF_ERROR(CheckText({{"a session id", parent.str()}}));
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>([&, meta = std::move(meta)](
                                        Txn& t, AppendResult& out) mutable -> Status {
      AS_ASSIGN_OR_RETURN(Txn::Session * p, t.Load(parent));
      AS_RETURN_IF_ERROR(store_internal::CheckPrefix(p->state, parent, at));
      AS_ASSIGN_OR_RETURN(Txn::Session * s, t.InsertSession(child, std::move(meta),
                                                            HistoryBase{parent, at.epoch, at.seq}));
      return AppendInitial(t, child, *s, initial, out);
    });
  }

  Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                              std::vector<NewEvent> initial) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
    return RunControl<AppendResult>([&](Txn& t, AppendResult& out) -> Status {
      AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
      AS_RETURN_IF_ERROR(store_internal::CheckPrefix(s->state, session, to));
      AS_RETURN_IF_ERROR(t.StartEpoch(*s, HistoryBase{session, to.epoch, to.seq}));
      return AppendInitial(t, session, *s, initial, out);
    });
  }

  Result<SessionInfo> GetSession(const SessionId& id) override {
    return WithReader<SessionInfo>([&](Conn& conn) -> Result<SessionInfo> {
      Snapshot snap(conn);
      AS_RETURN_IF_ERROR(snap.Begin());
      return SessionOf(snap, id);
    });
  }

  Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                std::size_t limit) override {
    return WithReader<std::vector<SessionInfo>>(
        [&](Conn& conn) -> Result<std::vector<SessionInfo>> {
          Snapshot snap(conn);
          AS_RETURN_IF_ERROR(snap.Begin());
          AS_ASSIGN_OR_RETURN(
              Rows ids,
              conn.Exec("SELECT id FROM sessions WHERE id > $1 ORDER BY id LIMIT $2",
                        {after, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000))}));
          std::vector<SessionInfo> out;
          for (int i = 0; i < ids.size(); ++i) {
            AS_ASSIGN_OR_RETURN(SessionInfo info, SessionOf(snap, SessionId(ids.Text(i, 0))));
            out.push_back(std::move(info));
          }
          return out;
        });
  }

  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", id.str()},
                                  {"a persistence handle", update.persistence_handle.value_or("")},
                                  {"a status snapshot", update.status_snapshot.value_or("")}}));
    return RunControl<bool>([&](Txn& t, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(id));
             AS_RETURN_IF_ERROR(store_internal::CheckOwner(s->state, id, update.owner_generation));
             AS_RETURN_IF_ERROR(t.Exec("UPDATE sessions SET persistence=coalesce($1, persistence), "
                                       "status=coalesce($2, status) WHERE key=$3",
                                       {update.persistence_handle, update.status_snapshot, s->key})
                                    .status());
             SessionMeta& meta = s->state.meta;
             if (update.persistence_handle) meta.persistence_handle = *update.persistence_handle;
             if (update.status_snapshot) meta.status_snapshot = *update.status_snapshot;
             // Announced like a commit, so that the other daemons see the new status at once.
             t.Touch(id, s->state.current(), s->state.epochs.back().tail);
             return Status::Ok();
           })
        .status();
  }

  void AppendAsync(AppendRequest request, AppendCallback done) override {
    Status checked = store_internal::CheckBatch(request.events, options_.limits, false);
    if (checked.ok()) {
      checked = CheckText({{"a session id", request.session.str()},
                           {"a producer id", request.producer ? request.producer->id.str() : ""}});
    }
    if (!checked.ok()) return done(checked);
    queue_.Enqueue(PendingAppend{std::move(request), std::move(done)});
  }

  Result<ReadResult> Read(const ReadRequest& request) override {
    return WithReader<ReadResult>([&](Conn& conn) -> Result<ReadResult> {
      Snapshot snap(conn);
      AS_RETURN_IF_ERROR(snap.Begin());
      return store_internal::ReadThrough(snap, request, options_.limits,
                                         [](const SessionId&, Epoch, Seq committed) {
                                           return committed;  // COMMIT returns once durable
                                         });
    });
  }

  Result<Cursor> Tail(const SessionId& session) override {
    AS_ASSIGN_OR_RETURN(SessionInfo info, GetSession(session));
    return Cursor{info.epoch, info.tail};
  }

  Subscription SubscribeCommits(CommitListener listener) override {
    return listeners_->Add(std::move(listener));
  }

  Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) override {
    AS_RETURN_IF_ERROR(
        CheckText({{"a session id", session.str()}, {"a checkpoint", checkpoint.body}}));
    return RunControl<bool>([&](Txn& t, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
             AS_RETURN_IF_ERROR(
                 store_internal::CheckCheckpoint(s->state, session, checkpoint, options_.limits));
             return t
                 .Exec(
                     "INSERT INTO checkpoints(session, epoch, seq, body) VALUES($1,$2,$3,$4) "
                     "ON CONFLICT (session) DO UPDATE SET epoch=excluded.epoch, "
                     "seq=excluded.seq, body=excluded.body",
                     {session.str(), static_cast<std::int64_t>(checkpoint.epoch.value()),
                      static_cast<std::int64_t>(checkpoint.seq.value()), checkpoint.body})
                 .status();
           })
        .status();
  }

  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session) override {
    return WithReader<std::optional<Checkpoint>>(
        [&](Conn& conn) -> Result<std::optional<Checkpoint>> {
          AS_ASSIGN_OR_RETURN(Rows r,
                              conn.Exec("SELECT c.epoch, c.seq, c.body FROM sessions s LEFT JOIN "
                                        "checkpoints c ON c.session = s.id WHERE s.id = $1",
                                        {session.str()}));
          if (r.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
          if (r.IsNull(0, 0)) return std::optional<Checkpoint>();
          return std::optional<Checkpoint>(
              Checkpoint{Epoch(static_cast<std::uint64_t>(r.Int(0, 0))),
                         Seq(static_cast<std::uint64_t>(r.Int(0, 1))), r.Text(0, 2)});
        });
  }

  ConsumerStore& consumers() override { return consumers_; }
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override { return devices_; }
  ItemIndexStore* item_index() override { return this; }
  SearchIndexStore* search_index() override { return this; }

  // ---- ItemIndexStore: reads on a reader connection, writes in the writer's batch ----
  Result<std::optional<ItemIndexState>> LoadItemState(const SessionId& session,
                                                      Epoch epoch) override {
    return WithReader<std::optional<ItemIndexState>>(
        [&](Conn& conn) { return pg::LoadItemState(conn, session, epoch); });
  }
  Result<std::optional<HistoryBase>> EpochBase(const SessionId& session, Epoch epoch) override {
    return WithReader<std::optional<HistoryBase>>(
        [&](Conn& conn) { return pg::LoadEpochBase(conn, session, epoch); });
  }
  Result<std::vector<ItemRow>> ItemsBetween(const SessionId& session, Epoch epoch, std::uint64_t lo,
                                            std::uint64_t hi) override {
    return WithReader<std::vector<ItemRow>>(
        [&](Conn& conn) { return pg::LoadItemsBetween(conn, session, epoch, lo, hi); });
  }
  Result<std::vector<ItemRow>> ItemsByKeys(const SessionId& session, Epoch epoch,
                                           const std::vector<std::string>& keys) override {
    return WithReader<std::vector<ItemRow>>(
        [&](Conn& conn) { return pg::LoadItemsByKeys(conn, session, epoch, keys); });
  }
  Result<std::optional<std::uint64_t>> FirstOrdinalStartingAfter(const SessionId& session,
                                                                 Epoch epoch, Seq seq) override {
    return WithReader<std::optional<std::uint64_t>>(
        [&](Conn& conn) { return pg::LoadFirstOrdinalStartingAfter(conn, session, epoch, seq); });
  }
  Result<std::vector<ItemRow>> ItemsOpenAcross(const SessionId& session, Epoch epoch,
                                               Seq seq) override {
    return WithReader<std::vector<ItemRow>>(
        [&](Conn& conn) { return pg::LoadItemsOpenAcross(conn, session, epoch, seq); });
  }
  Status CommitItems(const SessionId& session, Epoch epoch,
                     const std::optional<ItemIndexState>& expected, const ItemIndexState& next,
                     const std::vector<ItemRow>& rows) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    for (const ItemRow& row : rows)
      AS_RETURN_IF_ERROR(CheckText({{"an item key", row.key}, {"item ranges", row.ranges}}));
    return RunControl<bool>([&](Txn& t, bool&) -> Status {
             return pg::StoreItems(t, session, epoch, expected, next, rows);
           })
        .status();
  }
  Status DropItems(const SessionId& session, Epoch epoch) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    return RunControl<bool>(
               [&](Txn& t, bool&) -> Status { return pg::DeleteItems(t, session, epoch); })
        .status();
  }

  // ---- SearchIndexStore: reads on a reader connection, writes in the writer's batch ----
  Result<std::optional<Cursor>> LoadSearchState(const SessionId& session) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    return WithReader<std::optional<Cursor>>(
        [&](Conn& conn) { return pg::LoadSearchState(conn, session); });
  }
  Status CommitDocuments(const SessionId& session, const std::optional<Cursor>& expected,
                         Cursor next, const std::vector<SearchDocument>& documents) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    for (const SearchDocument& d : documents)
      AS_RETURN_IF_ERROR(CheckText({{"a search document", d.text}, {"a document kind", d.kind}}));
    AS_RETURN_IF_ERROR(RunControl<bool>([&](Txn& t, bool&) -> Status {
                         return pg::StoreDocuments(t, session, expected, next, documents);
                       }).status());
    if (!documents.empty()) flusher_.Stored();
    return Status::Ok();
  }
  Result<std::vector<SearchHit>> Search(const SearchQuery& query) override {
    if (query.session) AS_RETURN_IF_ERROR(CheckText({{"a session id", query.session->str()}}));
    for (const std::string& word : query.words) AS_RETURN_IF_ERROR(CheckText({{"a word", word}}));
    return search_.Run(query);
  }

  Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                      std::int64_t ttl_ms) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}, {"an owner", owner}}));
    return RunControl<OwnerGrant>([&](Txn& t, OwnerGrant& out) -> Status {
      AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
      AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
      // Decided on a copy: a refused grant leaves the transaction's picture as stored.
      store_internal::SessionState state = s->state;
      AS_ASSIGN_OR_RETURN(out, store_internal::GrantOwnership(state, session, owner, now, ttl_ms));
      s->state.owner = state.owner;
      AS_RETURN_IF_ERROR(t.StoreOwner(*s));
      return t
          .Exec(
              "INSERT INTO owner_history(session, generation, owner, granted_ms, epoch, seq) "
              "VALUES($1,$2,$3,$4,$5,$6)",
              {session.str(), I64(out.lease.generation), owner, now, I64(state.current().value()),
               I64(state.epochs.back().tail.value())})
          .status();
    });
  }

  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override {
    for (const auto& [session, generation] : leases)
      AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    return RunControl<std::vector<SessionId>>([&](Txn& t, std::vector<SessionId>& lost) -> Status {
      std::vector<std::string> ids;
      ids.reserve(leases.size());
      for (const auto& lease : leases) ids.push_back(lease.first.str());
      AS_RETURN_IF_ERROR(t.Prefetch(std::move(ids)));  // their rows, locked in id order
      AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
      std::vector<std::string> renewed;
      for (const auto& [session, generation] : leases) {
        auto s = t.Load(session);
        if (!t.io().ok()) return t.io();
        if (!s.ok() ||
            !store_internal::RenewOwnership((*s)->state, owner, generation, now, ttl_ms)) {
          lost.push_back(session);
          continue;
        }
        renewed.push_back(std::to_string((*s)->key));
      }
      if (renewed.empty()) return Status::Ok();
      return t
          .Exec("UPDATE sessions SET owner_expires_ms=$1 WHERE key = ANY($2::bigint[])",
                {now + ttl_ms, "{" + Join(renewed) + "}"})
          .status();
    });
  }

  Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    return RunControl<bool>([&](Txn& t, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
             store_internal::SessionState state = s->state;
             AS_RETURN_IF_ERROR(store_internal::ReleaseOwnership(state, session, generation));
             s->state.owner = state.owner;
             return t.StoreOwner(*s);
           })
        .status();
  }

  Result<OwnerLease> GetOwnership(const SessionId& session) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    return WithReader<OwnerLease>([&](Conn& conn) -> Result<OwnerLease> {
      AS_ASSIGN_OR_RETURN(
          Rows r, conn.Exec("SELECT owner, owner_generation, owner_expires_ms, " +
                                std::string(pg::kServerNowMs) + " FROM sessions WHERE id=$1",
                            {session.str()}));
      if (r.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
      return OwnerLease{r.Text(0, 0), static_cast<std::uint64_t>(r.Int(0, 1)), r.Int(0, 2),
                        r.Int(0, 3)};
    });
  }

  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override {
    using Expired = std::vector<std::pair<SessionId, OwnerLease>>;
    return WithReader<Expired>([&](Conn& conn) -> Result<Expired> {
      AS_ASSIGN_OR_RETURN(Rows now_row, conn.Exec(pg::ServerNowSql()));
      const TimestampMs now = now_row.Int(0, 0);
      AS_ASSIGN_OR_RETURN(
          Rows r,
          conn.Exec("SELECT id, owner, owner_generation, owner_expires_ms FROM sessions WHERE "
                    "owner <> '' AND owner_expires_ms <= $1 ORDER BY owner_expires_ms LIMIT $2",
                    {now, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000))}));
      Expired out;
      for (int i = 0; i < r.size(); ++i) {
        out.emplace_back(
            SessionId(r.Text(i, 0)),
            OwnerLease{r.Text(i, 1), static_cast<std::uint64_t>(r.Int(i, 2)), r.Int(i, 3), now});
      }
      return out;
    });
  }

  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) override {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
    using History = std::vector<OwnershipRecord>;
    return WithReader<History>([&](Conn& conn) -> Result<History> {
      AS_ASSIGN_OR_RETURN(Rows known,
                          conn.Exec("SELECT 1 FROM sessions WHERE id=$1", {session.str()}));
      if (known.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
      AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT generation, owner, granted_ms, epoch, seq FROM "
                                            "owner_history WHERE session=$1 ORDER BY generation",
                                            {session.str()}));
      History out;
      for (int i = 0; i < r.size(); ++i) {
        out.push_back(OwnershipRecord{static_cast<std::uint64_t>(r.Int(i, 0)), r.Text(i, 1),
                                      r.Int(i, 2), Cursor{Epoch(r.Int(i, 3)), Seq(r.Int(i, 4))}});
      }
      return out;
    });
  }

  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override {
    AS_RETURN_IF_ERROR(CheckText({{"a daemon id", self.id},
                                  {"a daemon url", self.url},
                                  {"a host", self.host},
                                  {"a data directory", self.data_dir}}));
    return RunControl<bool>([&](Txn& t, bool&) -> Status {
             AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
             AS_ASSIGN_OR_RETURN(Rows r,
                                 t.Exec("SELECT url, host, data_dir, started_ms, heartbeat_ms FROM "
                                        "daemons WHERE id=$1 FOR UPDATE",
                                        {self.id}));
             DaemonRecord stored;
             if (r.size() > 0)
               stored = DaemonRecord{self.id,     r.Text(0, 0), r.Text(0, 1), r.Text(0, 2),
                                     r.Int(0, 3), r.Int(0, 4),  now};
             AS_RETURN_IF_ERROR(store_internal::CheckDaemonIdentity(stored, self, now, ttl_ms));
             return t
                 .Exec(
                     "INSERT INTO daemons(id, url, host, data_dir, started_ms, heartbeat_ms) "
                     "VALUES($1,$2,$3,$4,$5,$6) ON CONFLICT (id) DO UPDATE SET "
                     "url=excluded.url, host=excluded.host, data_dir=excluded.data_dir, "
                     "started_ms=excluded.started_ms, heartbeat_ms=excluded.heartbeat_ms",
                     {self.id, self.url, self.host, self.data_dir, self.started_ms, now})
                 .status();
           })
        .status();
  }

  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) override {
    AS_RETURN_IF_ERROR(CheckText({{"a daemon id", id}}));
    using Found = std::optional<DaemonRecord>;
    return WithReader<Found>([&](Conn& conn) -> Result<Found> {
      AS_ASSIGN_OR_RETURN(Rows r,
                          conn.Exec("SELECT url, host, data_dir, started_ms, heartbeat_ms, " +
                                        std::string(pg::kServerNowMs) + " FROM daemons WHERE id=$1",
                                    {id}));
      if (r.size() == 0) return Found();
      return Found(DaemonRecord{id, r.Text(0, 0), r.Text(0, 1), r.Text(0, 2), r.Int(0, 3),
                                r.Int(0, 4), r.Int(0, 5)});
    });
  }

  Result<std::string> SharedSecret(const std::string& name, const std::string& candidate) override {
    AS_RETURN_IF_ERROR(CheckText({{"a secret's name", name}, {"a secret", candidate}}));
    return RunControl<std::string>([&](Txn& t, std::string& out) -> Status {
      AS_RETURN_IF_ERROR(
          t.Exec("INSERT INTO secrets(name, value) VALUES($1,$2) ON CONFLICT (name) DO NOTHING",
                 {name, candidate})
              .status());
      AS_ASSIGN_OR_RETURN(Rows r, t.Exec("SELECT value FROM secrets WHERE name=$1", {name}));
      if (r.size() == 0) return Error(ErrorCode::kInternal, "secret " + name + " vanished");
      out = r.Text(0, 0);
      return Status::Ok();
    });
  }

  Status Health() override {
    if (unresolved_.load() != 0)
      return Error(ErrorCode::kUnavailable, "the outcome of a commit is not known yet");
    return queue_.Writable();
  }
  LogStats Stats() override { return queue_.stats(); }

 private:
  static Status AppendInitial(Txn& t, const SessionId& id, Txn::Session& s,
                              const std::vector<NewEvent>& initial, AppendResult& out) {
    auto& epoch = s.state.epochs.back();
    out = AppendResult{s.state.current(), epoch.tail.next(),
                       Seq(epoch.tail.value() + initial.size()), false};
    t.InsertEvents(s.key, out.epoch, out.first_seq, initial);
    if (auto meta = store_internal::MetaAfter(s.state.meta, initial))
      AS_RETURN_IF_ERROR(t.StoreMeta(s, std::move(*meta)));
    epoch.tail = out.last_seq;
    t.Touch(id, out.epoch, epoch.tail);
    return Status::Ok();
  }

  static Status ApplyAppend(Txn& t, const AppendRequest& request, AppendResult& result) {
    AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(request.session));
    AS_ASSIGN_OR_RETURN(AppendPlan plan, store_internal::PlanAppend(s->state, request));
    result = plan.result;
    if (plan.result.duplicate) return Status::Ok();
    t.InsertEvents(s->key, plan.result.epoch, plan.result.first_seq, request.events,
                   request.owner_generation.value_or(0));
    t.StoreProducer(s->key, plan);
    if (plan.meta) AS_RETURN_IF_ERROR(t.StoreMeta(*s, *plan.meta));
    store_internal::ApplyAppend(s->state, plan);
    t.Touch(request.session, plan.result.epoch, plan.result.last_seq);
    return Status::Ok();
  }

  static Result<SessionInfo> SessionOf(Snapshot& snap, const SessionId& id) {
    AS_ASSIGN_OR_RETURN(auto session, snap.Session(id));
    AS_ASSIGN_OR_RETURN(auto base, snap.Base(session.key, session.current));
    AS_ASSIGN_OR_RETURN(Seq tail,
                        snap.TailOf(session.key, session.current, base ? base->seq : Seq(0)));
    return SessionInfo{id,   std::move(session.meta), session.current,
                       tail, session.forked_from,     std::move(session.owner)};
  }

  // pg::WithReader on this log's reader connections.
  template <class T, class Body>
  Result<T> WithReader(Body body) {
    return pg::WithReader<T>(readers_, std::move(body));
  }

  template <class T, class Body>
  Result<T> RunControl(Body body) {
    return queue_.template RunControl<T>(std::move(body));
  }

  void FailAll(std::vector<Op>& batch, const Status& status) {
    for (Op& op : batch) Queue::Complete(op, status);
  }

  // Reconnects a broken writer connection; false (with the batch failed) when that fails.
  bool WriterReady(std::vector<Op>& batch) {
    if (!writer_conn_.Broken()) return true;
    Result<Conn> reopened = Connect(options_, true);
    if (!reopened.ok()) {
      FailAll(batch, reopened.status());
      return false;
    }
    writer_conn_ = std::move(*reopened);
    writer_pid_ = writer_conn_.BackendPid();
    return true;
  }

  // The outcome of an earlier batch that stayed unknown: false (with `batch` failed) while it
  // still cannot be told; once it can, the log takes writes again.
  bool EarlierOutcomeKnown(std::vector<Op>& batch) {
    if (unresolved_ == 0) return true;
    Result<bool> landed = pg::ResolveOutcome(
        stamps_, unresolved_.load(), writer_conn_, [this] { return Connect(options_, true); },
        std::chrono::steady_clock::duration::zero(), [] { return false; });
    writer_pid_ = writer_conn_.BackendPid();
    if (!landed.ok()) {
      FailAll(batch, Error(ErrorCode::kUnavailable,
                           "the log takes no writes while an earlier commit's outcome is "
                           "unknown: " +
                               landed.status().message()));
      return false;
    }
    unresolved_ = 0;
    return true;
  }

  void RunBatch(std::vector<Op>& batch) {
    if (!EarlierOutcomeKnown(batch) || !WriterReady(batch)) return;
    const auto started = std::chrono::steady_clock::now();
    Txn t(writer_conn_);
    std::vector<Status> outcomes(batch.size());
    std::vector<AppendResult> results(batch.size());
    std::vector<std::string> appended;
    for (const Op& op : batch)
      if (const auto* a = std::get_if<PendingAppend>(&op))
        appended.push_back(a->request.session.str());
    if (t.Exec("BEGIN").ok()) (void)t.Prefetch(std::move(appended));
    for (std::size_t i = 0; i < batch.size() && t.io().ok(); ++i) {
      if (auto* a = std::get_if<PendingAppend>(&batch[i]))
        outcomes[i] = ApplyAppend(t, a->request, results[i]);
      else
        outcomes[i] = std::get<PendingControl>(batch[i]).run(t);
    }
    if (t.io().ok()) (void)t.Flush();
    if (t.io().ok()) pg::AnnounceCommit(t, pg::CommitChannel(options_.schema));
    const std::int64_t stamp = t.io().ok() ? stamps_.Stamp(t) : 0;
    if (!t.io().ok()) {
      (void)writer_conn_.ExecScript("ROLLBACK");
      return FailAll(batch, Error(ErrorCode::kUnavailable,
                                  "PostgreSQL rolled the commit back, nothing was written: " +
                                      t.io().ToString()));
    }
    if (!Commit(batch, stamp)) return;
    queue_.CountCommit(std::chrono::steady_clock::now() - started);
    queue_.CountAcknowledged(batch, outcomes, results);
    // Listeners hear of a commit before any of its appends is acknowledged.
    for (const auto& [id, touched] : t.touched())
      listeners_->Notify(CommitNotice{SessionId(id), touched.epoch, touched.after});
    Queue::Acknowledge(batch, outcomes, results);
  }

  // Commits the batch stamped `stamp`: true once it is known to have landed. A COMMIT whose
  // answer was lost is looked up (commit_outcome.h) on the server that is the primary by then;
  // a batch that did not land fails with kUnavailable, to be retried with the same ids.
  bool Commit(std::vector<Op>& batch, std::int64_t stamp) {
    Status committed = writer_conn_.ExecScript("COMMIT");
    if (committed.ok()) return true;
    if (!writer_conn_.Broken()) {
      (void)writer_conn_.ExecScript("ROLLBACK");
      FailAll(batch,
              Error(ErrorCode::kUnavailable,
                    "PostgreSQL refused the commit, nothing was written: " + committed.ToString()));
      return false;
    }
    Result<bool> landed = pg::ResolveOutcome(
        stamps_, stamp, writer_conn_, [this] { return Connect(options_, true); },
        options_.outcome_wait, [this] { return queue_.Writable().ok(); });
    writer_pid_ = writer_conn_.BackendPid();
    if (landed.ok() && *landed) return true;
    if (landed.ok()) {
      FailAll(batch, Error(ErrorCode::kUnavailable,
                           "the connection to PostgreSQL was lost during COMMIT and the commit "
                           "did not land, nothing was written: " +
                               committed.ToString()));
      return false;
    }
    unresolved_ = stamp;  // later batches ask again first
    FailAll(batch,
            Error(ErrorCode::kIoError, "commit failed, outcome unknown: " + committed.ToString() +
                                           "; " + landed.status().message()));
    return false;
  }

  const PostgresLogOptions options_;
  Conn writer_conn_;         // writer thread only
  pg::CommitStamps stamps_;  // writer thread only
  // A batch whose outcome is still unknown (0: none); written by the writer thread only.
  std::atomic<std::int64_t> unresolved_{0};
  std::shared_ptr<store_internal::CommitListeners> listeners_ =
      std::make_shared<store_internal::CommitListeners>();

  pg::ReaderPool readers_{options_.max_reader_connections,
                          [this] { return Connect(options_, false); }};
  pg::SlicedSearch search_{readers_, store_internal::BoundSearchSlices(
                                         options_.search_slices, options_.max_reader_connections)};
  // New documents leave the GIN indexes' pending lists within a second (PendingListFlusher).
  pg::PendingListFlusher flusher_{readers_, std::chrono::milliseconds(1000)};

  std::atomic<int> writer_pid_{0};  // the server process of the writer's connection
  std::unique_ptr<pg::ListenThread> hearing_;
  Queue queue_;  // after what its writer thread uses: it stops first
  pg::PostgresConsumerStore consumers_{queue_, readers_};  // uses the queue and the readers
  pg::PostgresDeviceStore devices_{queue_, readers_};
};

// Says once, at open, what the server promises on failover (pg/replication.h): a warning when an
// acknowledged append could be lost or commits would wait, else an info line. A server that
// does not let this role read it is not an error.
void LogReplication(Conn& conn, Durability durability) {
  Result<pg::ReplicationState> state = pg::ReadReplication(conn);
  if (!state.ok()) {
    log::Info("store.replication_unknown", {{"error", state.status().message()}});
    return;
  }
  if (durability == Durability::kOs) state->synchronous_commit = "off";  // the writer's setting
  const pg::ReplicationVerdict verdict = pg::JudgeReplication(*state);
  const log::Level level =
      verdict.level == pg::ReplicationVerdict::Level::kWarn ? log::Level::kWarn : log::Level::kInfo;
  log::Write(level, "store.replication",
             {{"setup", verdict.setup},
              {"synchronous_commit", state->synchronous_commit},
              {"synchronous_standby_names", state->synchronous_standby_names},
              {"standbys", static_cast<std::int64_t>(state->standbys.size())},
              {"message", verdict.message}});
}

}  // namespace

Result<std::unique_ptr<EventLog>> OpenPostgresEventLog(PostgresLogOptions options) {
  if (options.conninfo.empty())
    return Error(ErrorCode::kInvalidArgument, "the PostgreSQL log needs a connection string");
  AS_ASSIGN_OR_RETURN(Conn setup, Conn::Open(options.conninfo));
  AS_RETURN_IF_ERROR(pg::EnsureSchema(setup, options.schema, PostgresLogSchema()));
  LogReplication(setup, options.durability);
  AS_ASSIGN_OR_RETURN(Conn writer, Connect(options, true));
  AS_ASSIGN_OR_RETURN(Conn listening, Listen(options));
  pg::CommitStamps stamps;
  AS_RETURN_IF_ERROR(stamps.Register(writer));
  return std::unique_ptr<EventLog>(std::make_unique<PostgresEventLog>(
      std::move(options), std::move(writer), std::move(listening), std::move(stamps)));
}

}  // namespace agentstream
