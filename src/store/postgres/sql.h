// Internal to the store module: what the PostgreSQL log's writer (txn.h) and readers
// (snapshot.h) share: rows of the session tables as values, consumer positions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/event_log.h"
#include "store/log_state.h"
#include "pg/pg.h"
#include "pg/setup.h"

namespace agentstream::pg {

inline std::int64_t I64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

inline std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// The meta of a sessions row: provider, cwd, title, created_ms, persistence and status from
// column `first` on, and the usage totals in column `usage`.
inline SessionMeta MetaOf(const Rows& r, int row, int first, int usage) {
  SessionMeta meta{r.Text(row, first),    r.Text(row, first + 1), r.Text(row, first + 2),
                   r.Int(row, first + 3), r.Text(row, first + 4), r.Text(row, first + 5)};
  if (!r.IsNull(row, usage)) meta.usage = store_internal::DecodeUsageTotals(r.Text(row, usage));
  return meta;
}

inline std::optional<HistoryBase> BaseOf(const Rows& r, int row, int first) {
  if (r.IsNull(row, first)) return std::nullopt;
  return HistoryBase{SessionId(r.Text(row, first)), Epoch(r.Int(row, first + 1)),
                     Seq(r.Int(row, first + 2))};
}

inline Result<std::optional<ConsumerPosition>> LoadPosition(Conn& conn, const ConsumerId& consumer,
                                                            const SessionId& session) {
  AS_ASSIGN_OR_RETURN(
      Rows r, conn.Exec("SELECT epoch, seq, lease_owner, generation, lease_expires_ms, "
                        "adapter_state FROM consumer_positions WHERE consumer=$1 AND session=$2",
                        {consumer.str(), session.str()}));
  if (r.size() == 0) return std::optional<ConsumerPosition>();
  return std::optional<ConsumerPosition>(ConsumerPosition{
      consumer, session, Cursor{Epoch(r.Int(0, 0)), Seq(r.Int(0, 1))}, r.Text(0, 2),
      static_cast<std::uint64_t>(r.Int(0, 3)), r.Int(0, 4), r.Text(0, 5)});
}

}  // namespace agentstream::pg
