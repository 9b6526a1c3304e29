#include "store/held_records.h"

#include <utility>

namespace agentstream {

namespace {

std::size_t BytesOf(const std::vector<EventRecord>& records) {
  std::size_t bytes = records.capacity() * sizeof(EventRecord);
  for (const EventRecord& record : records) bytes += record.payload.capacity();
  return bytes;
}

}  // namespace

void HeldRecords::Add(std::shared_ptr<const std::vector<EventRecord>> records) {
  if (!records || records->empty()) return;
  const EventRecord& first = records->front();
  const bool continues = !runs_.empty() && [&] {
    const EventRecord& last = runs_.back()->back();
    return last.session == first.session && last.epoch == first.epoch &&
           last.seq.next() == first.seq;
  }();
  if (!continues) {
    runs_.clear();
    bytes_ = 0;
  }
  bytes_ += BytesOf(*records);
  runs_.push_back(std::move(records));
}

void HeldRecords::Add(const HeldRecords& later) {
  for (const auto& run : later.runs_) Add(run);
}

std::optional<Cursor> HeldRecords::last() const {
  if (runs_.empty()) return std::nullopt;
  return runs_.back()->back().cursor();
}

std::optional<std::vector<EventRecord>> HeldRecords::Take(const ReadRequest& request) const {
  if (runs_.empty() || request.direction != ReadDirection::kForward) return std::nullopt;
  const EventRecord& first = runs_.front()->front();
  const EventRecord& last = runs_.back()->back();
  if (request.session != first.session || request.epoch != first.epoch ||
      request.from < first.seq || request.from > last.seq) {
    return std::nullopt;
  }
  std::vector<EventRecord> out;
  std::size_t payload = 0;
  for (const auto& run : runs_) {
    if (run->back().seq < request.from) continue;
    for (const EventRecord& record : *run) {
      if (record.seq < request.from) continue;
      if (out.size() == request.max_items) return out;
      payload += record.payload.size();
      if (!out.empty() && payload > request.max_bytes) return out;
      out.push_back(record);
    }
  }
  return out;
}

Result<std::vector<EventRecord>> ReadForward(EventLog& log, const HeldRecords* held,
                                             const ReadRequest& request) {
  if (held != nullptr) {
    if (std::optional<std::vector<EventRecord>> events = held->Take(request))
      return std::move(*events);
  }
  AS_ASSIGN_OR_RETURN(ReadResult read, log.Read(request));
  return std::move(read.events);
}

}  // namespace agentstream
