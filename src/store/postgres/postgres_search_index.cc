#include "store/postgres/postgres_search_index.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "pg/setup.h"
#include "store/postgres/sql.h"

namespace agentstream::pg {

namespace {

std::uint64_t U64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// The newest documents looked through first, and the matches counted through the GIN index
// before the time index is walked (FindDocuments).
constexpr int kRecentDocuments = 5000;
constexpr int kFewMatches = 5000;

// The query's words as one tsquery of the 'simple' configuration: plainto_tsquery ANDs them and
// reads no operators, whatever the words hold.
std::string Words(const SearchQuery& query) {
  std::string words;
  for (const std::string& word : query.words) words += (words.empty() ? "" : " ") + word;
  return words;
}

// The partitions `parts` of search_documents (postgres_schema.cc) as one relation: the table
// itself for all of them, a partition, or their UNION ALL (which the planner flattens into an
// append of the partitions, each read through its own indexes).
std::string Partitions(const std::vector<std::size_t>& parts) {
  if (parts.size() == kSearchPartitions) return "search_documents";
  std::string out;
  for (const std::size_t part : parts)
    out += (out.empty() ? "" : " UNION ALL ") +
           ("SELECT * FROM search_documents_" + std::to_string(part));
  return parts.size() == 1 ? "search_documents_" + std::to_string(parts[0]) : "(" + out + ")";
}

// Read-only REPEATABLE READ transactions on every connection of `conns`, all in one snapshot:
// the first connection's, exported by it and imported by the others. Sequential scans are off
// in them (FindDocuments). Each transaction begun is ended when the object is destroyed.
class SharedSnapshot {
 public:
  explicit SharedSnapshot(const std::vector<Conn*>& conns) : conns_(conns) {}
  ~SharedSnapshot() {
    for (std::size_t i = 0; i < begun_; ++i) (void)conns_[i]->ExecScript("COMMIT");
  }
  SharedSnapshot(const SharedSnapshot&) = delete;
  SharedSnapshot& operator=(const SharedSnapshot&) = delete;

  Status Begin() {
    std::string id;
    for (Conn* conn : conns_) {
      std::string begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
      if (!id.empty()) begin += "; SET TRANSACTION SNAPSHOT '" + id + "'";
      ++begun_;  // ended even when the script fails half way (COMMIT then rolls back)
      AS_RETURN_IF_ERROR(conn->ExecScript(begin));
      AS_RETURN_IF_ERROR(conn->ExecScript("SET LOCAL enable_seqscan = off"));
      if (begun_ == 1 && conns_.size() > 1) {
        AS_ASSIGN_OR_RETURN(Rows r, conn->Exec("SELECT pg_export_snapshot()"));
        id = r.Text(0, 0);
        if (id.empty() || id.find_first_not_of("0123456789ABCDEFabcdef-") != std::string::npos)
          return Error(ErrorCode::kInternal, "PostgreSQL exported an unexpected snapshot id");
      }
    }
    return Status::Ok();
  }

