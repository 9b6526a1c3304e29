// SearchIndexStore: the full-text index of the sessions' text, kept in the same database as the
// session log (docs/protocol.md, "Search"). One document per piece of text a session recorded (a
// user message, an assistant message, a tool call's input or output), found by the words it
// holds, plus one state row per session saying through which (epoch, seq) its documents are
// current. Derived from the log and never the source of truth: which events make which documents
// is decided in src/search/indexer.h (the search module, src/search/search.h, read it first); the
// store keeps and queries them.
//
// Thread-safe. Errors: kConflict (CommitDocuments' expected state is not the stored one),
// kInvalidArgument (a query with no word), kIoError / kUnavailable from the database.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"

namespace agentstream {

// Text stored per document, at most: a longer text is cut (at a character boundary) and its
// start is what is found.
inline constexpr std::size_t kMaxDocumentBytes = std::size_t{16} * 1024;
// Hits one query answers, at most.
inline constexpr std::size_t kMaxSearchHits = 200;

// The parts each store splits its documents into (SQLite: FTS5 tables; PostgreSQL: hash
// partitions), and so the most database connections one search reads them on at once
// (SqliteLogOptions / PostgresLogOptions::search_slices, `serve --search-slices`).
inline constexpr std::size_t kSearchPartitions = 4;

// Marks around each matched word in a hit's snippet (U+0002, U+0003: never in stored text).
inline constexpr char kMatchStart = '\x02';
inline constexpr char kMatchEnd = '\x03';

struct SearchDocument {
  Cursor cursor;       // the event the text starts at
  TimestampMs time{};  // that event's commit time: hits are ordered by it, newest first
  std::string kind;    // "user.message", "assistant.message", "tool.call", "tool.output"
  std::string text;    // at most kMaxDocumentBytes, no control characters but tab and newline
};

struct SearchHit {
  SessionId session;
  Cursor cursor;
  TimestampMs time{};
  std::string kind;
  std::string snippet;  // a few words around the matches, each match between the marks
  friend bool operator==(const SearchHit&, const SearchHit&) = default;
};

struct SearchQuery {
  std::vector<std::string> words;    // every one must occur (whole words, case-insensitive)
  std::optional<SessionId> session;  // only this session's documents
  std::size_t limit = 20;            // 1 to kMaxSearchHits
};

// One commit of a session's documents: adds `documents` and moves the session's state from
// `expected` (nullopt: none stored) to `next`.
struct DocumentCommit {
  SessionId session;
  std::optional<Cursor> expected;
  Cursor next;
  std::vector<SearchDocument> documents;
};

class SearchIndexStore {
 public:
  virtual ~SearchIndexStore() = default;

  // Through which event the session's documents are current; nullopt when none were stored.
  virtual Result<std::optional<Cursor>> LoadSearchState(const SessionId& session) = 0;
  // Makes `commit` in one transaction. kConflict, writing nothing, when the stored state is not
  // its `expected`.
  Status CommitDocuments(DocumentCommit commit);
  // Makes every commit of `commits` in one transaction, each as CommitDocuments would alone: one
  // outcome per commit, in their order, OK, kConflict or kInvalidArgument (a text the store
  // cannot keep), each writing nothing of its commit when not OK. An error of the database fails
  // them all: the returned status.
  virtual Result<std::vector<Status>> CommitDocumentsTogether(
      std::span<const DocumentCommit> commits) = 0;
  // The documents holding every word of `query`, newest first (by the time of the event each
  // begins at, whatever order they were added in; documents of one millisecond in the order they
  // were added), at most query.limit.
  virtual Result<std::vector<SearchHit>> Search(const SearchQuery& query) = 0;
};

inline Status SearchIndexStore::CommitDocuments(DocumentCommit commit) {
  AS_ASSIGN_OR_RETURN(std::vector<Status> outcomes,
                      CommitDocumentsTogether(std::span<const DocumentCommit>(&commit, 1)));
  return outcomes.at(0);
}

}  // namespace agentstream
