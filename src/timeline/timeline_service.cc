#include "timeline/timeline_service.h"

#include <algorithm>

#include "core/event_codec.h"
#include "log/log.h"
#include "search/search.h"
#include "timeline/durable_index.h"
#include "timeline/event_log_reader.h"

namespace agentstream {

TimelineService::TimelineService(EventLog& log, std::size_t max_sessions, std::size_t max_bytes)
    : log_(log), max_sessions_(max_sessions), max_bytes_(max_bytes) {
  if (log_.item_index() == nullptr) return;
  indexer_ = std::thread([this] { IndexLoop(); });
  commits_ = log_.SubscribeCommits([this](const CommitNotice& notice) {
    std::lock_guard lock(pending_mu_);
    if (notice.remote) {
      auto it = remote_pending_.find(notice.session);
      if (it != remote_pending_.end()) {
        it->second = std::chrono::steady_clock::now();
      } else if (remote_pending_.size() < kMaxPendingIndexing) {
        remote_pending_.emplace(notice.session, std::chrono::steady_clock::now());
        if (remote_pending_.size() == 1) pending_cv_.notify_one();
      }
      return;
    }
    auto it = pending_.find(notice.session);
    if (it == pending_.end()) {
      if (pending_.size() >= kMaxPendingIndexing) return;
      it = pending_.try_emplace(notice.session).first;
      pending_cv_.notify_one();
    }
    // The commit's records, for the indexers to take instead of reading them back. The session's
    // records are held only while every commit since the last round's carried them and all fit;
    // else the round reads the session from the log.
    HeldRecords& held = it->second;
    held_bytes_ -= held.bytes();
    if (notice.records && held_bytes_ < kMaxHeldBytes) {
      held.Add(notice.records);
    } else {
      held = HeldRecords{};
    }
    held_bytes_ += held.bytes();
  });
}

TimelineService::~TimelineService() {
  cancel_ = true;
  commits_.Reset();
  {
    std::lock_guard lock(pending_mu_);
    stopping_ = true;
  }
  pending_cv_.notify_one();
  if (indexer_.joinable()) indexer_.join();
}

void TimelineService::IndexStoredSessions() {
  ItemIndexStore& store = *log_.item_index();
  std::string after;
  while (!cancel_) {
    Result<std::vector<SessionInfo>> page = log_.ListSessions(after, 256);
    if (!page.ok() || page->empty()) return;
    for (const SessionInfo& info : *page) {
      if (cancel_) return;
      Result<std::optional<ItemIndexState>> state = store.LoadItemState(info.id, info.epoch);
      if (state.ok() && *state && (*state)->format == kItemIndexFormat &&
          (*state)->watermark >= info.tail) {
        IndexSessionText(log_, info.id, Cursor{info.epoch, info.tail}, &cancel_);
        continue;
      }
      std::size_t read = 0;
      Status indexed = CatchUpIndex(store, log_, info.id, info.epoch, info.tail, &read, &cancel_);
      events_indexed_ += read;
      if (!indexed.ok() && !cancel_)
        log::Warn("timeline.index_failed",
                  {{"agent", info.id.str()}, {"error", indexed.ToString()}});
      IndexSessionText(log_, info.id, Cursor{info.epoch, info.tail}, &cancel_);
    }
    after = page->back().id.str();
  }
}

void TimelineService::IndexLoop() {
  IndexStoredSessions();
  std::unique_lock lock(pending_mu_);
  std::chrono::steady_clock::time_point round_started;
  while (true) {
    auto ready = [&] { return stopping_ || !pending_.empty(); };
    if (remote_pending_.empty()) {
      pending_cv_.wait(lock, [&] { return ready() || !remote_pending_.empty(); });
    } else {
      pending_cv_.wait_for(lock, kRemoteIndexingDelay / 4, ready);
    }
    // Gather the commits of the next moments too, and of the rest of the interval since the last
    // round: one indexing per session per round, and a round's fixed cost per session paid at
    // most once an interval however busy the session. When stopping, what is pending is indexed
    // at once, so the next start finds the index current.
    if (!pending_.empty()) {
      const auto start = std::max(std::chrono::steady_clock::now() + kIndexingDelay,
                                  round_started + kIndexingInterval);
      pending_cv_.wait_until(lock, start, [&] { return stopping_; });
    }
    round_started = std::chrono::steady_clock::now();
    const bool last = stopping_;
    std::unordered_map<SessionId, HeldRecords> sessions;
    sessions.swap(pending_);
    held_bytes_ = 0;
    // Other daemons' sessions that went quiet: theirs to index on stopping, not this daemon's.
    const auto quiet = std::chrono::steady_clock::now() - kRemoteIndexingDelay;
    std::erase_if(remote_pending_, [&](const auto& entry) {
      if (sessions.count(entry.first)) return true;
      if (last || entry.second > quiet) return false;
      sessions.try_emplace(entry.first);
      return true;
    });
    lock.unlock();
    if (!sessions.empty()) IndexRound(sessions, last);  // an empty round keeps what is carried
    if (last) return;
    lock.lock();
  }
}

namespace {

// What a deferred commit holds, about: what bounds a round's commits in memory.
std::size_t BytesOf(const ItemCommit& commit) {
  std::size_t bytes = sizeof(commit);
  for (const ItemRow& row : commit.rows) bytes += sizeof(row) + row.key.size() + row.ranges.size();
  return bytes;
}
std::size_t BytesOf(const DocumentCommit& commit) {
  std::size_t bytes = sizeof(commit);
  for (const SearchDocument& d : commit.documents)
    bytes += sizeof(d) + d.kind.size() + d.text.size();
  return bytes;
}

// Logs as `event` the commits of a round that failed: once for them all when their transaction
// did, else each that failed other than by a conflict (another indexer moved the session on, and
// the next round goes on from there). Commits that failed are made again by the next round.
template <class Commit>
void ReportFailures(const char* event, const std::vector<Commit>& commits,
                    const Result<std::vector<Status>>& outcomes) {
  if (!outcomes.ok()) {
    log::Warn(event, {{"agents", commits.size()}, {"error", outcomes.status().ToString()}});
    return;
  }
  for (std::size_t i = 0; i < commits.size(); ++i) {
    const Status& outcome = (*outcomes)[i];
    if (!outcome.ok() && outcome.code() != ErrorCode::kConflict)
      log::Warn(event, {{"agent", commits[i].session.str()}, {"error", outcome.ToString()}});
  }
}

}  // namespace

void TimelineService::IndexRound(std::unordered_map<SessionId, HeldRecords>& sessions, bool last) {
  ItemIndexStore& store = *log_.item_index();
  // Each session's records of the round before are kept for this one: the search index waits
  // for a text that is still streaming, so it may start from one round back. Without the pages'
  // lock: indexers that meet move on from each other's commits.
  std::unordered_map<SessionId, HeldRecords> carried;
  // The sessions' last commits, made together (one transaction, one wait for the disk, instead of
  // two per session) once the round is done or they hold kMaxDeferredBytes.
  std::vector<ItemCommit> items;
  std::vector<DocumentCommit> texts;
  std::size_t deferred_bytes = 0;
  SearchIndexStore* search = log_.search_index();
  auto commit_deferred = [&] {
    if (!items.empty())
      ReportFailures("timeline.index_failed", items, store.CommitItemsTogether(items));
    if (search != nullptr && !texts.empty())
      ReportFailures("search.index_failed", texts, search->CommitDocumentsTogether(texts));
    items.clear();
    texts.clear();
    deferred_bytes = 0;
  };
  for (auto& [session, held] : sessions) {
    // Through the last record of this round held, without asking the log for the tail: commits
    // since have their notices in the next round, whose records it holds. (A rewind since makes
    // this round index the epoch it left, which stays readable, and the next the new one.) The
    // last round indexes through the tail.
    const std::optional<Cursor> last_held = held.last();
    HeldRecords own = held;
    if (auto before = carried_.find(session); before != carried_.end() && last_held) {
      HeldRecords joined = std::move(before->second);
      joined.Add(held);
      held = std::move(joined);
    }
    carried.emplace(session, std::move(own));
    Result<Cursor> tail = !last && last_held ? Result<Cursor>(*last_held) : log_.Tail(session);
    if (!tail.ok()) continue;
    std::size_t read = 0;
    const std::size_t items_before = items.size();
    const std::size_t texts_before = texts.size();
    Status indexed =
        CatchUpIndex(store, log_, session, tail->epoch, tail->seq, &read, nullptr, &held, &items);
    events_indexed_ += read;
    if (!indexed.ok())
      log::Warn("timeline.index_failed", {{"agent", session.str()}, {"error", indexed.ToString()}});
    // Not cancelled by the stop: the last round is what brings the search index current too.
    IndexSessionText(log_, session, *tail, nullptr, &held, &texts);
    for (std::size_t i = items_before; i < items.size(); ++i) deferred_bytes += BytesOf(items[i]);
    for (std::size_t i = texts_before; i < texts.size(); ++i) deferred_bytes += BytesOf(texts[i]);
    if (deferred_bytes >= kMaxDeferredBytes) commit_deferred();
  }
  commit_deferred();
  carried_ = std::move(carried);
}

Result<SearchResult> TimelineService::Search(const SearchQuery& query) {
  return RunSearch(log_, query);
}

std::size_t TimelineService::IndexBytes() {
  std::lock_guard lock(mu_);
  return total_bytes_;
}

void TimelineService::DropLeastRecent() {
  auto it = entries_.find(lru_.back());
  total_bytes_ -= it->second.first->bytes;
  entries_.erase(it);
  lru_.pop_back();
}

void TimelineService::Account(const SessionId& session, Entry& entry, std::size_t bytes) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(session);
  if (it == entries_.end() || it->second.first.get() != &entry) return;  // dropped meanwhile
  total_bytes_ = total_bytes_ - entry.bytes + bytes;
  entry.bytes = bytes;
  while (total_bytes_ > max_bytes_ && lru_.size() > 1 && lru_.back() != session) DropLeastRecent();
}

