// The PostgreSQL log as the timeline's durable item index and the full-text search index
// (item_index.h, search_index.h): reads on a reader connection, writes in the writer's batch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pg/pg.h"
#include "store/postgres/postgres_item_index.h"
#include "store/postgres/postgres_log_impl.h"
#include "store/postgres/postgres_search_index.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

Result<std::optional<ItemIndexState>> PostgresEventLog::LoadItemState(const SessionId& session,
                                                                      Epoch epoch) {
  return WithReader<std::optional<ItemIndexState>>(
      [&](Conn& conn) { return pg::LoadItemState(conn, session, epoch); });
}

Result<std::optional<HistoryBase>> PostgresEventLog::EpochBase(const SessionId& session,
                                                               Epoch epoch) {
  return WithReader<std::optional<HistoryBase>>(
      [&](Conn& conn) { return pg::LoadEpochBase(conn, session, epoch); });
}

Result<std::vector<ItemRow>> PostgresEventLog::ItemsBetween(const SessionId& session, Epoch epoch,
                                                            std::uint64_t lo, std::uint64_t hi) {
  return WithReader<std::vector<ItemRow>>(
      [&](Conn& conn) { return pg::LoadItemsBetween(conn, session, epoch, lo, hi); });
}

Result<std::vector<ItemRow>> PostgresEventLog::ItemsByKeys(const SessionId& session, Epoch epoch,
                                                           const std::vector<std::string>& keys) {
  return WithReader<std::vector<ItemRow>>(
      [&](Conn& conn) { return pg::LoadItemsByKeys(conn, session, epoch, keys); });
}

Result<std::optional<std::uint64_t>> PostgresEventLog::FirstOrdinalStartingAfter(
    const SessionId& session, Epoch epoch, Seq seq) {
  return WithReader<std::optional<std::uint64_t>>(
      [&](Conn& conn) { return pg::LoadFirstOrdinalStartingAfter(conn, session, epoch, seq); });
}

Result<std::vector<ItemRow>> PostgresEventLog::ItemsOpenAcross(const SessionId& session,
                                                               Epoch epoch, Seq seq) {
  return WithReader<std::vector<ItemRow>>(
      [&](Conn& conn) { return pg::LoadItemsOpenAcross(conn, session, epoch, seq); });
}

Status PostgresEventLog::CommitItems(const SessionId& session, Epoch epoch,
                                     const std::optional<ItemIndexState>& expected,
                                     const ItemIndexState& next, const std::vector<ItemRow>& rows) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  for (const ItemRow& row : rows)
    AS_RETURN_IF_ERROR(CheckText({{"an item key", row.key}, {"item ranges", row.ranges}}));
  return RunControl<bool>([&](Txn& t, bool&) -> Status {
           return pg::StoreItems(t, session, epoch, expected, next, rows);
         })
      .status();
}

Status PostgresEventLog::DropItems(const SessionId& session, Epoch epoch) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  return RunControl<bool>(
             [&](Txn& t, bool&) -> Status { return pg::DeleteItems(t, session, epoch); })
      .status();
}

Result<std::optional<Cursor>> PostgresEventLog::LoadSearchState(const SessionId& session) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  return WithReader<std::optional<Cursor>>(
      [&](Conn& conn) { return pg::LoadSearchState(conn, session); });
}

Status PostgresEventLog::CommitDocuments(const SessionId& session,
                                         const std::optional<Cursor>& expected, Cursor next,
                                         const std::vector<SearchDocument>& documents) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  for (const SearchDocument& d : documents)
    AS_RETURN_IF_ERROR(CheckText({{"a search document", d.text}, {"a document kind", d.kind}}));
  AS_RETURN_IF_ERROR(RunControl<bool>([&](Txn& t, bool&) -> Status {
                       return pg::StoreDocuments(t, session, expected, next, documents);
                     }).status());
  if (!documents.empty()) flusher_.Stored();
  return Status::Ok();
}

Result<std::vector<SearchHit>> PostgresEventLog::Search(const SearchQuery& query) {
  if (query.session) AS_RETURN_IF_ERROR(CheckText({{"a session id", query.session->str()}}));
  for (const std::string& word : query.words) AS_RETURN_IF_ERROR(CheckText({{"a word", word}}));
  return search_.Run(query);
}

}  // namespace agentstream::pg
