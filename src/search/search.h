// Full-text search over the sessions' text: the search module. Read this first.
//
// What is indexed (indexer.h). User messages, assistant messages (their deltas joined), tool
// calls (title, name, input) and tool outputs, one document each, cut to kMaxDocumentBytes;
// reasoning, plans and lifecycle events are not. A fork's or rewound epoch's documents are its
// own events' only: the prefix it continues is found under the session that recorded it.
//
// When. The timeline's background indexer (src/timeline/timeline_service.h, one thread) follows
// every commit: about 200 ms after a session's commits land it brings the session's durable
// timeline index and then its search index up to the tail (IndexSessionText below); at start it
// does the same for every stored session. An assistant message or a tool output still streaming
// waits for its end (or for the batch it begins). A query naming a session first brings that
// session's index up to its tail. The index is derived from the log and never the source of
// truth: each session's state row says through which (epoch, seq) its documents are current,
// and an indexer that meets another one moves on from what the other stored.
//
// How a query runs. GET /v1/search?q=WORDS[&agent=ID&limit=N] and the WebSocket `search`
// message (docs/protocol.md, "Search") split what the person typed into words (query.h), then
// RunSearch below asks the log's SearchIndexStore (store/search_index.h) for limit + 1 hits,
// newest first, to tell whether the answer is truncated. The store keeps its documents in
// kSearchPartitions parts and reads them on several of its reader connections at once, each
// part answering its own newest hits, merged newest first (store/search_slices.h).
//
// Where each backend's SQL is. It stays in the store, beside the log that owns the connections
// it runs on:
//   - SQLite: src/store/sqlite/sqlite_search_index.cc (four FTS5 tables, the MATCH expression,
//     rowids in time order), wired into the log in sqlite_log_index.cc (reads on a reader
//     connection, writes on the writer thread inside its batch transaction); the tables are
//     created by sqlite_schema.cc (schema versions 6, 7 and 9).
//   - PostgreSQL: src/store/postgres/postgres_search_index.cc (a tsvector column under a GIN
//     index, four hash partitions, the plan chosen by how many documents match, one snapshot
//     shared by a search's connections, the GIN pending-list flusher), wired into the log in
//     postgres_log_index.cc; the tables are created by postgres_schema.cc (versions 5 and 7).
//   - The memory log keeps no index: search answers kUnavailable.
// Why there and not here: EventLog::search_index() hands the index out as part of the log, and
// the store's own tests hold it to the store's schema versions through the log; its writes run
// inside the writer's batch transaction (whose failure fails the batch and makes the log
// sticky) and its reads on the log's reader pool, both private to the store; and its tables are
// created and upgraded by the store's one versioned schema. This module depends on the store
// (`search --> store` in docs/architecture.md), never the other way round.
#pragma once

#include <atomic>
#include <vector>

#include "core/status.h"
#include "store/event_log.h"
#include "store/held_records.h"
#include "store/search_index.h"

namespace agentstream {

// The answer to one query.
struct SearchResult {
  std::vector<SearchHit> hits;
  bool truncated = false;  // more documents matched than the limit
};

// Adds `session`'s events through `tail` to `log`'s search index (indexer.h, CatchUpSearch);
// nothing on a log that keeps none. A failure is logged (`search.index_failed`) unless `cancel`
// (optional) is set, and the next call takes up from what was committed. Thread-safe; meant for
// the timeline's background indexer, which passes the records it `held` (optional) of the
// session's last commits, and may take the last commit `deferred` (optional; CatchUpSearch) to
// make with other sessions' (SearchIndexStore::CommitDocumentsTogether).
void IndexSessionText(EventLog& log, const SessionId& session, Cursor tail,
                      const std::atomic<bool>* cancel = nullptr, const HeldRecords* held = nullptr,
                      std::vector<DocumentCommit>* deferred = nullptr);

// The hits of `query` in `log`'s search index, newest first, at most query.limit (1 to
// kMaxSearchHits; kInvalidArgument otherwise). A query naming a session brings that session's
// index up to its tail first (kNotFound for an unknown session). kUnavailable on a log without a
// search index; the store's errors otherwise. Thread-safe.
Result<SearchResult> RunSearch(EventLog& log, const SearchQuery& query);

}  // namespace agentstream
