// The SQLite log as the timeline's durable item index and the full-text search index
// (item_index.h, search_index.h): reads on a reader connection, writes on the writer thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sqlite/db.h"
#include "store/search_slices.h"
#include "store/sqlite/sqlite_item_index.h"
#include "store/sqlite/sqlite_log_impl.h"
#include "store/sqlite/sqlite_search_index.h"
#include "store/sqlite/sqlite_writer.h"

namespace agentstream::sqlite {

Result<std::optional<ItemIndexState>> SqliteEventLog::LoadItemState(const SessionId& session,
                                                                    Epoch epoch) {
  return readers_.Query<std::optional<ItemIndexState>>(
      [&](Db& db) { return sqlite::LoadItemState(db, session, epoch); });
}

Result<std::optional<HistoryBase>> SqliteEventLog::EpochBase(const SessionId& session,
                                                             Epoch epoch) {
  return readers_.Query<std::optional<HistoryBase>>(
      [&](Db& db) { return sqlite::LoadEpochBase(db, session, epoch); });
}

Result<std::vector<ItemRow>> SqliteEventLog::ItemsBetween(const SessionId& session, Epoch epoch,
                                                          std::uint64_t lo, std::uint64_t hi) {
  return readers_.Query<std::vector<ItemRow>>(
      [&](Db& db) { return sqlite::LoadItemsBetween(db, session, epoch, lo, hi); });
}

Result<std::vector<ItemRow>> SqliteEventLog::ItemsByKeys(const SessionId& session, Epoch epoch,
                                                         const std::vector<std::string>& keys) {
  return readers_.Query<std::vector<ItemRow>>(
      [&](Db& db) { return sqlite::LoadItemsByKeys(db, session, epoch, keys); });
}

Result<std::optional<std::uint64_t>> SqliteEventLog::FirstOrdinalStartingAfter(
    const SessionId& session, Epoch epoch, Seq seq) {
  return readers_.Query<std::optional<std::uint64_t>>(
      [&](Db& db) { return sqlite::LoadFirstOrdinalStartingAfter(db, session, epoch, seq); });
}

Result<std::vector<ItemRow>> SqliteEventLog::ItemsOpenAcross(const SessionId& session, Epoch epoch,
                                                             Seq seq) {
  return readers_.Query<std::vector<ItemRow>>(
      [&](Db& db) { return sqlite::LoadItemsOpenAcross(db, session, epoch, seq); });
}

// Each commit checks its own expected state: one that another writer moved writes nothing and
// is kConflict, the others land.
Result<std::vector<Status>> SqliteEventLog::CommitItemsTogether(
    std::span<const ItemCommit> commits) {
  return RunControl<std::vector<Status>>([&](Writer& w, std::vector<Status>& outcomes) -> Status {
    for (const ItemCommit& c : commits) {
      Result<std::optional<ItemIndexState>> stored =
          sqlite::LoadItemState(w.db(), c.session, c.epoch);
      if (!stored.ok()) return w.Check(stored.status());
      if (*stored != c.expected) {
        outcomes.push_back(Error(ErrorCode::kConflict, "the timeline index of " + c.session.str() +
                                                           " moved on meanwhile"));
        continue;
      }
      AS_RETURN_IF_ERROR(w.Check(sqlite::StoreItems(w.db(), c.session, c.epoch, c.next, c.rows)));
      outcomes.push_back(Status::Ok());
    }
    return Status::Ok();
  });
}

Status SqliteEventLog::DropItems(const SessionId& session, Epoch epoch) {
  return RunControl<bool>([&](Writer& w, bool&) -> Status {
           return w.Check(sqlite::DeleteItems(w.db(), session, epoch));
         })
      .status();
}

Result<std::optional<Cursor>> SqliteEventLog::LoadSearchState(const SessionId& session) {
  return readers_.Query<std::optional<Cursor>>(
      [&](Db& db) { return sqlite::LoadSearchState(db, session); });
}

Result<std::vector<Status>> SqliteEventLog::CommitDocumentsTogether(
    std::span<const DocumentCommit> commits) {
  return RunControl<std::vector<Status>>([&](Writer& w, std::vector<Status>& outcomes) -> Status {
    for (const DocumentCommit& c : commits) {
      Result<std::optional<Cursor>> stored = sqlite::LoadSearchState(w.db(), c.session);
      if (!stored.ok()) return w.Check(stored.status());
      if (*stored != c.expected) {
        outcomes.push_back(Error(ErrorCode::kConflict,
                                 "the search index of " + c.session.str() + " moved on meanwhile"));
        continue;
      }
      AS_RETURN_IF_ERROR(w.Check(sqlite::StoreDocuments(w.db(), c.session, c.next, c.documents)));
      outcomes.push_back(Status::Ok());
    }
    return Status::Ok();
  });
}

// Each slice on a reader connection of its own, in a read transaction of its own.
Result<std::vector<SearchHit>> SqliteEventLog::Search(const SearchQuery& query) {
  return store_internal::SearchSlices(
      search_runner_, query.limit, [&](std::size_t, const std::vector<std::size_t>& parts) {
        return readers_.Query<std::vector<store_internal::RankedHit>>(
            [&](Db& db) { return sqlite::FindDocuments(db, query, parts); });
      });
}

}  // namespace agentstream::sqlite
