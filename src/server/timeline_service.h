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
  // `log` must outlive the service. At most `max_sessions` indexes are kept (least recently
  // used dropped first); each costs one span per projected item.
  explicit TimelineService(EventLog& log, std::size_t max_sessions = 256);

  // One page; errors as timeline::BuildPage plus the log's (kNotFound for an unknown session).
  Result<timeline::Page> Page(const SessionId& session, const timeline::PageRequest& request);

 private:
  struct Entry {
    std::mutex mu;
    std::unique_ptr<timeline::ProjectionIndex> index;  // guarded by mu
  };
  std::shared_ptr<Entry> EntryFor(const SessionId& session);
  Status CatchUp(const SessionId& session, Entry& entry);

  EventLog& log_;
  std::size_t max_sessions_;
  std::mutex mu_;
  std::list<SessionId> lru_;  // guarded by mu_; most recent first
  std::unordered_map<SessionId, std::pair<std::shared_ptr<Entry>, std::list<SessionId>::iterator>>
      entries_;  // guarded by mu_
};

}  // namespace agentstream::server
