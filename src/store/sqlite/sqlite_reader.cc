#include "store/sqlite/sqlite_reader.h"

#include <algorithm>
#include <string>

#include "core/sql_int.h"
#include "store/log_state.h"
#include "store/record_batch.h"
#include "store/snapshot_read.h"
#include "system/wall_clock.h"

namespace agentstream::sqlite {

namespace {

constexpr std::int64_t kReaderMmapBytes = std::int64_t{1} << 30;  // 1 GiB of address space

// Reads of one snapshot: the queries a read needs, on one connection inside BEGIN ... COMMIT.
class Snapshot {
 public:
  explicit Snapshot(Db& db) : db_(db) {}
  ~Snapshot() {
    if (open_) (void)db_.Exec("COMMIT");
  }

  Status Begin() {
    AS_RETURN_IF_ERROR(db_.Exec("BEGIN"));
    open_ = true;
    return Status::Ok();
  }

  using SessionRow = store_internal::SessionRow;

  Result<SessionRow> Session(const SessionId& id) {
    AS_ASSIGN_OR_RETURN(
        auto s,
        db_.Cached(
            "SELECT key, current_epoch, provider, cwd, title, created_ms, persistence, status, "
            "forked_session, forked_epoch, forked_seq, owner, owner_generation, owner_expires_ms, "
            "usage FROM sessions WHERE id=?"));
    s->Bind(1, id.str());
    AS_ASSIGN_OR_RETURN(bool found, s->Step());
    if (!found) return Error(ErrorCode::kNotFound, "no session " + id.str());
    SessionRow row;
    row.key = s->Int(0);
    row.current = Epoch(s->Int(1));
    row.meta = SessionMeta{s->Text(2), s->Text(3), s->Text(4), s->Int(5), s->Text(6), s->Text(7)};
    if (!s->IsNull(8))
      row.forked_from = HistoryBase{SessionId(s->Text(8)), Epoch(s->Int(9)), Seq(s->Int(10))};
    row.owner = OwnerLease{s->Text(11), static_cast<std::uint64_t>(s->Int(12)), s->Int(13),
                           system::WallClockMs()};
    if (!s->IsNull(14)) row.meta.usage = store_internal::DecodeUsageTotals(s->Text(14));
    return row;
  }

  Result<std::int64_t> Key(const SessionId& id) {
    AS_ASSIGN_OR_RETURN(auto s, db_.Cached("SELECT key FROM sessions WHERE id=?"));
    s->Bind(1, id.str());
    AS_ASSIGN_OR_RETURN(bool found, s->Step());
    if (!found)
      return Error(ErrorCode::kCorruption, "history refers to a missing session " + id.str());
    return s->Int(0);
  }

  // The base of (key, epoch); kNotFound when the epoch does not exist.
  Result<std::optional<HistoryBase>> Base(std::int64_t key, Epoch epoch) {
    AS_ASSIGN_OR_RETURN(
        auto s,
        db_.Cached(
            "SELECT base_session, base_epoch, base_seq FROM epochs WHERE session=? AND epoch=?"));
    s->Bind(1, key).Bind(2, I64(epoch.value()));
    AS_ASSIGN_OR_RETURN(bool found, s->Step());
    if (!found) return Error(ErrorCode::kNotFound, "no epoch " + std::to_string(epoch.value()));
    if (s->IsNull(0)) return std::optional<HistoryBase>();
    return std::optional<HistoryBase>(
        HistoryBase{SessionId(s->Text(0)), Epoch(s->Int(1)), Seq(s->Int(2))});
  }

  Result<Seq> TailOf(std::int64_t key, Epoch epoch, Seq base_seq) {
    AS_ASSIGN_OR_RETURN(auto s, db_.Cached("SELECT last_seq FROM events WHERE session=? AND "
                                           "epoch=? ORDER BY first_seq DESC LIMIT 1"));
    s->Bind(1, key).Bind(2, I64(epoch.value()));
    AS_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row || s->IsNull(0)) return base_seq;
    return Seq(s->Int(0));
  }

