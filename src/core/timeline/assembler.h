// The timeline assembler: folds one log event into the projected item its key names (item.h).
// Keyed by message / call / request id, independent of turn ownership, and tolerant of any order
// of start / delta / stop: an item is created at the first event of its key (a placeholder when
// that is a delta or an end) and later events reconcile into it, so no assistant message can be
// dropped by routing ambiguity (invariant e of docs/timeline.md). Pure.
#pragma once

#include "core/event.h"
#include "core/timeline/item.h"

namespace agentstream::timeline {

// A new item for the first event of `key`, with its positions set to `event`.
ProjectedItem NewItem(const ItemKey& key, const Event& event);

// Folds `event` (whose ItemKeyOf equals the item's key) into `item`: updates the body, seq_end,
// source_seq_ranges and collapsed. Events must be folded in seq order.
void FoldIntoItem(ProjectedItem& item, const Event& event);

}  // namespace agentstream::timeline
