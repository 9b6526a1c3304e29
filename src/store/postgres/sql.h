// Internal to the store module: what the PostgreSQL log's writer (txn.h), readers (snapshot.h)
// and stores share: rows of the session tables as values, the check of text before it is
// written, a read on a pooled connection.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sql_int.h"
#include "pg/pg.h"
#include "pg/setup.h"
#include "store/event_log.h"
#include "store/log_state.h"

namespace agentstream::pg {

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

// PostgreSQL text holds neither NUL bytes nor ill-formed UTF-8. Such a value is refused before it
// joins a batch, where its failing statement would roll back every request of the commit.
inline Status CheckText(std::initializer_list<std::pair<const char*, std::string_view>> fields) {
  for (const auto& [what, text] : fields) {
    if (!StorableText(text))
      return Error(ErrorCode::kInvalidArgument,
                   std::string(what) + " must be UTF-8 text without NUL bytes");
  }
  return Status::Ok();
}

// Runs `body` (Conn& -> Result<T>) on an idle connection of `readers` (opening one while fewer
// than its bound exist); a connection the body broke is dropped. A body that failed because its
// connection broke (an idle connection to a server that has gone since, as after a failover) runs
// once more on a new connection: reads have no effect to repeat.
template <class T, class Body>
Result<T> WithReader(ReaderPool& readers, Body body) {
  for (int attempt = 0;; ++attempt) {
    AS_ASSIGN_OR_RETURN(Conn conn, readers.Acquire());
    Result<T> out = body(conn);
    const bool broke = conn.Broken();
    readers.Release(std::move(conn));
    if (out.ok() || !broke || attempt == 1) return out;
  }
}

}  // namespace agentstream::pg
