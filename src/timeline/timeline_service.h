// TimelineService: tail / before / after pages of any session's timeline, for HTTP and WebSocket.
//
// On a log that keeps a durable item index (EventLog::item_index, docs/timeline.md "The durable
// index"), a page reads the index's rows: the index is brought up to the session's tail first,
// which reads only the events committed since it was last brought up (a background indexer
// follows every commit, so after a restart that is the last moments' events; at start it also
// indexes every session whose index is missing or behind, one at a time), and the page then
// costs time proportional to the page. Rows that fail their checks are dropped and rebuilt; if
// the rebuilt index fails again, or the store cannot hold a row, the page is served from an
// in-memory index instead, never from the suspect rows.
//
// On any other log, and as that fallback, it keeps one in-memory ProjectionIndex per recently
// paged session: built once with one pass over the session's current epoch, then brought up to
// date before each page by reading only the events committed since, and rebuilt when the epoch
// changed.
//
// The same background indexer keeps the full-text search index current (IndexSessionText,
// search/search.h), and Search answers from it. On a database several daemons share, each daemon
// indexes its own commits; another daemon's it indexes only once that session has been quiet for
// kRemoteIndexingDelay, so that two daemons rarely index one session at once, and what a daemon
// that stopped left unindexed is still indexed.
//
// Thread-safe: pages of one session are built one at a time; different sessions in parallel.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "core/timeline/pager.h"
#include "search/search.h"
#include "store/event_log.h"
#include "store/held_records.h"

namespace agentstream {

class TimelineService {
 public:
  // `log` must outlive the service. At most `max_sessions` indexes are kept, holding at most
  // `max_bytes` together (ProjectionIndex::MemoryBytes): the least recently used are dropped
  // first, never the one a page is being built from, so one index larger than the budget is
  // kept alone. A dropped index is rebuilt by its session's next page.
  explicit TimelineService(EventLog& log, std::size_t max_sessions = 256,
                           std::size_t max_bytes = std::size_t{256} << 20);
  ~TimelineService();
  TimelineService(const TimelineService&) = delete;
  TimelineService& operator=(const TimelineService&) = delete;

  // Sessions whose commits wait for the background indexer, at most; a session beyond it is
  // indexed by its next page instead.
  static constexpr std::size_t kMaxPendingIndexing = 4096;
  // How long the background indexer gathers commits before indexing them, and how long at least
  // from the start of one of its rounds to the next.
  static constexpr std::chrono::milliseconds kIndexingDelay{200};
  static constexpr std::chrono::milliseconds kIndexingInterval{1000};
  // How long a session another daemon commits to stays quiet before this daemon indexes it. By
  // then that daemon has indexed it, and this one finds nothing left to do.
  static constexpr std::chrono::milliseconds kRemoteIndexingDelay{2000};
  // The records of this daemon's commits the background indexer keeps until it indexes them
  // (instead of reading them back), in bytes, at most; it keeps them one round more, so twice
  // that in all.
  static constexpr std::size_t kMaxHeldBytes = std::size_t{16} << 20;
  // The last commits of a round's sessions are made together, once the round is done or they
  // hold this many bytes (rows and texts).
  static constexpr std::size_t kMaxDeferredBytes = std::size_t{8} << 20;

  // The events the background indexer has read to add to the timeline index, since start.
  std::uint64_t EventsIndexed() const { return events_indexed_.load(); }

  // The bytes the kept indexes hold, as of their last page.
  std::size_t IndexBytes();

  // One page; errors as timeline::BuildPage plus the log's (kNotFound for an unknown session).
  Result<timeline::Page> Page(const SessionId& session, const timeline::PageRequest& request);

  // The hits of `query`: RunSearch (search/search.h) on this service's log. The background
  // indexer adds commits to the search index as it does to the timeline index; a query naming a
  // session brings that session's index up to its tail first. Errors as RunSearch's.
  Result<SearchResult> Search(const SearchQuery& query);

 private:
  struct Entry {
    std::mutex mu;
    std::unique_ptr<timeline::ProjectionIndex> index;  // guarded by mu
    std::size_t bytes = 0;                             // guarded by the service's mu_
  };
  std::shared_ptr<Entry> EntryFor(const SessionId& session);
  Status CatchUp(const SessionId& session, Entry& entry);
  Result<timeline::Page> MemoryPage(const SessionId& session, Entry& entry,
                                    const timeline::PageRequest& request);
  // A page from the durable index; nullopt when it must be served from memory instead.
  std::optional<Result<timeline::Page>> DurablePage(ItemIndexStore& store, const SessionId& session,
                                                    const timeline::PageRequest& request);
  void IndexLoop();
  // Indexes `sessions`, each from the records it holds (and those of the round before) and the
  // log; through their tails when `last`.
  void IndexRound(std::unordered_map<SessionId, HeldRecords>& sessions, bool last);
  // At start: indexes every session whose index is missing or behind its tail (written by an
  // older build, or by a daemon that died before indexing), one session at a time.
  void IndexStoredSessions();
  // Records that `entry` of `session` now holds `bytes`, and drops the least recently used
  // others while the total exceeds max_bytes_.
  void Account(const SessionId& session, Entry& entry, std::size_t bytes);
  void DropLeastRecent();  // mu_ held

  EventLog& log_;
  std::size_t max_sessions_;
  std::size_t max_bytes_;
  std::mutex mu_;
  std::size_t total_bytes_ = 0;  // guarded by mu_
  std::list<SessionId> lru_;     // guarded by mu_; most recent first
  std::unordered_map<SessionId, std::pair<std::shared_ptr<Entry>, std::list<SessionId>::iterator>>
      entries_;  // guarded by mu_

  // The background indexer (durable index only).
  std::mutex pending_mu_;
  std::condition_variable pending_cv_;
  // Sessions this daemon committed to, each with the records its commits carried; guarded by
  // pending_mu_. The records together take at most kMaxHeldBytes (held_bytes_); beyond, the
  // indexers read them back.
  std::unordered_map<SessionId, HeldRecords> pending_;
  std::size_t held_bytes_ = 0;  // guarded by pending_mu_
  // The records the indexer's last round held, kept for the next (the indexer's thread only).
  std::unordered_map<SessionId, HeldRecords> carried_;
  // Sessions another daemon committed to, each with the time of the last such commit; guarded by
  // pending_mu_, at most kMaxPendingIndexing (more are indexed by their next page).
  std::unordered_map<SessionId, std::chrono::steady_clock::time_point> remote_pending_;
  std::atomic<std::uint64_t> events_indexed_{0};
  bool stopping_ = false;            // guarded by pending_mu_
  std::atomic<bool> cancel_{false};  // stops the start-up indexing between two batches
  std::thread indexer_;
  ListenerRegistration commits_;  // declared last: unsubscribed first
};

}  // namespace agentstream
