#include "search/search.h"

#include <string>
#include <utility>

#include "log/log.h"
#include "search/indexer.h"

namespace agentstream {

void IndexSessionText(EventLog& log, const SessionId& session, Cursor tail,
                      const std::atomic<bool>* cancel, const HeldRecords* held,
                      std::vector<DocumentCommit>* deferred) {
  SearchIndexStore* search = log.search_index();
  if (search == nullptr) return;
  Status indexed = CatchUpSearch(*search, log, session, tail, cancel, held, deferred);
  if (!indexed.ok() && !(cancel != nullptr && cancel->load()))
    log::Warn("search.index_failed", {{"agent", session.str()}, {"error", indexed.ToString()}});
}

Result<SearchResult> RunSearch(EventLog& log, const SearchQuery& query) {
  SearchIndexStore* search = log.search_index();
  if (search == nullptr)
    return Error(ErrorCode::kUnavailable, "this daemon's store keeps no search index");
  if (query.limit < 1 || query.limit > kMaxSearchHits) {
    return Error(ErrorCode::kInvalidArgument,
                 "limit must be 1 to " + std::to_string(kMaxSearchHits));
  }
  if (query.session) {
    // One session's hits are current to its tail, not only to the indexer's last pass.
    AS_ASSIGN_OR_RETURN(Cursor tail, log.Tail(*query.session));
    AS_RETURN_IF_ERROR(CatchUpSearch(*search, log, *query.session, tail));
  }
  SearchQuery one_more = query;
  ++one_more.limit;
  AS_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, search->Search(one_more));
  SearchResult result;
  result.truncated = hits.size() > query.limit;
  if (result.truncated) hits.resize(query.limit);
  result.hits = std::move(hits);
  return result;
}

}  // namespace agentstream
