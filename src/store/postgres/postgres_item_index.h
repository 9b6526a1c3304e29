// Internal to the store module: the SQL of the timeline's durable item index (item_index.h) on
// PostgreSQL. Reads run on a reader connection; writes inside the writer's batch transaction,
// where a state row that moved on is reported as kConflict without a failing statement (which
// would roll back the appends sharing the batch).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pg/pg.h"
#include "store/event_log.h"
#include "store/item_index.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

Result<std::optional<ItemIndexState>> LoadItemState(Conn& conn, const SessionId& session,
                                                    Epoch epoch);
Result<std::optional<HistoryBase>> LoadEpochBase(Conn& conn, const SessionId& session, Epoch epoch);
Result<std::vector<ItemRow>> LoadItemsBetween(Conn& conn, const SessionId& session, Epoch epoch,
                                              std::uint64_t lo, std::uint64_t hi);
Result<std::vector<ItemRow>> LoadItemsByKeys(Conn& conn, const SessionId& session, Epoch epoch,
                                             const std::vector<std::string>& keys);
Result<std::optional<std::uint64_t>> LoadFirstOrdinalStartingAfter(Conn& conn,
                                                                   const SessionId& session,
                                                                   Epoch epoch, Seq seq);
Result<std::vector<ItemRow>> LoadItemsOpenAcross(Conn& conn, const SessionId& session, Epoch epoch,
                                                 Seq seq);
// Moves the state row from `expected` to `next` (kConflict when it is not `expected`) and writes
// `rows`. Every value must be storable text (the caller checks).
Status StoreItems(Txn& t, const SessionId& session, Epoch epoch,
                  const std::optional<ItemIndexState>& expected, const ItemIndexState& next,
                  const std::vector<ItemRow>& rows);
Status DeleteItems(Txn& t, const SessionId& session, Epoch epoch);

}  // namespace agentstream::pg