  // Appends the rows of (key, epoch) with seqs in [lo, hi], ascending, at most `limit` (the
  // lowest ones reading forward, the highest ones reading backward). Touches only the record
  // batches that overlap the range, found through the index.
  Status RowsOf(std::int64_t key, Epoch epoch, Seq lo, Seq hi, bool backward, std::size_t limit,
                std::vector<store_internal::StoredRow>& out) {
    Seq start = lo;
    if (!backward) {
      AS_ASSIGN_OR_RETURN(
          auto first,
          db_.Cached(
              "SELECT max(first_seq) FROM events WHERE session=? AND epoch=? AND first_seq <= ?"));
      first->Bind(1, key).Bind(2, I64(epoch.value())).Bind(3, I64(lo.value()));
      AS_ASSIGN_OR_RETURN(bool row, first->Step());
      if (row && !first->IsNull(0)) start = Seq(first->Int(0));
    }
    AS_ASSIGN_OR_RETURN(
        auto s,
        db_.Cached(backward
                       ? "SELECT first_seq, last_seq, format, data, writer FROM events "
                         "WHERE session=? AND epoch=? AND first_seq <= ? ORDER BY first_seq DESC"
                       : "SELECT first_seq, last_seq, format, data, writer FROM events "
                         "WHERE session=? AND epoch=? AND first_seq >= ? AND first_seq <= ? ORDER "
                         "BY first_seq"));
    s->Bind(1, key).Bind(2, I64(epoch.value()));
    if (backward)
      s->Bind(3, I64(hi.value()));
    else
      s->Bind(3, I64(start.value())).Bind(4, I64(hi.value()));
    std::vector<std::vector<store_internal::StoredRow>> chunks;  // backward: newest batch first
    std::size_t collected = 0;
    while (collected < limit) {
      AS_ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      const Seq first(s->Int(0)), last(s->Int(1));
      const auto format =
          static_cast<std::uint32_t>(std::clamp<std::int64_t>(s->Int(2), 0, 0xffffffffLL));
      const void* blob = sqlite3_column_blob(s->raw(), 3);
      const std::string_view data(static_cast<const char*>(blob),
                                  sqlite3_column_bytes(s->raw(), 3));
      std::vector<store_internal::StoredRow> rows;
      AS_RETURN_IF_ERROR(store_internal::DecodeBatch(data, format, first, last, lo, hi, rows));
      const auto writer = static_cast<std::uint64_t>(s->Int(4));
      for (auto& row : rows) row.record.owner_generation = writer;
      collected += rows.size();
      chunks.push_back(std::move(rows));
      if (backward && first <= lo) break;
    }
    if (backward) std::reverse(chunks.begin(), chunks.end());
    std::vector<store_internal::StoredRow> all;
    for (auto& chunk : chunks)
      for (auto& row : chunk) all.push_back(std::move(row));
    const std::size_t skip = backward && all.size() > limit ? all.size() - limit : 0;
    for (std::size_t i = skip; i < all.size() && i - skip < limit; ++i)
      out.push_back(std::move(all[i]));
    return Status::Ok();
  }

 private:
  Db& db_;
  bool open_ = false;
};

}  // namespace

class ReaderPool::Lease {
 public:
  Lease(ReaderPool& pool, Db db) : pool_(pool), db_(std::move(db)) {}
  ~Lease() { pool_.Release(std::move(db_)); }
  Db& db() { return db_; }

 private:
  ReaderPool& pool_;
  Db db_;
};

ReaderPool::ReaderPool(std::string path, std::string vfs, std::size_t max_connections,
                       LogLimits limits, const DurableFloor* floor)
    : path_(std::move(path)),
      vfs_(std::move(vfs)),
      max_connections_(std::max<std::size_t>(1, max_connections)),
      limits_(limits),
      floor_(floor) {}

