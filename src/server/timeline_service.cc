#include "server/timeline_service.h"

#include "core/event_codec.h"
#include "timeline_store/event_log_reader.h"

namespace agentstream::server {

TimelineService::TimelineService(EventLog& log, std::size_t max_sessions, std::size_t max_bytes)
    : log_(log), max_sessions_(max_sessions), max_bytes_(max_bytes) {}

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

Result<timeline::Page> TimelineService::Page(const SessionId& session,
                                             const timeline::PageRequest& request) {
  std::shared_ptr<Entry> entry = EntryFor(session);
  std::lock_guard lock(entry->mu);
  Status caught_up = CatchUp(session, *entry);
  if (!caught_up.ok()) {
    entry->index.reset();
    Account(session, *entry, 0);
    return caught_up;
  }
  Account(session, *entry, entry->index->MemoryBytes());
  EventLogReader reader(log_, session);
  return timeline::BuildPage(*entry->index, reader, request);
}

}  // namespace agentstream::server
