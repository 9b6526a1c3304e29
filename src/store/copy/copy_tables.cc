#include "store/copy/copy_tables.h"

#include <string>
#include <vector>

#include "store/copy/copy_sql.h"
#include "store/copy/store_copy.h"

namespace agentstream::store_copy {

namespace {

using K = ColumnKind;

struct Table {
  const char* name;
  std::size_t key_columns;  // the first ones
  std::vector<Column> columns;
};

// The daemon registry is not copied (daemons register when they start), nor are the timeline
// and search indexes (rebuilt from the events; store_copy.h).
const std::vector<Table>& SmallTables() {
  static const std::vector<Table> kTables = {
      {"consumers", 1, {{"id", K::kText}, {"definition", K::kText}}},
      {"consumer_positions",
       2,
       {{"consumer", K::kText},
        {"session", K::kText},
        {"epoch", K::kInt},
        {"seq", K::kInt},
        {"lease_owner", K::kText},
        {"generation", K::kInt},
        {"lease_expires_ms", K::kInt},
        {"adapter_state", K::kText}}},
      {"pairings",
       1,
       {{"code_hash", K::kBlob},
        {"name", K::kText},
        {"created_ms", K::kInt},
        {"expires_ms", K::kInt}}},
      {"devices",
       1,
       {{"id", K::kText},
        {"name", K::kText},
        {"token_hash", K::kBlob},
        {"created_ms", K::kInt},
        {"last_seen_ms", K::kInt},
        {"user_agent", K::kText},
        {"revoked_ms", K::kInt},
        {"settings", K::kText}}},
      {"presence",
       1,
       {{"client", K::kText},
        {"device_id", K::kText},
        {"visible", K::kBool},
        {"focused_agent", K::kText},
        {"last_activity_ms", K::kInt},
        {"expires_ms", K::kInt}}},
      {"schedules",
       1,
       {{"id", K::kText},
        {"definition", K::kText},
        {"paused", K::kBool},
        {"created_ms", K::kInt},
        {"updated_ms", K::kInt},
        {"last_tick_ms", K::kInt},
        {"pending_tick_ms", K::kInt},
        {"lease_owner", K::kText},
        {"lease_expires_ms", K::kInt}}},
      {"schedule_firings",
       2,
       {{"schedule_id", K::kText},
        {"tick_ms", K::kInt},
        {"first_tick_ms", K::kInt},
        {"ticks", K::kInt},
        {"recorded_ms", K::kInt},
        {"outcome", K::kText},
        {"agent", K::kText},
        {"client_message_id", K::kText},
        {"turn_id", K::kText},
        {"detail", K::kText}}},
      {"secrets", 1, {{"name", K::kText}, {"value", K::kText}}},
  };
  return kTables;
}

std::string KeyList(const Table& t) {
  std::string out;
  for (std::size_t i = 0; i < t.key_columns; ++i) {
    if (i > 0) out += ", ";
    out += t.columns[i].name;
  }
  return out;
}

Result<std::int64_t> CountRows(CopyConn& c, const Table& t) {
  AS_ASSIGN_OR_RETURN(auto rows,
                      c.Query(std::string("SELECT count(*) FROM ") + t.name, {}, {K::kInt}, {}));
  return rows[0][0].integer;
}

Result<std::int64_t> CopyTable(CopyConn& from, CopyConn& to, const Table& t) {
  const std::string sql = "SELECT " + SelectList(from, t.columns) + " FROM " + t.name +
                          " ORDER BY " + KeyList(t) + " LIMIT $1 OFFSET $2";
  const auto page = static_cast<std::int64_t>(kCopyTablePage);
  std::int64_t copied = 0;
  while (true) {
    AS_ASSIGN_OR_RETURN(auto rows, from.Query(sql, {Value::Int(page), Value::Int(copied)},
                                              Kinds(t.columns), {K::kInt, K::kInt}));
    if (rows.empty()) return copied;
    AS_RETURN_IF_ERROR(to.Begin());
    Status s = Status::Ok();
    for (const Row& r : rows) {
      s = Upsert(to, t.name, t.columns, t.key_columns, r);
      if (!s.ok()) break;
    }
    if (s.ok()) s = to.Commit();
    if (!s.ok()) {
      to.Rollback();
      return s;
    }
    copied += static_cast<std::int64_t>(rows.size());
    if (static_cast<std::int64_t>(rows.size()) < page) return copied;
  }
}

}  // namespace

Result<TablesReport> CopyTables(CopyConn& from, CopyConn& to) {
  TablesReport report;
  for (const Table& t : SmallTables()) {
    AS_ASSIGN_OR_RETURN(bool in_source, from.HasTable(t.name));
    if (!in_source) continue;
    AS_ASSIGN_OR_RETURN(bool in_destination, to.HasTable(t.name));
    if (!in_destination) {
      AS_ASSIGN_OR_RETURN(std::int64_t left, CountRows(from, t));
      report.secrets_left += left;  // only `secrets` is missing from a current store
      continue;
    }
    AS_ASSIGN_OR_RETURN(std::int64_t n, CopyTable(from, to, t));
    report.rows += n;
  }
  return report;
}

}  // namespace agentstream::store_copy