ReaderPool::~ReaderPool() = default;

Seq ReaderPool::Visible(const SessionId& session, Epoch epoch, Seq committed) const {
  return floor_ == nullptr ? committed : floor_->Clamp(session.str(), epoch, committed);
}

Result<Db> ReaderPool::Acquire() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return !idle_.empty() || open_ < max_connections_; });
  if (!idle_.empty()) {
    Db db = std::move(idle_.back());
    idle_.pop_back();
    return db;
  }
  ++open_;
  lock.unlock();
  auto db = Db::Open(path_, {.read_only = true, .vfs = vfs_});
  if (db.ok()) {
    // Reads map the file rather than copy pages through read(2); each reader keeps a small
    // page cache of its own (the OS page cache is shared).
    Status tuned = db->Exec("PRAGMA mmap_size=" + std::to_string(kReaderMmapBytes));
    if (tuned.ok()) tuned = db->Exec("PRAGMA cache_size=-8192");
    if (!tuned.ok()) db = tuned;
  }
  if (!db.ok()) {
    std::lock_guard relock(mu_);
    --open_;
    idle_cv_.notify_one();
  }
  return db;
}

void ReaderPool::Release(Db db) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(db));
  }
  idle_cv_.notify_one();
}

Result<ReadResult> ReaderPool::Read(const ReadRequest& request) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  Snapshot snap(lease.db());
  AS_RETURN_IF_ERROR(snap.Begin());
  return store_internal::ReadThrough(snap, request, limits_,
                                     [this](const SessionId& session, Epoch epoch, Seq committed) {
                                       return Visible(session, epoch, committed);
                                     });
}

Result<Cursor> ReaderPool::Tail(const SessionId& id) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, GetSession(id));
  return Cursor{info.epoch, info.tail};
}

Result<SessionInfo> ReaderPool::GetSession(const SessionId& id) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  Snapshot snap(lease.db());
  AS_RETURN_IF_ERROR(snap.Begin());
  AS_ASSIGN_OR_RETURN(auto session, snap.Session(id));
  AS_ASSIGN_OR_RETURN(auto base, snap.Base(session.key, session.current));
  AS_ASSIGN_OR_RETURN(Seq committed,
                      snap.TailOf(session.key, session.current, base ? base->seq : Seq(0)));
  const Seq tail = Visible(id, session.current, committed);
  return SessionInfo{id,   std::move(session.meta), session.current,
                     tail, session.forked_from,     std::move(session.owner)};
}

Result<std::vector<SessionInfo>> ReaderPool::ListSessions(const std::string& after,
                                                          std::size_t limit) {
  std::vector<std::string> ids;
  {
    AS_ASSIGN_OR_RETURN(Db db, Acquire());
    Lease lease(*this, std::move(db));
    AS_ASSIGN_OR_RETURN(
        Stmt s, lease.db().Prepare("SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?"));
    s.Bind(1, after).Bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000)));
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ids.push_back(s.Text(0));
    }
  }
  std::vector<SessionInfo> out;
  for (const auto& id : ids) {
    AS_ASSIGN_OR_RETURN(SessionInfo info, GetSession(SessionId(id)));
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::optional<Checkpoint>> ReaderPool::LoadCheckpoint(const SessionId& session) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  AS_ASSIGN_OR_RETURN(auto exists, lease.db().Cached("SELECT 1 FROM sessions WHERE id=?"));
  exists->Bind(1, session.str());
  AS_ASSIGN_OR_RETURN(bool found, exists->Step());
  if (!found) return Error(ErrorCode::kNotFound, "no session " + session.str());
  AS_ASSIGN_OR_RETURN(
      auto s, lease.db().Cached("SELECT epoch, seq, body FROM checkpoints WHERE session=?"));
  s->Bind(1, session.str());
  AS_ASSIGN_OR_RETURN(bool row, s->Step());
  std::optional<Checkpoint> out;
  if (row) {
    out = Checkpoint{Epoch(static_cast<std::uint64_t>(s->Int(0))),
                     Seq(static_cast<std::uint64_t>(s->Int(1))), s->Text(2)};
  }
  return out;
}

