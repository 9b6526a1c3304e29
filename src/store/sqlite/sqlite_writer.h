// Internal to the store module: the SQLite log's writer-thread state (the write connection, its
// prepared statements, the cache of session pictures, and the record batches of the commit being
// built). Used only on the writer thread of SqliteEventLog.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sqlite/db.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/record_batch.h"
#include "system/wall_clock.h"

namespace agentstream::sqlite {

inline std::int64_t ToInt64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// What one commit did to one session.
struct Touched {
  Epoch epoch;
  Seq before;  // the tail before the commit
  Seq after;   // the tail after it
};

// The writer thread's state: the write connection, its statements, and the session cache.
// Used only on the writer thread.
class Writer {
 public:
  struct Cached {
    std::int64_t key = 0;
    store_internal::SessionState state;
  };

  Writer(Db db, LogLimits limits, std::size_t max_cached)
      : db_(std::move(db)), limits_(limits), max_cached_(max_cached) {}

  Status Prepare() {
    AS_ASSIGN_OR_RETURN(
        insert_batch_,
        db_.Prepare("INSERT INTO events(session, epoch, first_seq, last_seq, format, "
                    "data, writer) VALUES(?,?,?,?,?,?,?)"));
    AS_ASSIGN_OR_RETURN(
        upsert_producer_,
        db_.Prepare(
            "INSERT INTO producers(session, producer, epoch, seq, first_seq, last_seq) "
            "VALUES(?,?,?,?,?,?) "
            "ON CONFLICT(session, producer) DO UPDATE SET epoch=excluded.epoch, seq=excluded.seq, "
            "first_seq=excluded.first_seq, last_seq=excluded.last_seq"));
    AS_ASSIGN_OR_RETURN(
        select_session_,
        db_.Prepare(
            "SELECT key, provider, cwd, title, created_ms, persistence, status, forked_session, "
            "forked_epoch, forked_seq, owner, owner_generation, owner_expires_ms, usage FROM "
            "sessions WHERE id=?"));
    AS_ASSIGN_OR_RETURN(select_epochs_,
                        db_.Prepare("SELECT epoch, base_session, base_epoch, base_seq FROM epochs "
                                    "WHERE session=? ORDER BY epoch"));
    AS_ASSIGN_OR_RETURN(max_seq_, db_.Prepare("SELECT last_seq FROM events WHERE session=? AND "
                                              "epoch=? ORDER BY first_seq DESC LIMIT 1"));
    AS_ASSIGN_OR_RETURN(
        select_producers_,
        db_.Prepare(
            "SELECT producer, epoch, seq, first_seq, last_seq FROM producers WHERE session=?"));
    AS_ASSIGN_OR_RETURN(
        insert_session_,
        db_.Prepare(
            "INSERT INTO sessions(id, provider, cwd, title, created_ms, persistence, status, "
            "forked_session, forked_epoch, forked_seq, current_epoch, usage) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?) "
            "RETURNING key"));
    AS_ASSIGN_OR_RETURN(set_meta_, db_.Prepare("UPDATE sessions SET title=?, usage=? WHERE key=?"));
    AS_ASSIGN_OR_RETURN(insert_epoch_,
                        db_.Prepare("INSERT INTO epochs(session, epoch, base_session, base_epoch, "
                                    "base_seq) VALUES(?,?,?,?,?)"));
    AS_ASSIGN_OR_RETURN(set_current_epoch_,
                        db_.Prepare("UPDATE sessions SET current_epoch=? WHERE key=?"));
    AS_ASSIGN_OR_RETURN(delete_producers_, db_.Prepare("DELETE FROM producers WHERE session=?"));
    AS_ASSIGN_OR_RETURN(set_owner_, db_.Prepare("UPDATE sessions SET owner=?, owner_generation=?, "
                                                "owner_expires_ms=? WHERE key=?"));
    return Status::Ok();
  }

  Db& db() { return db_; }
  const LogLimits& limits() const { return limits_; }
  TimestampMs now() const { return now_; }

