// Internal to the store module: the SQL of the timeline's durable item index (item_index.h) on
// SQLite. Reads run on a reader connection inside its read transaction; writes on the writer's
// connection inside the batch transaction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sqlite/db.h"
#include "store/event_log.h"
#include "store/item_index.h"

namespace agentstream::sqlite {

Result<std::optional<ItemIndexState>> LoadItemState(Db& db, const SessionId& session, Epoch epoch);
Result<std::optional<HistoryBase>> LoadEpochBase(Db& db, const SessionId& session, Epoch epoch);
Result<std::vector<ItemRow>> LoadItemsBetween(Db& db, const SessionId& session, Epoch epoch,
                                              std::uint64_t lo, std::uint64_t hi);
Result<std::vector<ItemRow>> LoadItemsByKeys(Db& db, const SessionId& session, Epoch epoch,
                                             const std::vector<std::string>& keys);
Result<std::optional<std::uint64_t>> LoadFirstOrdinalStartingAfter(Db& db, const SessionId& session,
                                                                   Epoch epoch, Seq seq);
Result<std::vector<ItemRow>> LoadItemsOpenAcross(Db& db, const SessionId& session, Epoch epoch,
                                                 Seq seq);
// Stores `next` and `rows` (no check of the stored state: the caller's).
Status StoreItems(Db& db, const SessionId& session, Epoch epoch, const ItemIndexState& next,
                  const std::vector<ItemRow>& rows);
Status DeleteItems(Db& db, const SessionId& session, Epoch epoch);

}  // namespace agentstream::sqlite
