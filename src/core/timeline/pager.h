// Paging of the projected timeline (docs/timeline.md, "Paging"): `tail`, `before cursor`,
// `after cursor`, bounded by a projected-item target and a byte budget, with hasOlder / hasNewer,
// and an explicit bounded reset when the cursor names an epoch that is no longer current.
//
// Cost: the ProjectionIndex locates the page's items in O(log n); the pager then reads only their
// source events through RawEventReader (ranges closer than kPageReadGap are read together), so a
// page costs O(page source events + s log n), where s counts items that started at or before an
// `after` cursor and changed after it (items open across the cursor, normally a handful). It never
// reads the history between a collapsed item's start and its far-away end.
//
// Page semantics. Items are ordered by seq_start and always carry their state as of the index's
// tail (a tool call started in the page shows its final status even if it ended much later).
// - tail: the newest items. end_cursor = the tail, for live resume or `after`.
// - before C: the newest items with seq_start < C.seq. start_cursor = the oldest item's start, to
//   page further back.
// - after C: every item with a source event in (C.seq, E], E as large as the bounds allow;
//   end_cursor = E. Fetching `after end_cursor` until has_newer is false delivers every change
//   through the tail with no gap; an item that changes again later is delivered again (clients
//   replace by key / sourceSeqRanges).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/timeline/index_view.h"
#include "core/timeline/item.h"
#include "core/timeline/projection_index.h"

namespace agentstream::timeline {

// How the pager reads raw events. Implemented over EventLog in src/timeline/; over a vector
// in tests. Called only from the thread that builds the page.
class RawEventReader {
 public:
  virtual ~RawEventReader() = default;
  // Every event of `epoch` with seq in [first, last], ascending. Errors (kNotFound, kCorruption,
  // kIoError, ...) are returned by BuildPage unchanged.
  virtual Result<std::vector<Event>> ReadRange(Epoch epoch, Seq first, Seq last) = 0;
};

enum class PageDirection { kTail, kBefore, kAfter };

inline constexpr std::size_t kMaxPageItems = 500;  // also bounds a reset
inline constexpr std::size_t kPageReadGap = 32;    // read ranges this close together at once

struct PageRequest {
  PageDirection direction = PageDirection::kTail;
  std::optional<Cursor> cursor;  // required for kBefore and kAfter
  std::size_t max_items = 50;    // clamped to [1, kMaxPageItems]
  // Stops before the item that would take the page's JSON over this many bytes; a page holds at
  // least one item when one is available, so paging always progresses.
  std::size_t max_bytes = std::size_t{256} * 1024;
};

struct Page {
  Epoch epoch;
  Seq tail;                          // the index's tail when the page was built
  std::vector<ProjectedItem> items;  // ascending seq_start
  bool has_older = false;
  bool has_newer = false;
  Cursor start_cursor;  // pass to `before` for older items
  Cursor end_cursor;    // pass to `after` for newer changes
  // The request's cursor named another epoch (history was rewound): this is a tail page of the
  // current epoch; the client must drop what it holds of the old epoch.
  bool reset = false;
  std::size_t bytes = 0;  // JSON size of the items
};

// Builds one page from `index` and the raw events `reader` returns. Errors: kInvalidArgument for
// a missing cursor or a cursor past the tail; kInternal when the reader's events disagree with
// the index; the reader's errors unchanged.
Result<Page> BuildPage(IndexView& index, RawEventReader& reader, const PageRequest& request);
// The same over an in-memory index.
Result<Page> BuildPage(const ProjectionIndex& index, RawEventReader& reader,
                       const PageRequest& request);

}  // namespace agentstream::timeline
