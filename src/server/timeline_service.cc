#include "server/timeline_service.h"

#include "core/event_codec.h"
#include "timeline_store/event_log_reader.h"

namespace agentstream::server {

TimelineService::TimelineService(EventLog& log, std::size_t max_sessions)
    : log_(log), max_sessions_(max_sessions) {}

std::shared_ptr<TimelineService::Entry> TimelineService::EntryFor(const SessionId& session) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(session);
  if (it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  if (entries_.size() >= max_sessions_ && !lru_.empty()) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
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

Result<timeline::Page> TimelineService::Page(const SessionId& session,
                                             const timeline::PageRequest& request) {
  std::shared_ptr<Entry> entry = EntryFor(session);
  std::lock_guard lock(entry->mu);
  Status caught_up = CatchUp(session, *entry);
  if (!caught_up.ok()) {
    entry->index.reset();
    return caught_up;
  }
  EventLogReader reader(log_, session);
  return timeline::BuildPage(*entry->index, reader, request);
}

}  // namespace agentstream::server
