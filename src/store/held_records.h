// HeldRecords: the records one session's recent commits added, as their commit notices carried
// them (CommitNotice::records), so that a reader that follows the commits (the background
// indexers, docs/timeline.md) takes them instead of reading them back from the log.
//
// It holds one run of consecutive seqs of one epoch: a run that does not continue it replaces it.
// Records are immutable once committed, so what it holds is what a read of those seqs returns.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "store/event_log.h"

namespace agentstream {

class HeldRecords {
 public:
  // Adds the records of one commit notice (ascending seqs of one session and epoch).
  void Add(std::shared_ptr<const std::vector<EventRecord>> records);
  // Adds what `later` holds, run by run.
  void Add(const HeldRecords& later);
  // The memory the held records take, about.
  std::size_t bytes() const { return bytes_; }
  // The cursor of the last record held; nullopt when none is.
  std::optional<Cursor> last() const;

  // The events of a forward read of `request` when the held records hold its first seq: at most
  // request.max_items and request.max_bytes of them (at least one), through the last held.
  // nullopt when the read must go to the log.
  std::optional<std::vector<EventRecord>> Take(const ReadRequest& request) const;

 private:
  std::vector<std::shared_ptr<const std::vector<EventRecord>>> runs_;  // consecutive seqs
  std::size_t bytes_ = 0;
};

// The events of a forward read of `request`: HeldRecords::Take's when `held` has them, else the
// log's.
Result<std::vector<EventRecord>> ReadForward(EventLog& log, const HeldRecords* held,
                                             const ReadRequest& request);

}  // namespace agentstream
