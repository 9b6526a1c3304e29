// The full-text search index's writer: which events of a session make which search documents
// (store/search_index.h), and the catch-up that adds a session's new events to the index.
//
// A document is a user message, an assistant message (its deltas joined, so a word split across
// two deltas is found), a tool call (its title, name and input), or a tool call's output (its
// chunks joined; the final output of the call's end as a document of its own). Reasoning, plans
// and lifecycle events make none. Each text is cut to kMaxDocumentBytes, with control characters
// but tab and newline made spaces.
//
// Documents are added in batches of events, each committed with the state it moves; an assistant
// message or tool output still streaming at a batch's end is left for the next batch (unless it
// began the batch), so a message is one document however its deltas fall. A fork's or a rewound
// epoch's documents are its own events' only: the prefix it continues is found under the session
// and epoch that recorded it.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "store/event_log.h"
#include "store/held_records.h"

namespace agentstream {

// The documents of `events` (ascending seqs of one epoch), and through which seq they are
// complete: every event up to it is in a document, none after it. `events` must be non-empty.
struct DocumentBatch {
  std::vector<SearchDocument> documents;
  Seq through;
};
DocumentBatch DocumentsOf(const std::vector<Event>& events);

// Events read and turned into documents per batch, at most.
inline constexpr std::size_t kSearchBatchEvents = 4096;

// Adds the events of `session`'s epoch `tail.epoch` through `tail.seq` to the search index, in
// batches of kSearchBatchEvents. A state of an older epoch (a rewind since) starts the new epoch
// after the prefix it continues. `cancel` (optional), once set, stops it between two batches with
// kUnavailable (what was committed stays). Events `held` (optional) holds are taken from it
// instead of the log. With `deferred` (optional), the batch that reaches the tail is not
// committed but added to it, for the caller to commit together with others
// (SearchIndexStore::CommitDocumentsTogether); the batches before it are committed as they go.
Status CatchUpSearch(SearchIndexStore& store, EventLog& log, const SessionId& session, Cursor tail,
                     const std::atomic<bool>* cancel = nullptr, const HeldRecords* held = nullptr,
                     std::vector<DocumentCommit>* deferred = nullptr);

}  // namespace agentstream