  // The SQL failure that ends the current batch, if any.
  const Status& io() const { return io_; }
  // Records `status` as the batch's failure when it is one; returns it.
  Status Check(Status status) {
    if (!status.ok() && io_.ok()) io_ = status;
    return status;
  }

  void BeginBatch() {
    now_ = system::WallClockMs();
    io_ = Status::Ok();
    touched_.clear();
    batches_.clear();
  }

  // The cached picture of a session, loaded on first use. nullptr with kNotFound when unknown.
  Result<Cached*> Load(const SessionId& id) {
    if (auto it = cache_.find(id.str()); it != cache_.end()) return &it->second;
    if (cache_.size() >= max_cached_) cache_.clear();  // bounded; entries reload on demand
    Stmt& s = select_session_;
    s.Bind(1, id.str());
    auto row = s.Step();
    if (!row.ok()) return Check(row.status());
    if (!row.value()) {
      s.Reset();
      return Error(ErrorCode::kNotFound, "no session " + id.str());
    }
    Cached cached;
    cached.key = s.Int(0);
    SessionMeta& meta = cached.state.meta;
    meta.provider = s.Text(1);
    meta.cwd = s.Text(2);
    meta.title = s.Text(3);
    meta.created_ms = s.Int(4);
    meta.persistence_handle = s.Text(5);
    meta.status_snapshot = s.Text(6);
    if (!s.IsNull(7)) {
      cached.state.forked_from = HistoryBase{SessionId(s.Text(7)), Epoch(s.Int(8)), Seq(s.Int(9))};
    }
    cached.state.owner = OwnerLease{s.Text(10), static_cast<std::uint64_t>(s.Int(11)), s.Int(12)};
    if (!s.IsNull(13)) meta.usage = store_internal::DecodeUsageTotals(s.Text(13));
    s.Reset();
    AS_RETURN_IF_ERROR(LoadEpochs(cached));
    AS_RETURN_IF_ERROR(LoadProducers(cached));
    return &cache_.emplace(id.str(), std::move(cached)).first->second;
  }

  // Adds `events`, seqs from `first`, appended by ownership generation `writer` (0: none), to the
  // record batch of (key, epoch, writer) that this commit writes; a batch is written when it is
  // full or at FlushBatches(). Batches never mix writers.
  Status InsertEvents(std::int64_t key, Epoch epoch, Seq first, const std::vector<NewEvent>& events,
                      std::uint64_t writer = 0) {
    PendingBatch& batch = batches_[{key, epoch.value(), writer}];
    Seq seq = first;
    for (const NewEvent& e : events) {
      if (batch.count > 0 && (batch.last.next() != seq || batch.count >= kMaxBatchRecords ||
                              batch.data.size() >= kMaxBatchBytes)) {
        AS_RETURN_IF_ERROR(WriteBatch(key, epoch, writer, batch));
      }
      if (batch.count == 0) batch.first = seq;
      const auto kind = static_cast<std::uint16_t>(e.kind);
      const std::uint64_t checksum =
          store_internal::RecordChecksum(seq, now_, kind, kEventFormatVersion, e.turn, e.payload);
      store_internal::EncodeRecord(now_, kind, kEventFormatVersion, e.turn, e.payload, checksum,
                                   batch.data);
      batch.last = seq;
      ++batch.count;
      seq = seq.next();
    }
    return Status::Ok();
  }

  // Writes every record batch this commit still holds.
  Status FlushBatches() {
    for (auto& [where, batch] : batches_) {
      const auto& [key, epoch, writer] = where;
      if (batch.count > 0) AS_RETURN_IF_ERROR(WriteBatch(key, Epoch(epoch), writer, batch));
    }
    batches_.clear();
    return Status::Ok();
  }

  Status StoreProducer(std::int64_t key, const store_internal::AppendPlan& plan) {
    if (!plan.producer) return Status::Ok();
    const auto& p = *plan.producer;
    Stmt& s = upsert_producer_;
    s.Bind(1, key).Bind(2, plan.producer_id).Bind(3, ToInt64(p.epoch)).Bind(4, ToInt64(p.seq));
    s.Bind(5, ToInt64(p.first_seq.value())).Bind(6, ToInt64(p.last_seq.value()));
    return Check(s.Exec());
  }