 private:
  const std::vector<Conn*>& conns_;
  std::size_t begun_ = 0;
};

}  // namespace

SlicedSearch::SlicedSearch(ReaderPool& readers, std::size_t slices)
    : readers_(readers), runner_(slices) {}

Result<std::vector<SearchHit>> SlicedSearch::Run(const SearchQuery& query) {
  std::vector<Conn> taken;
  taken.reserve(runner_.slices());
  Status took = Status::Ok();
  {
    std::lock_guard lock(taking_);
    while (took.ok() && taken.size() < runner_.slices()) {
      Result<Conn> conn = readers_.Acquire();
      if (conn.ok())
        taken.push_back(std::move(*conn));
      else
        took = conn.status();
    }
  }
  Result<std::vector<SearchHit>> out = took.ok() ? InSnapshot(taken, query) : took;
  for (Conn& conn : taken) readers_.Release(std::move(conn));  // a broken one is dropped
  return out;
}

Result<std::vector<SearchHit>> SlicedSearch::InSnapshot(std::vector<Conn>& taken,
                                                        const SearchQuery& query) {
  std::vector<Conn*> conns;
  conns.reserve(taken.size());
  for (Conn& conn : taken) conns.push_back(&conn);
  SharedSnapshot snapshot(conns);
  AS_RETURN_IF_ERROR(snapshot.Begin());
  return store_internal::SearchSlices(
      runner_, query.limit, [&](std::size_t slice, const std::vector<std::size_t>& parts) {
        return FindDocuments(*conns[slice], query, parts);
      });
}

Result<std::optional<Cursor>> LoadSearchState(Conn& conn, const SessionId& session) {
  AS_ASSIGN_OR_RETURN(
      Rows r, conn.Exec("SELECT epoch, seq FROM search_state WHERE session=$1", {session.str()}));
  if (r.size() == 0) return std::optional<Cursor>();
  return std::optional<Cursor>(Cursor{Epoch(U64(r.Int(0, 0))), Seq(U64(r.Int(0, 1)))});
}

Status StoreDocuments(Txn& t, const SessionId& session, const std::optional<Cursor>& expected,
                      Cursor next, const std::vector<SearchDocument>& documents) {
  Rows moved;
  if (!expected) {
    AS_ASSIGN_OR_RETURN(moved,
                        t.Exec("INSERT INTO search_state(session, epoch, seq) "
                               "VALUES($1,$2,$3) ON CONFLICT DO NOTHING",
                               {session.str(), I64(next.epoch.value()), I64(next.seq.value())}));
  } else {
    AS_ASSIGN_OR_RETURN(moved,
                        t.Exec("UPDATE search_state SET epoch=$2, seq=$3 WHERE "
                               "session=$1 AND epoch=$4 AND seq=$5",
                               {session.str(), I64(next.epoch.value()), I64(next.seq.value()),
                                I64(expected->epoch.value()), I64(expected->seq.value())}));
  }
  if (moved.Affected() == 0)
    return Error(ErrorCode::kConflict,
                 "the search index of " + session.str() + " moved on meanwhile");
  if (documents.empty()) return Status::Ok();
  std::vector<std::int64_t> epochs, seqs, times;
  std::vector<std::string> kinds, bodies;
  for (const SearchDocument& d : documents) {
    epochs.push_back(I64(d.cursor.epoch.value()));
    seqs.push_back(I64(d.cursor.seq.value()));
    times.push_back(d.time);
    kinds.push_back(d.kind);
    bodies.push_back(d.text);
  }
  return t
      .Exec(
          "INSERT INTO search_documents(session, epoch, seq, at, kind, body) SELECT $1, * "
          "FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[])",
          {session.str(), IntArray(epochs), IntArray(seqs), IntArray(times), TextArray(kinds),
           TextArray(bodies)})
      .status();
}

Result<std::vector<store_internal::RankedHit>> FindDocuments(
    Conn& conn, const SearchQuery& query, const std::vector<std::size_t>& parts) {
  // Newest first, by the events' time (then by the order documents were added in). Which plan
  // is fast depends on how many documents match, and the planner cannot know that for words it
  // has no statistics of (a table just filled, a rare word, two common words that never meet):
  // walking the time index newest first is fast when matches are common and reads the whole
  // table when they are rare; the GIN index is the other way round. So, in the caller's
  // snapshot, over the partitions `parts` (each with its own indexes):
  //   1. the newest kRecentDocuments documents (of the session) are looked through: when they
  //      hold `limit` matches, those are the answer (common words);
  //   2. else the matches are counted through the GIN index (sequential scans off), up to
  //      kFewMatches: when there are no more, they are ordered here (rare words);
  //   3. else the time index is walked, newest first, to the `limit`-th match.
  const std::string from = Partitions(parts);
  const std::string limit = std::to_string(query.limit);
  std::vector<Param> params = {Words(query)};
  std::string where = "d.words @@ plainto_tsquery('simple', $1)";
  std::string in_session;
  if (query.session) {
    where += " AND d.session = $2";
    in_session = " WHERE session = $2";
    params.push_back(query.session->str());
  }
  // The (at, id) of matches, newest first.
  auto pairs = [](const Rows& rows) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    out.reserve(static_cast<std::size_t>(rows.size()));
    for (int i = 0; i < rows.size(); ++i) out.emplace_back(rows.Int(i, 1), rows.Int(i, 0));
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> chosen;
  std::optional<std::string> walk;  // step 3's condition
  AS_ASSIGN_OR_RETURN(
      Rows recent,
      conn.Exec("SELECT d.id, d.at FROM (SELECT id, at, words FROM " + from + " r" + in_session +
                    " ORDER BY at DESC, id DESC LIMIT " + std::to_string(kRecentDocuments) +
                    ") d WHERE d.words @@ plainto_tsquery('simple', $1) ORDER BY d.at DESC, "
                    "d.id DESC LIMIT " +
                    limit,
                params));
  if (static_cast<std::size_t>(recent.size()) == query.limit) {
    chosen = pairs(recent);
  } else {
    AS_ASSIGN_OR_RETURN(Rows few, conn.Exec("SELECT d.id, d.at FROM " + from + " d WHERE " + where +
                                                " LIMIT " + std::to_string(kFewMatches + 1),
                                            params));
    if (few.size() <= kFewMatches) {
      chosen = pairs(few);
      if (chosen.size() > query.limit) chosen.resize(query.limit);
    } else {
      walk = where;
    }
  }
  if (!walk && chosen.empty()) return std::vector<store_internal::RankedHit>();
  std::vector<Param> final_params = params;
  if (!walk) {
    std::vector<std::int64_t> ids;
    ids.reserve(chosen.size());
    for (const auto& [at, id] : chosen) ids.push_back(id);
    walk = "d.id = ANY('" + IntArray(ids) + "'::bigint[])";  // digits and commas only
    final_params = {Words(query)};
  }
  const std::string sql =
      "SELECT session, epoch, seq, at, kind, ts_headline('simple', body, "
      "plainto_tsquery('simple', $1), 'StartSel=\"\x02\", StopSel=\"\x03\", MaxWords=24, "
      "MinWords=8, ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \"'), id FROM (SELECT d.* "
      "FROM " +
      from + " d WHERE " + *walk + " ORDER BY d.at DESC, d.id DESC LIMIT " + limit +
      ") hits ORDER BY at DESC, id DESC";
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(sql, final_params));
  std::vector<store_internal::RankedHit> hits;
  hits.reserve(static_cast<std::size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) {
    hits.push_back(store_internal::RankedHit{
        {r.Int(i, 3), r.Int(i, 6)},
        SearchHit{SessionId(r.Text(i, 0)), Cursor{Epoch(U64(r.Int(i, 1))), Seq(U64(r.Int(i, 2)))},
                  r.Int(i, 3), r.Text(i, 4), r.Text(i, 5)}});
  }
  return hits;
}

PendingListFlusher::PendingListFlusher(ReaderPool& readers, std::chrono::milliseconds delay)
    : readers_(readers), delay_(delay), thread_([this] { Run(); }) {}

PendingListFlusher::~PendingListFlusher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PendingListFlusher::Stored() {
  {
    std::lock_guard lock(mu_);
    if (stored_) return;
    stored_ = true;
  }
  wake_.notify_all();
}

void PendingListFlusher::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || stored_; });
    // The documents of the next `delay` join the same flush, which moves them in one pass.
    if (wake_.wait_for(lock, delay_, [&] { return stopping_; })) return;
    stored_ = false;
    lock.unlock();
    const Status flushed =
        WithReader<bool>(readers_, [](Conn& conn) -> Result<bool> {
          AS_RETURN_IF_ERROR(conn.Exec("SELECT gin_clean_pending_list(inhrelid) FROM pg_inherits "
                                       "WHERE inhparent = 'search_documents_words'::regclass")
                                 .status());
          return true;
        }).status();
    failures_.Report(flushed);
    lock.lock();
  }
}

}  // namespace agentstream::pg
