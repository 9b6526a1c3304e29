// Internal to the store module: one batch transaction of the PostgreSQL log's writer thread
// (postgres_log.h): the sessions it locked and read, what it will write with its COMMIT, the first
// statement that failed (which ends the batch), and what it changed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pg/pg.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/postgres/sql.h"
#include "store/record_batch.h"
#include "system/wall_clock.h"

namespace agentstream::pg {

using store_internal::AppendPlan;
using store_internal::SessionState;

// Record batches are cut at this many events or bytes, as in SQLite.
inline constexpr std::size_t kMaxBatchRecords = 128;
inline constexpr std::size_t kMaxBatchBytes = std::size_t{64} * 1024;

// What one commit did to one session.
struct Touched {
  Epoch epoch;
  Seq after;
};

// One batch transaction on the writer's connection: the sessions it locked and read, the first
// SQL failure (which ends the batch), and what it changed.
class Txn {
 public:
  struct Session {
    std::int64_t key = 0;
    SessionState state;
  };

  explicit Txn(Conn& conn) : conn_(conn), now_(system::WallClockMs()) {}

  TimestampMs now() const { return now_; }
  const Status& io() const { return io_; }
  const std::map<std::string, Touched>& touched() const { return touched_; }

  // Runs one statement; a failure is the batch's.
  Result<Rows> Exec(std::string_view sql, const std::vector<Param>& params = {}) {
    Result<Rows> rows = conn_.Exec(sql, params);
    if (!rows.ok() && io_.ok()) io_ = rows.status();
    return rows;
  }

  // Runs `statements` in one round trip (Conn::ExecPipeline); the first failure is the batch's.
  std::vector<Result<Rows>> ExecPipeline(std::span<const Statement> statements) {
    std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
    for (const Result<Rows>& a : answers) {
      if (!a.ok() && io_.ok()) io_ = a.status();
    }
    return answers;
  }

  // Opens the transaction and prefetches `ids` (Prefetch), in one round trip.
  Status Begin(std::vector<std::string> ids) { return Prefetch(std::move(ids), true); }