  // Inserts a new session row with its first epoch; returns the cache entry.
  Result<Cached*> InsertSession(const SessionId& id, SessionMeta meta,
                                std::optional<HistoryBase> base) {
    meta = store_internal::NewSessionMeta(std::move(meta), {}, now_);
    Stmt& s = insert_session_;
    s.Bind(1, id.str()).Bind(2, meta.provider).Bind(3, meta.cwd).Bind(4, meta.title);
    s.Bind(5, meta.created_ms).Bind(6, meta.persistence_handle).Bind(7, meta.status_snapshot);
    if (base) {
      s.Bind(8, base->session.str())
          .Bind(9, ToInt64(base->epoch.value()))
          .Bind(10, ToInt64(base->seq.value()));
    } else {
      s.BindNull(8).BindNull(9).BindNull(10);
    }
    s.Bind(11, 1);
    const std::string usage = store_internal::EncodeUsageTotals(meta.usage);
    s.Bind(12, usage);
    auto row = s.Step();
    if (!row.ok() || !row.value()) {
      s.Reset();
      return Check(row.ok() ? Error(ErrorCode::kInternal, "insert session returned no key")
                            : row.status());
    }
    Cached cached;
    cached.key = s.Int(0);
    s.Reset();
    cached.state.meta = std::move(meta);
    cached.state.forked_from = base;
    cached.state.epochs.push_back(base ? store_internal::ContinueFrom(*base)
                                       : store_internal::EpochState{});
    AS_RETURN_IF_ERROR(InsertEpoch(cached.key, Epoch(1), base));
    return &(cache_[id.str()] = std::move(cached));
  }

  // Stores the title and usage totals of `meta` as the cached session's (the rest of the meta is
  // not changed by appends).
  Status StoreMeta(Cached& cached, SessionMeta meta) {
    Stmt& s = set_meta_;
    const std::string usage = store_internal::EncodeUsageTotals(meta.usage);
    s.Bind(1, meta.title);
    if (meta.usage)
      s.Bind(2, usage);
    else
      s.BindNull(2);
    s.Bind(3, cached.key);
    AS_RETURN_IF_ERROR(Check(s.Exec()));
    cached.state.meta = std::move(meta);
    return Status::Ok();
  }

  Status InsertEpoch(std::int64_t key, Epoch epoch, const std::optional<HistoryBase>& base) {
    Stmt& s = insert_epoch_;
    s.Bind(1, key).Bind(2, ToInt64(epoch.value()));
    if (base) {
      s.Bind(3, base->session.str())
          .Bind(4, ToInt64(base->epoch.value()))
          .Bind(5, ToInt64(base->seq.value()));
    } else {
      s.BindNull(3).BindNull(4).BindNull(5);
    }
    return Check(s.Exec());
  }

  // Starts epoch current+1 of a cached session continuing `base`.
  Status StartEpoch(Cached& cached, const HistoryBase& base) {
    const Epoch epoch = cached.state.current().next();
    AS_RETURN_IF_ERROR(InsertEpoch(cached.key, epoch, base));
    Stmt& s = set_current_epoch_;
    s.Bind(1, ToInt64(epoch.value())).Bind(2, cached.key);
    AS_RETURN_IF_ERROR(Check(s.Exec()));
    Stmt& d = delete_producers_;
    d.Bind(1, cached.key);
    AS_RETURN_IF_ERROR(Check(d.Exec()));
    cached.state.epochs.push_back(store_internal::ContinueFrom(base));
    cached.state.producers.clear();
    return Status::Ok();
  }

  // Records that this commit moved `id`'s epoch `epoch` from tail `before` to `after`.
  void Touch(const SessionId& id, Epoch epoch, Seq before, Seq after) {
    auto [it, fresh] = touched_.try_emplace(id.str(), Touched{epoch, before, after});
    if (!fresh)
      it->second = Touched{epoch, it->second.epoch == epoch ? it->second.before : before, after};
  }
  const std::map<std::string, Touched>& touched() const { return touched_; }
  void DropCache() { cache_.clear(); }

