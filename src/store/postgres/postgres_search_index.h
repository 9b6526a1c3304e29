// Internal to the store module: the SQL of the full-text search index (search_index.h) on
// PostgreSQL, a tsvector column under a GIN index. Reads run on a reader connection; writes
// inside the writer's batch transaction, where a state row that moved on is reported as
// kConflict without a failing statement (which would roll back the appends sharing the batch).
#pragma once

#include <optional>
#include <vector>

#include "pg/pg.h"
#include "store/postgres/txn.h"
#include "store/search_index.h"

namespace agentstream::pg {

Result<std::optional<Cursor>> LoadSearchState(Conn& conn, const SessionId& session);
// Moves the state from `expected` to `next` (kConflict when it is not `expected`) and adds
// `documents`. Every value must be storable text (the caller checks).
Status StoreDocuments(Txn& t, const SessionId& session, const std::optional<Cursor>& expected,
                      Cursor next, const std::vector<SearchDocument>& documents);
Result<std::vector<SearchHit>> FindDocuments(Conn& conn, const SearchQuery& query);

}  // namespace agentstream::pg
