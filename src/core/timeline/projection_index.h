// ProjectionIndex: where every projected item of one epoch lives in the log, without the items'
// content. Kept incrementally by the daemon for each loaded session (one Add per committed event,
// O(1) amortized plus O(log n) for the end-position tree) and used by the pager (pager.h) to read
// exactly the source events of the items of one page, so a page costs time proportional to the
// page, not to the history, even when a collapsed tool call ends far beyond the page.
//
// Memory: one span per item (kind, key, positions, source ranges), not per event; merged items
// (assistant, reasoning, tool call, permission, plan, sub-agent) are found by key in a hash map.
// Not thread-safe: owned by the session's owner. No I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/event.h"
#include "core/timeline/item.h"

namespace agentstream::timeline {

struct ItemSpan {
  ItemKind kind = ItemKind::kNotice;
  std::string key;
  Seq seq_start;
  Seq seq_end;
  std::vector<SeqRange> ranges;  // the item's source seqs, ascending
};

class ProjectionIndex {
 public:
  explicit ProjectionIndex(Epoch epoch = Epoch(1)) : epoch_(epoch) {}

  Epoch epoch() const { return epoch_; }
  // The last seq added (0 before any event): the tail the index covers.
  Seq tail() const { return tail_; }
  // Number of items. Items are numbered (ordinals) by their seq_start, from 0.
  std::size_t size() const { return spans_.size(); }
  const ItemSpan& span(std::size_t ordinal) const { return spans_[ordinal]; }

  // Adds the next event of the epoch. Events must come in increasing seq order; an event at or
  // below tail() is ignored. Returns the ordinal of the item the event created or updated, or
  // nullopt when the event is not projected (or ignored). `created` tells which.
  std::optional<std::size_t> Add(const Event& event, bool* created = nullptr);

  // The memory the index holds, in bytes (its spans, keys, ranges, key map and tree; allocator
  // overhead estimated), kept as events are added.
  std::size_t MemoryBytes() const;

  // The first ordinal whose seq_start > `seq` (size() when none).
  std::size_t FirstStartingAfter(Seq seq) const;

  // Ordinals below `ordinal_limit` whose seq_end > `seq`, ascending: the items that started at or
  // before `seq` and changed after it. Cost O((k + 1) log n) for k results.
  std::vector<std::size_t> EndingAfter(std::size_t ordinal_limit, Seq seq) const;

 private:
  // A max-tree over the items' seq_end, by ordinal.
  void TreeAppend(std::uint64_t value);
  void TreeSet(std::size_t ordinal, std::uint64_t value);
  void TreeCollect(std::size_t node, std::size_t lo, std::size_t hi, std::size_t limit,
                   std::uint64_t above, std::vector<std::size_t>& out) const;

  Epoch epoch_;
  Seq tail_;
  std::size_t heap_bytes_ = 0;  // of the spans' keys and ranges, and of by_key_'s entries
  std::vector<ItemSpan> spans_;
  std::unordered_map<std::string, std::size_t> by_key_;  // merged items only
  std::size_t tree_capacity_ = 0;                        // leaves, a power of two
  std::vector<std::uint64_t> tree_;                      // 1-based heap layout, 2 * capacity
};

}  // namespace agentstream::timeline