  // Locks the rows of `ids` in id order (so that concurrent daemons take them in one order) and
  // reads their state under the locks: three statements for any number of sessions, in one
  // round trip (the second and third find the sessions by id, too, and keep to those the first
  // locked). Unknown ids are left out; a session whose stored state is inconsistent is left for
  // Load to report. `begin`: BEGIN first, in the same round trip.
  Status Prefetch(std::vector<std::string> ids, bool begin = false) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::erase_if(ids, [&](const std::string& id) { return sessions_.count(id) > 0; });
    if (ids.empty()) return begin ? Exec("BEGIN").status() : Status::Ok();
    const std::string id_array = TextArray(ids);
    std::vector<Statement> statements;
    if (begin) statements.push_back(Statement{"BEGIN", {}});
    statements.push_back(Statement{
        "SELECT key, provider, cwd, title, created_ms, persistence, status, forked_session, "
        "forked_epoch, forked_seq, id, owner, owner_generation, owner_expires_ms, usage FROM "
        "sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
        {id_array},
        /*reuse=*/true});
    statements.push_back(Statement{
        "SELECT e.session, e.epoch, e.base_session, e.base_epoch, e.base_seq, (SELECT v.last_seq "
        "FROM events v WHERE v.session = e.session AND v.epoch = e.epoch ORDER BY v.first_seq "
        "DESC LIMIT 1) FROM epochs e WHERE e.session IN (SELECT key FROM sessions WHERE id = "
        "ANY($1::text[])) ORDER BY e.session, e.epoch",
        {id_array},
        /*reuse=*/true});
    statements.push_back(Statement{
        "SELECT session, producer, epoch, seq, first_seq, last_seq FROM producers WHERE session "
        "IN (SELECT key FROM sessions WHERE id = ANY($1::text[]))",
        {id_array},
        /*reuse=*/true});
    std::vector<Result<Rows>> answers = ExecPipeline(statements);
    for (const Result<Rows>& a : answers) AS_RETURN_IF_ERROR(a.status());
    const Rows& s = *answers[begin ? 1 : 0];
    const Rows& e = *answers[begin ? 2 : 1];
    const Rows& p = *answers[begin ? 3 : 2];
    std::map<std::int64_t, std::pair<std::string, Session>> loaded;
    for (int i = 0; i < s.size(); ++i) {
      Session session;
      session.key = s.Int(i, 0);
      session.state.meta = MetaOf(s, i, 1, 14);
      session.state.forked_from = BaseOf(s, i, 7);
      session.state.owner =
          OwnerLease{s.Text(i, 11), static_cast<std::uint64_t>(s.Int(i, 12)), s.Int(i, 13)};
      const std::int64_t key = session.key;
      loaded.emplace(key, std::make_pair(s.Text(i, 10), std::move(session)));
    }
    // A session another writer created after the first statement's lock is not ours to read.
    auto locked = [&](std::int64_t key) -> SessionState* {
      auto it = loaded.find(key);
      return it == loaded.end() ? nullptr : &it->second.second.state;
    };
    std::set<std::int64_t> broken;  // epochs not numbered 1, 2, ...
    for (int i = 0; i < e.size(); ++i) {
      SessionState* state = locked(e.Int(i, 0));
      if (state == nullptr) continue;
      if (e.Int(i, 1) != static_cast<std::int64_t>(state->epochs.size()) + 1)
        broken.insert(e.Int(i, 0));
      store_internal::EpochState epoch;
      epoch.base = BaseOf(e, i, 2);
      epoch.tail = e.IsNull(i, 5) ? epoch.base_seq() : Seq(e.Int(i, 5));
      state->epochs.push_back(std::move(epoch));
    }
    for (int i = 0; i < p.size(); ++i) {
      SessionState* state = locked(p.Int(i, 0));
      if (state == nullptr) continue;
      state->producers[p.Text(i, 1)] = store_internal::ProducerState{
          static_cast<std::uint64_t>(p.Int(i, 2)), static_cast<std::uint64_t>(p.Int(i, 3)),
          Seq(p.Int(i, 4)), Seq(p.Int(i, 5))};
    }
    for (auto& [key, entry] : loaded) {
      if (broken.count(key) > 0 || entry.second.state.epochs.empty()) {
        inconsistent_.insert(entry.first);
        continue;
      }
      sessions_.emplace(std::move(entry.first), std::move(entry.second));
    }
    return Status::Ok();
  }

  // The state of a session, read under its row lock once per transaction. kNotFound when unknown.
  Result<Session*> Load(const SessionId& id) {
    if (auto it = sessions_.find(id.str()); it != sessions_.end()) return &it->second;
    if (inconsistent_.count(id.str()) == 0) AS_RETURN_IF_ERROR(Prefetch({id.str()}));
    if (auto it = sessions_.find(id.str()); it != sessions_.end()) return &it->second;
    if (inconsistent_.count(id.str()) > 0)
      return Error(ErrorCode::kCorruption,
                   "session " + id.str() + " has no epochs or a gap in its epochs");
    return Error(ErrorCode::kNotFound, "no session " + id.str());
  }

  // Inserts a new session with its first epoch. kAlreadyExists when another writer made it first.
  Result<Session*> InsertSession(const SessionId& id, SessionMeta meta,
                                 std::optional<HistoryBase> base) {
    meta = store_internal::NewSessionMeta(std::move(meta), {}, now_);
    std::vector<Param> params{id.str(),
                              meta.provider,
                              meta.cwd,
                              meta.title,
                              meta.created_ms,
                              meta.persistence_handle,
                              meta.status_snapshot};
    if (base) {
      params.insert(params.end(),
                    {base->session.str(), I64(base->epoch.value()), I64(base->seq.value())});
    } else {
      params.insert(params.end(), {Param(), Param(), Param()});
    }
    params.push_back(store_internal::EncodeUsageTotals(meta.usage));
    AS_ASSIGN_OR_RETURN(
        Rows r, Exec("INSERT INTO sessions(id, provider, cwd, title, created_ms, persistence, "
                     "status, forked_session, forked_epoch, forked_seq, current_epoch, usage) "
                     "VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,1,$11) ON CONFLICT (id) DO NOTHING "
                     "RETURNING key",
                     params));
    if (r.size() == 0) return Error(ErrorCode::kAlreadyExists, "session " + id.str() + " exists");
    Session session;
    session.key = r.Int(0, 0);
    session.state.meta = std::move(meta);
    session.state.forked_from = base;
    session.state.epochs.push_back(base ? store_internal::ContinueFrom(*base)
                                        : store_internal::EpochState{});
    AS_RETURN_IF_ERROR(InsertEpoch(session.key, Epoch(1), base));
    return &(sessions_[id.str()] = std::move(session));
  }

