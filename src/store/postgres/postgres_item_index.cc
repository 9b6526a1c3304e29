#include "store/postgres/postgres_item_index.h"

#include <algorithm>

#include "store/postgres/sql.h"

namespace agentstream::pg {

namespace {

constexpr const char* kRowColumns = "ordinal, kind, key, merges, seq_start, seq_end, ranges";

std::vector<ItemRow> RowsOf(const Rows& r) {
  std::vector<ItemRow> out;
  out.reserve(static_cast<std::size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(ItemRow{static_cast<std::uint64_t>(r.Int(i, 0)), r.Int(i, 1), r.Text(i, 2),
                          r.Int(i, 3) != 0, Seq(static_cast<std::uint64_t>(r.Int(i, 4))),
                          Seq(static_cast<std::uint64_t>(r.Int(i, 5))), r.Text(i, 6)});
  }
  return out;
}

std::string Select(const std::string& where) {
  return std::string("SELECT ") + kRowColumns +
         " FROM timeline_items WHERE session=$1 AND epoch=$2 " + where;
}

}  // namespace

Result<std::optional<ItemIndexState>> LoadItemState(Conn& conn, const SessionId& session,
                                                    Epoch epoch) {
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT format, watermark, items, base_items FROM "
                                        "timeline_index WHERE session=$1 AND epoch=$2",
                                        {session.str(), I64(epoch.value())}));
  if (r.size() == 0) return std::optional<ItemIndexState>();
  return std::optional<ItemIndexState>(ItemIndexState{
      r.Int(0, 0), Seq(static_cast<std::uint64_t>(r.Int(0, 1))),
      static_cast<std::uint64_t>(r.Int(0, 2)), static_cast<std::uint64_t>(r.Int(0, 3))});
}

Result<std::optional<HistoryBase>> LoadEpochBase(Conn& conn, const SessionId& session,
                                                 Epoch epoch) {
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT e.base_session, e.base_epoch, e.base_seq FROM "
                                        "sessions s JOIN epochs e ON e.session = s.key "
                                        "WHERE s.id=$1 AND e.epoch=$2",
                                        {session.str(), I64(epoch.value())}));
  if (r.size() == 0)
    return Error(ErrorCode::kNotFound,
                 "no epoch " + std::to_string(epoch.value()) + " of session " + session.str());
  return BaseOf(r, 0, 0);
}

Result<std::vector<ItemRow>> LoadItemsBetween(Conn& conn, const SessionId& session, Epoch epoch,
                                              std::uint64_t lo, std::uint64_t hi) {
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(Select("AND ordinal >= $3 AND ordinal < $4 ORDER BY "
                                               "ordinal"),
                                        {session.str(), I64(epoch.value()), I64(lo), I64(hi)}));
  return RowsOf(r);
}

Result<std::vector<ItemRow>> LoadItemsByKeys(Conn& conn, const SessionId& session, Epoch epoch,
                                             const std::vector<std::string>& keys) {
  std::vector<std::string> storable;  // a key PostgreSQL cannot hold was never stored
  for (const std::string& key : keys)
    if (StorableText(key)) storable.push_back(key);
  if (storable.empty()) return std::vector<ItemRow>();
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(Select("AND merges=1 AND key = ANY($3::text[])"),
                                        {session.str(), I64(epoch.value()), TextArray(storable)}));
  return RowsOf(r);
}

Result<std::optional<std::uint64_t>> LoadFirstOrdinalStartingAfter(Conn& conn,
                                                                   const SessionId& session,
                                                                   Epoch epoch, Seq seq) {
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT ordinal FROM timeline_items WHERE session=$1 "
                                        "AND epoch=$2 AND seq_start > $3 ORDER BY seq_start "
                                        "LIMIT 1",
                                        {session.str(), I64(epoch.value()), I64(seq.value())}));
  if (r.size() == 0) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(r.Int(0, 0)));
}

