// Internal to the store module: the SQL of the full-text search index (search_index.h) on SQLite,
// an FTS5 table. Reads run on a reader connection inside its read transaction; writes on the
// writer's connection inside the batch transaction.
#pragma once

#include <optional>
#include <vector>

#include "sqlite/db.h"
#include "store/search_index.h"

namespace agentstream::sqlite {

Result<std::optional<Cursor>> LoadSearchState(Db& db, const SessionId& session);
// Stores `next` and adds `documents` (no check of the stored state: the caller's).
Status StoreDocuments(Db& db, const SessionId& session, Cursor next,
                      const std::vector<SearchDocument>& documents);
Result<std::vector<SearchHit>> FindDocuments(Db& db, const SearchQuery& query);

}  // namespace agentstream::sqlite
