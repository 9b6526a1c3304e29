// Internal to `store copy` (store_copy.h): statements over a list of columns, written once for
// both backends through CopyConn's Select and Param.
#pragma once

#include <string>
#include <vector>

#include "store/copy/copy_conn.h"

namespace agentstream::store_copy {

// "a, b, c" as `conn` reads the columns.
std::string SelectList(const CopyConn& conn, const std::vector<Column>& columns);
std::vector<ColumnKind> Kinds(const std::vector<Column>& columns);

// Inserts `row` (the values of `columns`) into `table`; when its first `key_columns` columns
// match a stored row, that row's other columns take the new values.
Status Upsert(CopyConn& conn, const std::string& table, const std::vector<Column>& columns,
              std::size_t key_columns, const Row& row);
// Inserts `row` unless a row with the same primary key (or unique key) is stored.
Status InsertIgnore(CopyConn& conn, const std::string& table, const std::vector<Column>& columns,
                    const Row& row);

}  // namespace agentstream::store_copy