std::shared_ptr<TimelineService::Entry> TimelineService::EntryFor(const SessionId& session) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(session);
  if (it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  if (entries_.size() >= max_sessions_ && !lru_.empty()) DropLeastRecent();
  lru_.push_front(session);
  auto entry = std::make_shared<Entry>();
  entries_.emplace(session, std::make_pair(entry, lru_.begin()));
  return entry;
}

Status TimelineService::CatchUp(const SessionId& session, Entry& entry) {
  AS_ASSIGN_OR_RETURN(Cursor tail, log_.Tail(session));
  if (!entry.index || entry.index->epoch() != tail.epoch) {
    AS_ASSIGN_OR_RETURN(timeline::ProjectionIndex index,
                        BuildProjectionIndex(log_, session, tail.epoch));
    entry.index = std::make_unique<timeline::ProjectionIndex>(std::move(index));
  }
  while (entry.index->tail() < tail.seq) {
    ReadRequest request;
    request.session = session;
    request.epoch = entry.index->epoch();
    request.from = entry.index->tail().next();
    request.max_items = 1000;
    AS_ASSIGN_OR_RETURN(ReadResult read, log_.Read(request));
    if (read.events.empty()) break;
    for (const EventRecord& record : read.events) {
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      entry.index->Add(event);
    }
  }
  return Status::Ok();
}

