// Internal to the store module: the SQL of the full-text search index (search_index.h) on
// PostgreSQL, a tsvector column under a GIN index, the table hash-partitioned kSearchPartitions
// ways (search_slices.h). Reads run on a reader connection; writes
// inside the writer's batch transaction, where a state row that moved on is reported as
// kConflict without a failing statement (which would roll back the appends sharing the batch).
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "pg/pg.h"
#include "pg/setup.h"
#include "store/postgres/txn.h"
#include "store/search_index.h"
#include "store/search_slices.h"

namespace agentstream::pg {

Result<std::optional<Cursor>> LoadSearchState(Conn& conn, const SessionId& session);
// Moves the state from `expected` to `next` (kConflict when it is not `expected`) and adds
// `documents`. Every value must be storable text (the caller checks).
Status StoreDocuments(Txn& t, const SessionId& session, const std::optional<Cursor>& expected,
                      Cursor next, const std::vector<SearchDocument>& documents);
// The newest query.limit hits of the partitions `parts` of search_documents (search_slices.h),
// keyed by (at, id), in the read-only REPEATABLE READ transaction open on `conn`.
Result<std::vector<store_internal::RankedHit>> FindDocuments(Conn& conn, const SearchQuery& query,
                                                             const std::vector<std::size_t>& parts);

// Searches on a log's reader connections: one connection per slice, all in one snapshot (the
// first connection's, exported to the others), each slice on a thread of the runner's, so that
// the hits are those one connection would find. Thread-safe. A search takes its connections
// while no other search is taking its own, so that searches waiting for their second connection
// never hold the whole pool between them; the pool must allow at least `slices` connections.
class SlicedSearch {
 public:
  // `readers` must outlive this object.
  SlicedSearch(ReaderPool& readers, std::size_t slices);
  // kUnavailable when a connection cannot be opened or a statement fails.
  Result<std::vector<SearchHit>> Run(const SearchQuery& query);

 private:
  // Runs the slices on `taken` (one connection each) in one snapshot.
  Result<std::vector<SearchHit>> InSnapshot(std::vector<Conn>& taken, const SearchQuery& query);

  ReaderPool& readers_;
  std::mutex taking_;  // held while a search takes its connections
  store_internal::SliceRunner runner_;
};

}  // namespace agentstream::pg