Result<std::vector<ItemRow>> LoadItemsOpenAcross(Conn& conn, const SessionId& session, Epoch epoch,
                                                 Seq seq) {
  const std::int64_t at = I64(seq.value());
  const std::int64_t near = at - I64(kLongItemSpan);
  // Short rows started at most kLongItemSpan before `seq`; long rows through their own index.
  AS_ASSIGN_OR_RETURN(
      Rows r,
      conn.Exec(Select("AND seq_start <= $3 AND seq_start >= $4 AND seq_end > $3 UNION ALL " +
                       Select(std::string("AND ") + kLongItemCondition +
                              " AND seq_end > $3 AND seq_start < $4") +
                       " ORDER BY 1"),
                {session.str(), I64(epoch.value()), at, near}));
  return RowsOf(r);
}

Status StoreItems(Txn& t, const SessionId& session, Epoch epoch,
                  const std::optional<ItemIndexState>& expected, const ItemIndexState& next,
                  const std::vector<ItemRow>& rows) {
  const std::vector<Param> state = {session.str(),   I64(epoch.value()),
                                    next.format,     I64(next.watermark.value()),
                                    I64(next.items), I64(next.base_items)};
  Rows moved;
  if (!expected) {
    AS_ASSIGN_OR_RETURN(moved, t.Exec("INSERT INTO timeline_index(session, epoch, format, "
                                      "watermark, items, base_items) VALUES($1,$2,$3,$4,$5,$6) "
                                      "ON CONFLICT DO NOTHING",
                                      state));
  } else {
    std::vector<Param> params = state;
    params.insert(params.end(), {expected->format, I64(expected->watermark.value()),
                                 I64(expected->items), I64(expected->base_items)});
    AS_ASSIGN_OR_RETURN(moved, t.Exec("UPDATE timeline_index SET format=$3, watermark=$4, "
                                      "items=$5, base_items=$6 WHERE session=$1 AND epoch=$2 "
                                      "AND format=$7 AND watermark=$8 AND items=$9 AND "
                                      "base_items=$10",
                                      params));
  }
  if (moved.Affected() == 0)
    return Error(ErrorCode::kConflict,
                 "the timeline index of " + session.str() + " moved on meanwhile");
  if (rows.empty()) return Status::Ok();
  std::vector<std::int64_t> ordinals, kinds, merges, starts, ends;
  std::vector<std::string> keys, ranges;
  for (const ItemRow& row : rows) {
    ordinals.push_back(I64(row.ordinal));
    kinds.push_back(row.kind);
    keys.push_back(row.key);
    merges.push_back(row.merges ? 1 : 0);
    starts.push_back(I64(row.seq_start.value()));
    ends.push_back(I64(row.seq_end.value()));
    ranges.push_back(row.ranges);
  }
  return t
      .Exec(
          "INSERT INTO timeline_items(session, epoch, ordinal, kind, key, merges, seq_start, "
          "seq_end, ranges) SELECT $1, $2, * FROM unnest($3::bigint[], $4::bigint[], $5::text[], "
          "$6::bigint[], $7::bigint[], $8::bigint[], $9::text[]) ON CONFLICT (session, epoch, "
          "ordinal) DO UPDATE SET kind=excluded.kind, key=excluded.key, merges=excluded.merges, "
          "seq_start=excluded.seq_start, seq_end=excluded.seq_end, ranges=excluded.ranges",
          {session.str(), I64(epoch.value()), IntArray(ordinals), IntArray(kinds), TextArray(keys),
           IntArray(merges), IntArray(starts), IntArray(ends), TextArray(ranges)})
      .status();
}

Status DeleteItems(Txn& t, const SessionId& session, Epoch epoch) {
  for (const char* sql : {"DELETE FROM timeline_items WHERE session=$1 AND epoch=$2",
                          "DELETE FROM timeline_index WHERE session=$1 AND epoch=$2"}) {
    AS_RETURN_IF_ERROR(t.Exec(sql, {session.str(), I64(epoch.value())}).status());
  }
  return Status::Ok();
}

}  // namespace agentstream::pg