std::optional<Result<timeline::Page>> TimelineService::DurablePage(
    ItemIndexStore& store, const SessionId& session, const timeline::PageRequest& request) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Result<Cursor> tail = log_.Tail(session);
    if (!tail.ok()) return Result<timeline::Page>(tail.status());
    Status indexed = CatchUpIndex(store, log_, session, tail->epoch, tail->seq);
    Result<timeline::Page> page = [&]() -> Result<timeline::Page> {
      AS_RETURN_IF_ERROR(indexed);
      AS_ASSIGN_OR_RETURN(std::unique_ptr<DurableIndexView> view,
                          DurableIndexView::Open(store, session, tail->epoch));
      EventLogReader reader(log_, session);
      return timeline::BuildPage(*view, reader, request);
    }();
    const ErrorCode code = page.ok() ? ErrorCode::kOk : page.status().code();
    if (code == ErrorCode::kInvalidArgument && !indexed.ok()) return std::nullopt;  // unstorable
    if (code != ErrorCode::kCorruption && code != ErrorCode::kInternal) return page;
    // Rows that fail their checks, or disagree with the log: rebuild them from the log.
    log::Warn("timeline.index_rebuilt",
              {{"agent", session.str()}, {"error", page.status().ToString()}});
    if (Status dropped = store.DropItems(session, tail->epoch); !dropped.ok()) return page;
  }
  return std::nullopt;
}

Result<timeline::Page> TimelineService::Page(const SessionId& session,
                                             const timeline::PageRequest& request) {
  std::shared_ptr<Entry> entry = EntryFor(session);
  std::lock_guard lock(entry->mu);
  if (ItemIndexStore* store = log_.item_index()) {
    if (std::optional<Result<timeline::Page>> page = DurablePage(*store, session, request))
      return std::move(*page);
  }
  return MemoryPage(session, *entry, request);
}

Result<timeline::Page> TimelineService::MemoryPage(const SessionId& session, Entry& entry,
                                                   const timeline::PageRequest& request) {
  Status caught_up = CatchUp(session, entry);
  if (!caught_up.ok()) {
    entry.index.reset();
    Account(session, entry, 0);
    return caught_up;
  }
  Account(session, entry, entry.index->MemoryBytes());
  EventLogReader reader(log_, session);
  return timeline::BuildPage(*entry.index, reader, request);
}

}  // namespace agentstream
