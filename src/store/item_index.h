// ItemIndexStore: the durable rows of the timeline's projection index, kept in the same database
// as the session log (docs/timeline.md, "The durable index"). One row per projected item of a
// (session, epoch), numbered by ordinal, plus one state row saying through which seq the rows
// are current (the watermark). The rows are derived from the log and never the source of truth:
// the store only keeps and queries them; what they mean (item keys, merging, forks and rewinds
// layered over their base) is decided in src/timeline/.
//
// An epoch that continues a base prefix (a fork, a rewind) stores only the items its own events
// created or changed: a base item its events extend gets a row of its own under the base's
// ordinal. Item rows are opaque to the store except for the columns it queries by.
//
// Thread-safe. Errors: kNotFound (no such session or epoch), kConflict (Commit's expected state
// is not the stored one), kIoError / kUnavailable from the database.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"

namespace agentstream {

// Items whose seq_end - seq_start exceeds this are "long": found through their own index when a
// page asks which items are open across a cursor (every other item started at most this many
// seqs before it).
inline constexpr std::uint64_t kLongItemSpan = 1024;
// The same, as the SQL condition of the long rows' partial index and of the queries that use it.
inline constexpr const char* kLongItemCondition = "seq_end - seq_start > 1024";

struct ItemRow {
  std::uint64_t ordinal = 0;
  std::int64_t kind = 0;
  std::string key;
  bool merges = false;  // found by key (at most one such row per key in an epoch)
  Seq seq_start;
  Seq seq_end;
  std::string ranges;  // the item's source seq ranges as text, encoded by src/timeline/
};

struct ItemIndexState {
  std::int64_t format = 0;       // of the rows' encoding; another format is rebuilt
  Seq watermark;                 // the rows reflect the epoch's events through this seq
  std::uint64_t items = 0;       // items in the epoch's timeline (base items included)
  std::uint64_t base_items = 0;  // of them, the items of the base prefix
  friend bool operator==(const ItemIndexState&, const ItemIndexState&) = default;
};

// One commit of (session, epoch): writes `rows` (replacing rows of the same ordinal) and moves
// the state row from `expected` (nullopt: none stored) to `next`.
struct ItemCommit {
  SessionId session;
  Epoch epoch;
  std::optional<ItemIndexState> expected;
  ItemIndexState next;
  std::vector<ItemRow> rows;
};

class ItemIndexStore {
 public:
  virtual ~ItemIndexStore() = default;

  // The state row of (session, epoch), nullopt when none was stored.
  virtual Result<std::optional<ItemIndexState>> LoadItemState(const SessionId& session,
                                                              Epoch epoch) = 0;
  // The prefix (session, epoch) continues, nullopt for a root epoch. kNotFound for an unknown
  // session or epoch.
  virtual Result<std::optional<HistoryBase>> EpochBase(const SessionId& session, Epoch epoch) = 0;
  // The stored rows with lo <= ordinal < hi, ascending (rows the epoch does not own are absent).
  virtual Result<std::vector<ItemRow>> ItemsBetween(const SessionId& session, Epoch epoch,
                                                    std::uint64_t lo, std::uint64_t hi) = 0;
  // The merging rows with any of `keys` (at most one per key), in no particular order.
  virtual Result<std::vector<ItemRow>> ItemsByKeys(const SessionId& session, Epoch epoch,
                                                   const std::vector<std::string>& keys) = 0;
  // The smallest ordinal of a row with seq_start > `seq`, nullopt when none.
  virtual Result<std::optional<std::uint64_t>> FirstOrdinalStartingAfter(const SessionId& session,
                                                                         Epoch epoch, Seq seq) = 0;
  // The rows with seq_start <= `seq` < seq_end, ascending by ordinal. Cost: the rows that start
  // within kLongItemSpan before `seq`, plus the long rows that start before it.
  virtual Result<std::vector<ItemRow>> ItemsOpenAcross(const SessionId& session, Epoch epoch,
                                                       Seq seq) = 0;
  // Makes `commit` in one transaction. kConflict, writing nothing, when the stored state is not
  // its `expected` (another writer moved it).
  Status CommitItems(ItemCommit commit);
  // Makes every commit of `commits` in one transaction, each as CommitItems would alone: one
  // outcome per commit, in their order, OK, kConflict or kInvalidArgument (a row the store cannot
  // keep), each writing nothing of its commit when not OK. An error of the database fails them
  // all: the returned status.
  virtual Result<std::vector<Status>> CommitItemsTogether(std::span<const ItemCommit> commits) = 0;
  // Deletes the state and every row of (session, epoch).
  virtual Status DropItems(const SessionId& session, Epoch epoch) = 0;
};

inline Status ItemIndexStore::CommitItems(ItemCommit commit) {
  AS_ASSIGN_OR_RETURN(std::vector<Status> outcomes,
                      CommitItemsTogether(std::span<const ItemCommit>(&commit, 1)));
  return outcomes.at(0);
}

}  // namespace agentstream