  // Stores the ownership lease of a cached session as its picture holds it.
  Status StoreOwner(const Cached& cached) {
    Stmt& s = set_owner_;
    const OwnerLease& o = cached.state.owner;
    s.Bind(1, o.owner).Bind(2, ToInt64(o.generation)).Bind(3, o.expires_ms).Bind(4, cached.key);
    return Check(s.Exec());
  }

 private:
  Status LoadEpochs(Cached& cached) {
    Stmt& s = select_epochs_;
    s.Bind(1, cached.key);
    while (true) {
      auto row = s.Step();
      if (!row.ok()) return Check(row.status());
      if (!row.value()) break;
      store_internal::EpochState epoch;
      if (!s.IsNull(1))
        epoch.base = HistoryBase{SessionId(s.Text(1)), Epoch(s.Int(2)), Seq(s.Int(3))};
      cached.state.epochs.push_back(std::move(epoch));
    }
    s.Reset();
    for (std::size_t i = 0; i < cached.state.epochs.size(); ++i) {
      auto& epoch = cached.state.epochs[i];
      Stmt& m = max_seq_;
      m.Bind(1, cached.key).Bind(2, static_cast<std::int64_t>(i + 1));
      auto row = m.Step();
      if (!row.ok()) return Check(row.status());
      epoch.tail = m.IsNull(0) ? epoch.base_seq() : Seq(m.Int(0));
      m.Reset();
    }
    if (cached.state.epochs.empty()) {
      return Error(ErrorCode::kCorruption, "a stored session has no epochs");
    }
    return Status::Ok();
  }

  Status LoadProducers(Cached& cached) {
    Stmt& s = select_producers_;
    s.Bind(1, cached.key);
    while (true) {
      auto row = s.Step();
      if (!row.ok()) return Check(row.status());
      if (!row.value()) break;
      cached.state.producers[s.Text(0)] = store_internal::ProducerState{
          static_cast<std::uint64_t>(s.Int(1)), static_cast<std::uint64_t>(s.Int(2)), Seq(s.Int(3)),
          Seq(s.Int(4))};
    }
    s.Reset();
    return Status::Ok();
  }

  // Record batches are cut at this many events or bytes, so reading one event never decodes more
  // than a bounded batch.
  static constexpr std::size_t kMaxBatchRecords = 128;
  static constexpr std::size_t kMaxBatchBytes = std::size_t{64} * 1024;

  struct PendingBatch {
    Seq first, last;
    std::size_t count = 0;
    std::string data;
  };

  Status WriteBatch(std::int64_t key, Epoch epoch, std::uint64_t writer, PendingBatch& batch) {
    Stmt& s = insert_batch_;
    s.Bind(1, key)
        .Bind(2, ToInt64(epoch.value()))
        .Bind(3, ToInt64(batch.first.value()))
        .Bind(4, ToInt64(batch.last.value()));
    s.Bind(5, store_internal::kRecordBatchFormat).BindBlob(6, batch.data).Bind(7, ToInt64(writer));
    Status written = Check(s.Exec());
    batch.count = 0;
    batch.data.clear();
    return written;
  }

  Db db_;
  LogLimits limits_;
  std::size_t max_cached_;
  TimestampMs now_ = 0;
  Status io_;
  std::unordered_map<std::string, Cached> cache_;
  std::map<std::string, Touched> touched_;
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>, PendingBatch>
      batches_;  // (key, epoch, writer)
  Stmt insert_batch_, upsert_producer_, select_session_, select_epochs_, max_seq_,
      select_producers_, insert_session_, insert_epoch_, set_current_epoch_, delete_producers_,
      set_owner_, set_meta_;
};

// The writer thread's queue: every write runs there, on the Writer, inside the batch transaction;
// an SQL failure recorded on the Writer fails the whole batch.
using WriteQueue = store_internal::CommitQueue<Writer>;

}  // namespace agentstream::sqlite
