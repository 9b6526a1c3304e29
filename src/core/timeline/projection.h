// Projection: the whole projected timeline of one epoch, kept incrementally. Each Apply() costs
// O(1) amortized (plus the size of appended text): new events update the projection without
// recomputing history. Used for the live path (which item changed), by the invariant checker,
// and as the reference the pager's pages are tested against. Not thread-safe. No I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "core/event.h"
#include "core/timeline/item.h"
#include "core/timeline/projection_index.h"

namespace agentstream::timeline {

class Projection {
 public:
  explicit Projection(Epoch epoch = Epoch(1)) : index_(epoch) {}

  // Applies the next event (increasing seq; others are ignored). Returns the ordinal of the item
  // it created or updated, or nullopt when the event is not projected.
  std::optional<std::size_t> Apply(const Event& event);

  const std::vector<ProjectedItem>& items() const { return items_; }
  const ProjectionIndex& index() const { return index_; }

 private:
  ProjectionIndex index_;
  std::vector<ProjectedItem> items_;  // by ordinal
};

// The projection of `events` (one epoch, oldest first).
Projection Project(std::span<const Event> events);

}  // namespace agentstream::timeline
