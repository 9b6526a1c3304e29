#include "store/copy/copy_sql.h"

namespace agentstream::store_copy {

namespace {

std::string InsertHead(const CopyConn& conn, const std::string& table,
                       const std::vector<Column>& columns) {
  std::string names;
  std::string params;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) {
      names += ", ";
      params += ", ";
    }
    names += columns[i].name;
    params += conn.Param(static_cast<int>(i + 1), columns[i].kind);
  }
  return "INSERT INTO " + table + "(" + names + ") VALUES(" + params + ")";
}

}  // namespace

std::string SelectList(const CopyConn& conn, const std::vector<Column>& columns) {
  std::string out;
  for (const Column& c : columns) {
    if (!out.empty()) out += ", ";
    out += conn.Select(c.name, c.kind);
  }
  return out;
}

std::vector<ColumnKind> Kinds(const std::vector<Column>& columns) {
  std::vector<ColumnKind> out;
  out.reserve(columns.size());
  for (const Column& c : columns) out.push_back(c.kind);
  return out;
}

Status Upsert(CopyConn& conn, const std::string& table, const std::vector<Column>& columns,
              std::size_t key_columns, const Row& row) {
  std::string keys;
  std::string sets;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string name = columns[i].name;
    std::string& list = i < key_columns ? keys : sets;
    if (!list.empty()) list += ", ";
    list += name;
    if (i >= key_columns) list.append(" = excluded.").append(name);
  }
  const std::string action = sets.empty() ? "DO NOTHING" : "DO UPDATE SET " + sets;
  return conn.Exec(InsertHead(conn, table, columns) + " ON CONFLICT(" + keys + ") " + action, row,
                   Kinds(columns));
}

Status InsertIgnore(CopyConn& conn, const std::string& table, const std::vector<Column>& columns,
                    const Row& row) {
  return conn.Exec(InsertHead(conn, table, columns) + " ON CONFLICT DO NOTHING", row,
                   Kinds(columns));
}

}  // namespace agentstream::store_copy
