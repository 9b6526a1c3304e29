// The PostgreSQL log as the timeline's durable item index and the full-text search index
// (item_index.h, search_index.h): reads on a reader connection, writes in the writer's batch.
#include <cstdint>
#include <optional>
#include <span>
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

namespace {

// What CheckText says of each commit's text, before any is written: a commit the server could not
// store fails alone, not with the others of its transaction.
template <class Commit, class Check>
std::vector<Status> CheckEach(std::span<const Commit> commits, Check check) {
  std::vector<Status> checked;
  checked.reserve(commits.size());
  for (const Commit& c : commits) checked.push_back(check(c));
  return checked;
}

}  // namespace

// Each commit checks its own expected state: one that another writer moved writes nothing and
// is kConflict, the others land.
Result<std::vector<Status>> PostgresEventLog::CommitItemsTogether(
    std::span<const ItemCommit> commits) {
  const std::vector<Status> checked = CheckEach(commits, [](const ItemCommit& c) -> Status {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", c.session.str()}}));
    for (const ItemRow& row : c.rows)
      AS_RETURN_IF_ERROR(CheckText({{"an item key", row.key}, {"item ranges", row.ranges}}));
    return Status::Ok();
  });
  return RunControl<std::vector<Status>>([&](Txn& t, std::vector<Status>& outcomes) -> Status {
    for (std::size_t i = 0; i < commits.size(); ++i) {
      const ItemCommit& c = commits[i];
      outcomes.push_back(checked[i].ok()
                             ? pg::StoreItems(t, c.session, c.epoch, c.expected, c.next, c.rows)
                             : checked[i]);
      if (!t.io().ok()) return t.io();
    }
    return Status::Ok();
  });
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

Result<std::vector<Status>> PostgresEventLog::CommitDocumentsTogether(
    std::span<const DocumentCommit> commits) {
  const std::vector<Status> checked = CheckEach(commits, [](const DocumentCommit& c) -> Status {
    AS_RETURN_IF_ERROR(CheckText({{"a session id", c.session.str()}}));
    for (const SearchDocument& d : c.documents)
      AS_RETURN_IF_ERROR(CheckText({{"a search document", d.text}, {"a document kind", d.kind}}));
    return Status::Ok();
  });
  AS_ASSIGN_OR_RETURN(
      std::vector<Status> outcomes,
      RunControl<std::vector<Status>>([&](Txn& t, std::vector<Status>& outcomes) -> Status {
        for (std::size_t i = 0; i < commits.size(); ++i) {
          const DocumentCommit& c = commits[i];
          outcomes.push_back(checked[i].ok()
                                 ? pg::StoreDocuments(t, c.session, c.expected, c.next, c.documents)
                                 : checked[i]);
          if (!t.io().ok()) return t.io();
        }
        return Status::Ok();
      }));
  for (std::size_t i = 0; i < commits.size(); ++i) {
    if (outcomes[i].ok() && !commits[i].documents.empty()) {
      flusher_.Stored();
      break;
    }
  }
  return outcomes;
}

Result<std::vector<SearchHit>> PostgresEventLog::Search(const SearchQuery& query) {
  if (query.session) AS_RETURN_IF_ERROR(CheckText({{"a session id", query.session->str()}}));
  for (const std::string& word : query.words) AS_RETURN_IF_ERROR(CheckText({{"a word", word}}));
  return search_.Run(query);
}

}  // namespace agentstream::pg
