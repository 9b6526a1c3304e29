// IndexView: what the pager (pager.h) asks of a projection index: where the items of one epoch
// live in the log, by ordinal (items numbered by seq_start from 0). Two implementations: the
// in-memory ProjectionIndex (ProjectionIndexView below) and the durable index kept in the
// store (src/timeline/durable_index.h), whose every call may read the database and so
// returns a Result.
//
// A view answers for one snapshot: epoch(), tail() and size() are fixed when it is made, and
// every span it returns is clipped to tail() (source seqs after it are left out).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/timeline/projection_index.h"

namespace agentstream::timeline {

class IndexView {
 public:
  virtual ~IndexView() = default;
  virtual Epoch epoch() const = 0;
  virtual Seq tail() const = 0;
  virtual std::size_t size() const = 0;
  // The spans of ordinals [lo, hi), ascending; hi is clamped to size().
  virtual Result<std::vector<ItemSpan>> Spans(std::size_t lo, std::size_t hi) = 0;
  // The first ordinal whose seq_start > `seq` (size() when none).
  virtual Result<std::size_t> FirstStartingAfter(Seq seq) = 0;
  // The items with ordinal < `limit` and seq_end > `seq`, ascending by ordinal, with their
  // ordinals: the items that started at or before `seq` and changed after it.
  using Numbered = std::pair<std::size_t, ItemSpan>;
  virtual Result<std::vector<Numbered>> EndingAfter(std::size_t limit, Seq seq) = 0;
};

// A view of an in-memory ProjectionIndex, which must outlive it and not change meanwhile.
class ProjectionIndexView final : public IndexView {
 public:
  explicit ProjectionIndexView(const ProjectionIndex& index) : index_(index) {}
  Epoch epoch() const override { return index_.epoch(); }
  Seq tail() const override { return index_.tail(); }
  std::size_t size() const override { return index_.size(); }
  Result<std::vector<ItemSpan>> Spans(std::size_t lo, std::size_t hi) override;
  Result<std::size_t> FirstStartingAfter(Seq seq) override {
    return index_.FirstStartingAfter(seq);
  }
  Result<std::vector<Numbered>> EndingAfter(std::size_t limit, Seq seq) override;

 private:
  const ProjectionIndex& index_;
};

}  // namespace agentstream::timeline
