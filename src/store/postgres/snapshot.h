// Internal to the store module: the reads of one snapshot (REPEATABLE READ) on one reader
// connection of the PostgreSQL log (postgres_log.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pg/pg.h"
#include "store/log_state.h"
#include "store/postgres/sql.h"
#include "store/record_batch.h"

namespace agentstream::pg {

// Reads of one snapshot (REPEATABLE READ) on one reader connection. The BEGIN goes in one round
// trip with the first read, and a session's row comes with the base and the tail of its current
// epoch, so that a page of the current epoch costs three round trips: BEGIN and the session, the
// batches, COMMIT.
class Snapshot {
 public:
  explicit Snapshot(Conn& conn) : conn_(conn) {}
  ~Snapshot() {
    if (open_) (void)conn_.ExecScript("COMMIT");
  }
  // One statement in the snapshot; the first one is sent behind the BEGIN.
  Result<Rows> Exec(Statement statement) {
    if (!begin_pending_) return conn_.Exec(statement);
    begin_pending_ = false;
    const Statement pipeline[] = {{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", {}},
                                  std::move(statement)};
    std::vector<Result<Rows>> answers = conn_.ExecPipeline(pipeline);
    if (!answers[0].ok()) return answers[0].status();
    open_ = true;
    return std::move(answers[1]);
  }

  using SessionRow = store_internal::SessionRow;

  // The session's row; the base and the tail of its current epoch are kept for Base and TailOf.
  Result<SessionRow> Session(const SessionId& id) {
    AS_ASSIGN_OR_RETURN(
        Rows r, Exec({"SELECT s.key, s.current_epoch, s.provider, s.cwd, s.title, s.created_ms, "
                      "s.persistence, s.status, s.forked_session, s.forked_epoch, s.forked_seq, "
                      "s.owner, s.owner_generation, s.owner_expires_ms, " +
                          std::string(kServerNowMs) +
                          ", s.usage, e.epoch, e.base_session, e.base_epoch, e.base_seq, "
                          "(SELECT last_seq FROM events WHERE session=s.key AND "
                          "epoch=s.current_epoch ORDER BY first_seq DESC LIMIT 1) "
                          "FROM sessions s LEFT JOIN epochs e ON e.session=s.key AND "
                          "e.epoch=s.current_epoch WHERE s.id=$1",
                      {id.str()}}));
    if (r.size() == 0) return Error(ErrorCode::kNotFound, "no session " + id.str());
    const std::int64_t key = r.Int(0, 0);
    const Epoch current(r.Int(0, 1));
    if (!r.IsNull(0, 16)) {
      const std::optional<HistoryBase> base = BaseOf(r, 0, 17);
      const Seq tail = r.IsNull(0, 20) ? (base ? base->seq : Seq(0)) : Seq(r.Int(0, 20));
      current_ = Current{key, current, base, tail};
    }
    return SessionRow{key, current, MetaOf(r, 0, 2, 15), BaseOf(r, 0, 8),
                      OwnerLease{r.Text(0, 11), static_cast<std::uint64_t>(r.Int(0, 12)),
                                 r.Int(0, 13), r.Int(0, 14)}};
  }

  Result<std::int64_t> Key(const SessionId& id) {
    AS_ASSIGN_OR_RETURN(Rows r, Exec({"SELECT key FROM sessions WHERE id=$1", {id.str()}}));
    if (r.size() == 0)
      return Error(ErrorCode::kCorruption, "history refers to a missing session " + id.str());
    return r.Int(0, 0);
  }

  // The base of (key, epoch); kNotFound when the epoch does not exist.
  Result<std::optional<HistoryBase>> Base(std::int64_t key, Epoch epoch) {
    if (current_ && current_->key == key && current_->epoch == epoch) return current_->base;
    AS_ASSIGN_OR_RETURN(Rows r, Exec({"SELECT base_session, base_epoch, base_seq FROM epochs "
                                      "WHERE session=$1 AND epoch=$2",
                                      {key, I64(epoch.value())}}));
    if (r.size() == 0)
      return Error(ErrorCode::kNotFound, "no epoch " + std::to_string(epoch.value()));
    return BaseOf(r, 0, 0);
  }

  Result<Seq> TailOf(std::int64_t key, Epoch epoch, Seq base_seq) {
    if (current_ && current_->key == key && current_->epoch == epoch) return current_->tail;
    AS_ASSIGN_OR_RETURN(Rows r, Exec({"SELECT last_seq FROM events WHERE session=$1 AND "
                                      "epoch=$2 ORDER BY first_seq DESC LIMIT 1",
                                      {key, I64(epoch.value())}}));
    if (r.size() == 0) return base_seq;
    return Seq(r.Int(0, 0));
  }

  // The rows of (key, epoch) with seqs in [lo, hi], ascending, at most `limit` (the lowest ones
  // reading forward, the highest ones reading backward). Each batch holds at least one row of the
  // range, so limit + 1 batches (the first may start below lo) always suffice. Only the batches
  // from the one holding `lo` are considered (found through the index, as the SQLite reader
  // does), so a read costs the batches of its range whatever the history before it.
  Status RowsOf(std::int64_t key, Epoch epoch, Seq lo, Seq hi, bool backward, std::size_t limit,
                std::vector<store_internal::StoredRow>& out) {
    const auto batches = static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000) + 1);
    constexpr const char* kFrom =
        "SELECT first_seq, last_seq, format, data, writer FROM events WHERE session=$1 AND "
        "epoch=$2 AND first_seq >= COALESCE((SELECT max(first_seq) FROM events WHERE session=$1 "
        "AND epoch=$2 AND first_seq <= $3), 0) AND last_seq >= $3 AND first_seq <= $4 ";
    // In binary: the batches as their bytes, not hex text twice their size.
    Result<Rows> found = Exec({std::string(kFrom) + (backward ? "ORDER BY first_seq DESC LIMIT $5"
                                                              : "ORDER BY first_seq LIMIT $5"),
                               {key, I64(epoch.value()), I64(lo.value()), I64(hi.value()), batches},
                               /*reuse=*/false,
                               /*binary=*/true});
    AS_ASSIGN_OR_RETURN(Rows r, std::move(found));
    std::vector<std::vector<store_internal::StoredRow>> chunks;  // backward: newest batch first
    std::size_t collected = 0;
    for (int i = 0; i < r.size() && collected < limit; ++i) {
      const Seq first(r.Int(i, 0)), last(r.Int(i, 1));
      const auto format =
          static_cast<std::uint32_t>(std::clamp<std::int64_t>(r.Int(i, 2), 0, 0xffffffffLL));
      std::vector<store_internal::StoredRow> rows;
      AS_RETURN_IF_ERROR(
          store_internal::DecodeBatch(r.Bytes(i, 3), format, first, last, lo, hi, rows));
      const auto writer = static_cast<std::uint64_t>(r.Int(i, 4));
      for (auto& row : rows) row.record.owner_generation = writer;
      collected += rows.size();
      chunks.push_back(std::move(rows));
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
  // The current epoch of the session Session read last, when it exists.
  struct Current {
    std::int64_t key;
    Epoch epoch;
    std::optional<HistoryBase> base;
    Seq tail;
  };

  Conn& conn_;
  bool begin_pending_ = true;  // the snapshot starts with its first read
  bool open_ = false;
  std::optional<Current> current_;
};

}  // namespace agentstream::pg
