// Internal to the store module: the SQL of the full-text search index (search_index.h; its indexer
// and queries are src/search/'s, search/search.h says why this stays here) on PostgreSQL, a
// tsvector column under a GIN index, the table hash-partitioned kSearchPartitions ways
// (search_slices.h). Reads run on a reader connection; writes inside the writer's batch
// transaction, where a state row that moved on is reported as kConflict without a failing
// statement (which would roll back the appends sharing the batch).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "log/log.h"
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

// Each part's GIN index keeps the entries of new documents in a pending list that every search
// reads through, row by row (up to gin_pending_list_limit, 4 MB by default, per part), until an
// insert that fills the list moves it into the index, inside the writer's transaction. The
// flusher moves the lists into the indexes itself, on a reader connection, within `delay` of
// documents being stored: searches read short lists, and appends do not wait for a flush. A
// failure (the daemon's role does not own the tables, say) costs speed only: it is logged once
// per distinct error and tried again at the next store.
class PendingListFlusher {
 public:
  // `readers` must outlive this object.
  PendingListFlusher(ReaderPool& readers, std::chrono::milliseconds delay);
  ~PendingListFlusher();
  PendingListFlusher(const PendingListFlusher&) = delete;
  PendingListFlusher& operator=(const PendingListFlusher&) = delete;

  // Documents were committed. Thread-safe; does not wait.
  void Stored();

 private:
  void Run();

  ReaderPool& readers_;
  const std::chrono::milliseconds delay_;
  std::mutex mu_;  // guards stored_, stopping_
  std::condition_variable wake_;
  bool stored_ = false;
  bool stopping_ = false;
  log::RepeatedFailure failures_{"store.search_flush_failed"};  // the flusher thread's
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace agentstream::pg