  // Stores the title and usage totals of `meta` as the session's (the rest of the meta is not
  // changed by appends).
  Status StoreMeta(Session& session, SessionMeta meta) {
    Param usage;
    if (meta.usage) usage = store_internal::EncodeUsageTotals(meta.usage);
    AS_RETURN_IF_ERROR(Exec("UPDATE sessions SET title=$1, usage=$2 WHERE key=$3",
                            {meta.title, usage, session.key})
                           .status());
    session.state.meta = std::move(meta);
    return Status::Ok();
  }

  // Starts epoch current+1 of a session continuing `base`.
  Status StartEpoch(Session& session, const HistoryBase& base) {
    const Epoch epoch = session.state.current().next();
    AS_RETURN_IF_ERROR(InsertEpoch(session.key, epoch, base));
    AS_RETURN_IF_ERROR(
        Exec("UPDATE sessions SET current_epoch=$1 WHERE key=$2", {I64(epoch.value()), session.key})
            .status());
    AS_RETURN_IF_ERROR(
        Exec("DELETE FROM producers WHERE session=$1", {Param(session.key)}).status());
    std::erase_if(producers_, [&](const auto& entry) { return entry.first.first == session.key; });
    session.state.epochs.push_back(store_internal::ContinueFrom(base));
    session.state.producers.clear();
    return Status::Ok();
  }

  // Adds `events`, seqs from `first`, appended by ownership generation `writer` (0: none), to the
  // record batches of (key, epoch, writer) this commit writes (Writes): consecutive appends of one
  // session and writer in one commit share a batch row; rows never mix writers.
  void InsertEvents(std::int64_t key, Epoch epoch, Seq first, const std::vector<NewEvent>& events,
                    std::uint64_t writer = 0) {
    PendingBatch& batch = pending_[{key, epoch.value(), writer}];
    Seq seq = first;
    for (const NewEvent& e : events) {
      if (batch.count > 0 && (batch.last.next() != seq || batch.count >= kMaxBatchRecords ||
                              batch.data.size() >= kMaxBatchBytes)) {
        full_.push_back(BatchRow{key, epoch, writer, std::move(batch)});
        batch = PendingBatch{};
      }
      if (batch.count == 0) batch.first = seq;
      const auto kind = static_cast<std::uint16_t>(e.kind);
      store_internal::EncodeRecord(
          now_, kind, kEventFormatVersion, e.turn, e.payload,
          store_internal::RecordChecksum(seq, now_, kind, kEventFormatVersion, e.turn, e.payload),
          batch.data);
      batch.last = seq;
      ++batch.count;
      seq = seq.next();
    }
  }

  // Records the producer state an append leaves, written with the COMMIT.
  void StoreProducer(std::int64_t key, const AppendPlan& plan) {
    if (plan.producer) producers_[{key, plan.producer_id}] = *plan.producer;
  }

