// TimelineService: projected timeline pages of any session (R-SYNC-2) for HTTP and WebSocket.
// Keeps one ProjectionIndex per recently paged session (docs/timeline.md): built once with one
// pass over the session's current epoch, then brought up to date before each page by reading
// only the events committed since (O(new events)), and rebuilt when the epoch changed.
//
// Thread-safe: pages of one session are built one at a time; different sessions in parallel.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/timeline/pager.h"
#include "store/event_log.h"

namespace agentstream::server {

class TimelineService {
 public:
  // `log` must outlive the service. At most `max_sessions` indexes are kept, holding at most
  // `max_bytes` together (ProjectionIndex::MemoryBytes): the least recently used are dropped
  // first, never the one a page is being built from, so one index larger than the budget is
  // kept alone. A dropped index is rebuilt by its session's next page.
  explicit TimelineService(EventLog& log, std::size_t max_sessions = 256,
                           std::size_t max_bytes = std::size_t{256} << 20);

  // The bytes the kept indexes hold, as of their last page.
  std::size_t IndexBytes();

  // One page; errors as timeline::BuildPage plus the log's (kNotFound for an unknown session).
  Result<timeline::Page> Page(const SessionId& session, const timeline::PageRequest& request);

 private:
  struct Entry {
    std::mutex mu;
    std::unique_ptr<timeline::ProjectionIndex> index;  // guarded by mu
    std::size_t bytes = 0;                             // guarded by the service's mu_
  };
  std::shared_ptr<Entry> EntryFor(const SessionId& session);
  Status CatchUp(const SessionId& session, Entry& entry);
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
};

}  // namespace agentstream::server
