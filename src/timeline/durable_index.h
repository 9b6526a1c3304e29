// The timeline's durable projection index (docs/timeline.md, "The durable index"): the item rows
// of an ItemIndexStore (store/item_index.h) read as a timeline::IndexView, and the indexer that
// brings them up to a session's tail.
//
// An epoch's rows cover its events through the stored watermark. An epoch that continues a base
// prefix (a fork, a rewind) is read as its base's view clipped at the prefix's end plus its own
// rows, so a fork or rewind of a long session costs what any session costs: nothing is copied.
//
// Rows are checked on read (the format, the kind, the ranges against seq_start and seq_end): a
// row that fails is kCorruption, and the caller rebuilds the epoch's rows (DropItems) rather
// than serving from them.
//
// Thread safety: a DurableIndexView is used by one thread at a time; CatchUp may run on several
// threads and daemons at once for one epoch: each batch moves the state row only from the state
// it read (kConflict otherwise, and CatchUp starts the batch again from the new state).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/timeline/index_view.h"
#include "store/event_log.h"
#include "store/held_records.h"
#include "store/item_index.h"

namespace agentstream {

// The rows' encoding. Another stored format is dropped and rebuilt.
inline constexpr std::int64_t kItemIndexFormat = 2;
// Events read and indexed per committed batch: bounds the indexer's memory (a few MiB).
inline constexpr std::size_t kIndexBatchEvents = 4096;

// Ranges as text: "first-last" or "seq", ascending, comma-separated ("1-3,7,9-12").
std::string EncodeRanges(const std::vector<timeline::SeqRange>& ranges);
// kCorruption unless ascending, disjoint and non-adjacent.
Result<std::vector<timeline::SeqRange>> DecodeRanges(std::string_view text);

class DurableIndexView final : public timeline::IndexView {
 public:
  // The view of (session, epoch) as of its stored state, clipped at `clip` (absent: the
  // watermark). kNotFound when the epoch has no stored state (or one of another
  // format); kConflict when the watermark is below `clip`.
  static Result<std::unique_ptr<DurableIndexView>> Open(ItemIndexStore& store,
                                                        const SessionId& session, Epoch epoch,
                                                        std::optional<Seq> clip = std::nullopt);
  // The same, as of `state`, the stored state the caller has just read or committed: what Open
  // would read.
  static Result<std::unique_ptr<DurableIndexView>> OpenAt(ItemIndexStore& store,
                                                          const SessionId& session, Epoch epoch,
                                                          const ItemIndexState& state,
                                                          std::optional<Seq> clip = std::nullopt);

  Epoch epoch() const override { return epoch_; }
  Seq tail() const override { return tail_; }
  std::size_t size() const override { return size_; }
  Result<std::vector<timeline::ItemSpan>> Spans(std::size_t lo, std::size_t hi) override;
  Result<std::size_t> FirstStartingAfter(Seq seq) override;
  Result<std::vector<Numbered>> EndingAfter(std::size_t limit, Seq seq) override;

  // The merging items with any of `keys`, clipped, with their ordinals.
  Result<std::vector<Numbered>> ByKeys(const std::vector<std::string>& keys);

 private:
  DurableIndexView(ItemIndexStore& store, SessionId session, Epoch epoch)
      : store_(store), session_(std::move(session)), epoch_(epoch) {}
  // A stored row as a span clipped at tail_; nullopt when it starts after tail_.
  Result<std::optional<timeline::ItemSpan>> Clipped(const ItemRow& row) const;

  ItemIndexStore& store_;
  SessionId session_;
  Epoch epoch_;
  Seq tail_;
  std::size_t size_ = 0;
  std::size_t base_items_ = 0;
  Seq base_seq_;                            // 0 for a root epoch
  std::unique_ptr<DurableIndexView> base_;  // the base prefix's view, clipped at base_seq_
};

// Indexes the events of (session, epoch) through `target` (and the prefix it continues, first),
// in batches of kIndexBatchEvents, each committed with the state it moves. Stops early when the
// log holds no more events. A stored state of another format is dropped and rebuilt.
// `events_read` (optional) counts the events read. `cancel` (optional), once set, stops it
// between two batches with kUnavailable (what was committed stays). Events `held` (optional)
// holds are taken from it instead of the log. With `deferred` (optional), the batch that reaches
// `target` is not committed but added to it, for the caller to commit together with others
// (ItemIndexStore::CommitItemsTogether); the batches before it are committed as they go.
Status CatchUpIndex(ItemIndexStore& store, EventLog& log, const SessionId& session, Epoch epoch,
                    Seq target, std::size_t* events_read = nullptr,
                    const std::atomic<bool>* cancel = nullptr, const HeldRecords* held = nullptr,
                    std::vector<ItemCommit>* deferred = nullptr);

}  // namespace agentstream
