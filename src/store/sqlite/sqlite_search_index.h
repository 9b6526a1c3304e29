// Internal to the store module: the SQL of the full-text search index (search_index.h; its indexer
// and queries are src/search/'s, search/search.h says why this stays here) on SQLite,
// kSearchPartitions FTS5 tables (search_slices.h), each document in the one its time hashes to.
// Reads run on a reader connection inside its read transaction; writes on the writer's
// connection inside the batch transaction.
#pragma once

#include <optional>
#include <vector>

#include "sqlite/db.h"
#include "store/search_index.h"
#include "store/search_slices.h"

namespace agentstream::sqlite {

Result<std::optional<Cursor>> LoadSearchState(Db& db, const SessionId& session);
// Stores `next` and adds `documents` (no check of the stored state: the caller's).
Status StoreDocuments(Db& db, const SessionId& session, Cursor next,
                      const std::vector<SearchDocument>& documents);
// The newest query.limit hits of each table of `parts`, keyed by rowid (time order).
Result<std::vector<store_internal::RankedHit>> FindDocuments(Db& db, const SearchQuery& query,
                                                             const std::vector<std::size_t>& parts);

}  // namespace agentstream::sqlite