  // The statements that write the record batches and producer states of this commit, many rows
  // per statement; they are sent with its COMMIT.
  std::vector<Statement> Writes() {
    for (auto& [where, batch] : pending_) {
      const auto& [key, epoch, writer] = where;
      if (batch.count > 0) full_.push_back(BatchRow{key, Epoch(epoch), writer, std::move(batch)});
    }
    pending_.clear();
    std::vector<Statement> writes;
    constexpr std::size_t kRowsPerStatement = 1000;  // 7 parameters a row, 65,535 at most
    for (std::size_t from = 0; from < full_.size(); from += kRowsPerStatement) {
      Statement& insert = writes.emplace_back();
      insert.sql =
          "INSERT INTO events(session, epoch, first_seq, last_seq, format, data, writer) VALUES";
      for (std::size_t i = from; i < std::min(full_.size(), from + kRowsPerStatement); ++i) {
        BatchRow& row = full_[i];
        insert.sql += (i > from ? ",(" : "(") + Placeholders(insert.params.size(), 7) + ")";
        insert.params.insert(
            insert.params.end(),
            {row.key, I64(row.epoch.value()), I64(row.batch.first.value()),
             I64(row.batch.last.value()), std::int64_t{store_internal::kRecordBatchFormat},
             Param::Bytes(std::move(row.batch.data)), I64(row.writer)});
      }
    }
    full_.clear();
    if (!producers_.empty()) {
      Statement& upsert = writes.emplace_back();
      upsert.sql =
          "INSERT INTO producers(session, producer, epoch, seq, first_seq, last_seq) VALUES";
      for (const auto& [where, p] : producers_) {
        upsert.sql +=
            (upsert.params.empty() ? "(" : ",(") + Placeholders(upsert.params.size(), 6) + ")";
        upsert.params.insert(upsert.params.end(),
                             {where.first, where.second, I64(p.epoch), I64(p.seq),
                              I64(p.first_seq.value()), I64(p.last_seq.value())});
      }
      upsert.sql +=
          " ON CONFLICT (session, producer) DO UPDATE SET epoch=excluded.epoch, seq=excluded.seq, "
          "first_seq=excluded.first_seq, last_seq=excluded.last_seq";
      producers_.clear();
    }
    return writes;
  }

  void Touch(const SessionId& id, Epoch epoch, Seq after) {
    touched_[id.str()] = Touched{epoch, after};
  }

  // The server's clock (milliseconds since the Unix epoch): leases are judged by it, so that the
  // daemons sharing a database agree on time whatever their own clocks say.
  Result<TimestampMs> ServerNow() {
    AS_ASSIGN_OR_RETURN(Rows r, Exec(ServerNowSql()));
    return r.Int(0, 0);
  }

  // Stores the ownership lease of a loaded session as its picture holds it.
  Status StoreOwner(const Session& session) {
    const OwnerLease& o = session.state.owner;
    return Exec(
               "UPDATE sessions SET owner=$1, owner_generation=$2, owner_expires_ms=$3 WHERE "
               "key=$4",
               {o.owner, I64(o.generation), o.expires_ms, session.key})
        .status();
  }

 private:
  Status InsertEpoch(std::int64_t key, Epoch epoch, const std::optional<HistoryBase>& base) {
    return Exec(
               "INSERT INTO epochs(session, epoch, base_session, base_epoch, base_seq) "
               "VALUES($1,$2,$3,$4,$5)",
               {key, I64(epoch.value()), base ? Param(base->session.str()) : Param(),
                base ? Param(I64(base->epoch.value())) : Param(),
                base ? Param(I64(base->seq.value())) : Param()})
        .status();
  }

  struct PendingBatch {
    Seq first, last;
    std::size_t count = 0;
    std::string data;
  };
  struct BatchRow {
    std::int64_t key;
    Epoch epoch;
    std::uint64_t writer;
    PendingBatch batch;
  };

  // "$N+1,$N+2,...": `count` placeholders after the `used` ones.
  static std::string Placeholders(std::size_t used, std::size_t count) {
    std::string out;
    for (std::size_t i = 1; i <= count; ++i) out += (i > 1 ? ",$" : "$") + std::to_string(used + i);
    return out;
  }

  Conn& conn_;
  TimestampMs now_;
  Status io_;
  std::map<std::string, Session> sessions_;
  std::set<std::string> inconsistent_;  // sessions whose stored epochs do not add up
  std::map<std::string, Touched> touched_;
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>, PendingBatch>
      pending_;                 // (key, epoch, writer)
  std::vector<BatchRow> full_;  // cut batches, written with the COMMIT
  std::map<std::pair<std::int64_t, std::string>, store_internal::ProducerState> producers_;
};

// The writer thread's queue: every write runs there, in the batch's Txn; a failed statement
// fails the whole batch (Txn::io).
using WriteQueue = store_internal::CommitQueue<Txn>;

}  // namespace agentstream::pg
