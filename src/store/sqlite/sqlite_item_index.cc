#include "store/sqlite/sqlite_item_index.h"

#include <algorithm>

#include "core/sql_int.h"

namespace agentstream::sqlite {

namespace {

constexpr const char* kRowColumns = "ordinal, kind, key, merges, seq_start, seq_end, ranges";

ItemRow RowAt(const Stmt& s) {
  return ItemRow{static_cast<std::uint64_t>(s.Int(0)),
                 s.Int(1),
                 s.Text(2),
                 s.Int(3) != 0,
                 Seq(static_cast<std::uint64_t>(s.Int(4))),
                 Seq(static_cast<std::uint64_t>(s.Int(5))),
                 s.Text(6)};
}

Result<std::vector<ItemRow>> AllRows(Stmt& s) {
  std::vector<ItemRow> out;
  while (true) {
    AS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(RowAt(s));
  }
}

std::string Select(const std::string& where) {
  return std::string("SELECT ") + kRowColumns +
         " FROM timeline_items WHERE session=? AND epoch=? " + where;
}

}  // namespace

Result<std::optional<ItemIndexState>> LoadItemState(Db& db, const SessionId& session, Epoch epoch) {
  AS_ASSIGN_OR_RETURN(auto s, db.Cached("SELECT format, watermark, items, base_items FROM "
                                        "timeline_index WHERE session=? AND epoch=?"));
  s->Bind(1, session.str()).Bind(2, I64(epoch.value()));
  AS_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return std::optional<ItemIndexState>();
  return std::optional<ItemIndexState>(
      ItemIndexState{s->Int(0), Seq(static_cast<std::uint64_t>(s->Int(1))),
                     static_cast<std::uint64_t>(s->Int(2)), static_cast<std::uint64_t>(s->Int(3))});
}

Result<std::optional<HistoryBase>> LoadEpochBase(Db& db, const SessionId& session, Epoch epoch) {
  AS_ASSIGN_OR_RETURN(auto s, db.Cached("SELECT e.base_session, e.base_epoch, e.base_seq FROM "
                                        "sessions s JOIN epochs e ON e.session = s.key "
                                        "WHERE s.id=? AND e.epoch=?"));
  s->Bind(1, session.str()).Bind(2, I64(epoch.value()));
  AS_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return Error(ErrorCode::kNotFound,
                 "no epoch " + std::to_string(epoch.value()) + " of session " + session.str());
  if (s->IsNull(0)) return std::optional<HistoryBase>();
  return std::optional<HistoryBase>(HistoryBase{SessionId(s->Text(0)),
                                                Epoch(static_cast<std::uint64_t>(s->Int(1))),
                                                Seq(static_cast<std::uint64_t>(s->Int(2)))});
}

Result<std::vector<ItemRow>> LoadItemsBetween(Db& db, const SessionId& session, Epoch epoch,
                                              std::uint64_t lo, std::uint64_t hi) {
  AS_ASSIGN_OR_RETURN(auto s,
                      db.Cached(Select("AND ordinal >= ? AND ordinal < ? ORDER BY ordinal")));
  s->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, I64(lo)).Bind(4, I64(hi));
  return AllRows(*s);
}

Result<std::vector<ItemRow>> LoadItemsByKeys(Db& db, const SessionId& session, Epoch epoch,
                                             const std::vector<std::string>& keys) {
  AS_ASSIGN_OR_RETURN(auto s, db.Cached(Select("AND merges=1 AND key=?")));
  std::vector<ItemRow> out;
  for (const std::string& key : keys) {
    s->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, key);
    AS_ASSIGN_OR_RETURN(bool row, s->Step());
    if (row) out.push_back(RowAt(*s));
    s->Reset();
  }
  return out;
}

Result<std::optional<std::uint64_t>> LoadFirstOrdinalStartingAfter(Db& db, const SessionId& session,
                                                                   Epoch epoch, Seq seq) {
  AS_ASSIGN_OR_RETURN(auto s, db.Cached("SELECT ordinal FROM timeline_items WHERE session=? AND "
                                        "epoch=? AND seq_start > ? ORDER BY seq_start LIMIT 1"));
  s->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, I64(seq.value()));
  AS_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(s->Int(0)));
}

Result<std::vector<ItemRow>> LoadItemsOpenAcross(Db& db, const SessionId& session, Epoch epoch,
                                                 Seq seq) {
  const std::int64_t at = I64(seq.value());
  const std::int64_t span = I64(kLongItemSpan);
  // Short rows started at most kLongItemSpan before `seq`; long rows through their own index.
  AS_ASSIGN_OR_RETURN(auto near,
                      db.Cached(Select("AND seq_start <= ? AND seq_start >= ? AND seq_end > ?")));
  near->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, at).Bind(4, at - span);
  near->Bind(5, at);
  AS_ASSIGN_OR_RETURN(std::vector<ItemRow> out, AllRows(*near));
  AS_ASSIGN_OR_RETURN(auto far, db.Cached(Select(std::string("AND ") + kLongItemCondition +
                                                 " AND seq_end > ? AND seq_start < ?")));
  far->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, at).Bind(4, at - span);
  AS_ASSIGN_OR_RETURN(std::vector<ItemRow> long_rows, AllRows(*far));
  out.insert(out.end(), std::make_move_iterator(long_rows.begin()),
             std::make_move_iterator(long_rows.end()));
  std::sort(out.begin(), out.end(),
            [](const ItemRow& a, const ItemRow& b) { return a.ordinal < b.ordinal; });
  return out;
}

Status StoreItems(Db& db, const SessionId& session, Epoch epoch, const ItemIndexState& next,
                  const std::vector<ItemRow>& rows) {
  AS_ASSIGN_OR_RETURN(auto put, db.Cached("INSERT OR REPLACE INTO timeline_items(session, epoch, "
                                          "ordinal, kind, key, merges, seq_start, seq_end, "
                                          "ranges) VALUES(?,?,?,?,?,?,?,?,?)"));
  for (const ItemRow& row : rows) {
    put->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, I64(row.ordinal));
    put->Bind(4, row.kind).Bind(5, row.key).Bind(6, row.merges ? 1 : 0);
    put->Bind(7, I64(row.seq_start.value())).Bind(8, I64(row.seq_end.value()));
    put->Bind(9, row.ranges);
    AS_RETURN_IF_ERROR(put->Exec());
  }
  AS_ASSIGN_OR_RETURN(auto state,
                      db.Cached("INSERT OR REPLACE INTO timeline_index(session, epoch, format, "
                                "watermark, items, base_items) VALUES(?,?,?,?,?,?)"));
  state->Bind(1, session.str()).Bind(2, I64(epoch.value())).Bind(3, next.format);
  state->Bind(4, I64(next.watermark.value())).Bind(5, I64(next.items));
  state->Bind(6, I64(next.base_items));
  return state->Exec();
}

Status DeleteItems(Db& db, const SessionId& session, Epoch epoch) {
  for (const char* sql : {"DELETE FROM timeline_items WHERE session=? AND epoch=?",
                          "DELETE FROM timeline_index WHERE session=? AND epoch=?"}) {
    AS_ASSIGN_OR_RETURN(auto s, db.Cached(sql));
    s->Bind(1, session.str()).Bind(2, I64(epoch.value()));
    AS_RETURN_IF_ERROR(s->Exec());
  }
  return Status::Ok();
}

}  // namespace agentstream::sqlite