Status ReaderPool::Run(const std::function<Status(Db&)>& body) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  Snapshot snap(lease.db());
  AS_RETURN_IF_ERROR(snap.Begin());
  return body(lease.db());
}

Result<OwnerLease> ReaderPool::GetOwnership(const SessionId& session, TimestampMs now_ms) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  AS_ASSIGN_OR_RETURN(
      auto s, lease.db().Cached(
                  "SELECT owner, owner_generation, owner_expires_ms FROM sessions WHERE id=?"));
  s->Bind(1, session.str());
  AS_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return Error(ErrorCode::kNotFound, "no session " + session.str());
  return OwnerLease{s->Text(0), static_cast<std::uint64_t>(s->Int(1)), s->Int(2), now_ms};
}

Result<std::vector<std::pair<SessionId, OwnerLease>>> ReaderPool::ListExpiredOwnerships(
    TimestampMs now_ms, std::size_t limit) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  AS_ASSIGN_OR_RETURN(
      Stmt s, lease.db().Prepare("SELECT id, owner, owner_generation, owner_expires_ms FROM "
                                 "sessions WHERE owner <> '' AND owner_expires_ms <= ? "
                                 "ORDER BY owner_expires_ms LIMIT ?"));
  s.Bind(1, now_ms).Bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000)));
  std::vector<std::pair<SessionId, OwnerLease>> out;
  while (true) {
    AS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.emplace_back(SessionId(s.Text(0)),
                     OwnerLease{s.Text(1), static_cast<std::uint64_t>(s.Int(2)), s.Int(3), now_ms});
  }
  return out;
}

Result<std::vector<OwnershipRecord>> ReaderPool::OwnershipHistory(const SessionId& session) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  AS_ASSIGN_OR_RETURN(Stmt known, lease.db().Prepare("SELECT 1 FROM sessions WHERE id=?"));
  known.Bind(1, session.str());
  AS_ASSIGN_OR_RETURN(bool exists, known.Step());
  if (!exists) return Error(ErrorCode::kNotFound, "no session " + session.str());
  AS_ASSIGN_OR_RETURN(Stmt s, lease.db().Prepare("SELECT generation, owner, granted_ms, epoch, seq "
                                                 "FROM owner_history WHERE session=? ORDER BY "
                                                 "generation"));
  s.Bind(1, session.str());
  std::vector<OwnershipRecord> out;
  while (true) {
    AS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(OwnershipRecord{static_cast<std::uint64_t>(s.Int(0)), s.Text(1), s.Int(2),
                                  Cursor{Epoch(s.Int(3)), Seq(s.Int(4))}});
  }
  return out;
}

Result<std::optional<DaemonRecord>> ReaderPool::GetDaemon(const std::string& id,
                                                          TimestampMs now_ms) {
  AS_ASSIGN_OR_RETURN(Db db, Acquire());
  Lease lease(*this, std::move(db));
  AS_ASSIGN_OR_RETURN(std::optional<DaemonRecord> found, LoadDaemon(lease.db(), id));
  if (found) found->now_ms = now_ms;
  return found;
}

Result<std::optional<DaemonRecord>> LoadDaemon(Db& db, const std::string& id) {
  AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT url, host, data_dir, started_ms, heartbeat_ms "
                                         "FROM daemons WHERE id=?"));
  s.Bind(1, id);
  AS_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return std::optional<DaemonRecord>();
  return std::optional<DaemonRecord>(
      DaemonRecord{id, s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4), 0});
}

}  // namespace agentstream::sqlite
