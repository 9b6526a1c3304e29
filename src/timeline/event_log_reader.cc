#include "timeline/event_log_reader.h"

namespace agentstream {

Result<std::vector<Event>> EventLogReader::ReadRange(Epoch epoch, Seq first, Seq last) {
  std::vector<Event> out;
  Seq from = first;
  while (from <= last) {
    ReadRequest request;
    request.session = session_;
    request.epoch = epoch;
    request.direction = ReadDirection::kForward;
    request.from = from;
    request.max_items = std::min<std::uint64_t>(batch_, last.value() - from.value() + 1);
    ++reads_;
    AS_ASSIGN_OR_RETURN(ReadResult result, log_.Read(request));
    if (result.events.empty()) break;
    for (const EventRecord& record : result.events) {
      if (record.seq > last) return out;
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      out.push_back(std::move(event));
    }
    from = result.events.back().seq.next();
  }
  return out;
}

Result<timeline::ProjectionIndex> BuildProjectionIndex(EventLog& log, const SessionId& session,
                                                       std::optional<Epoch> epoch) {
  if (!epoch) {
    AS_ASSIGN_OR_RETURN(Cursor tail, log.Tail(session));
    epoch = tail.epoch;
  }
  timeline::ProjectionIndex index(*epoch);
  ReadRequest request;
  request.session = session;
  request.epoch = epoch;
  request.from = Seq(1);
  request.max_items = 1000;
  while (true) {
    AS_ASSIGN_OR_RETURN(ReadResult result, log.Read(request));
    for (const EventRecord& record : result.events) {
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      index.Add(event);
    }
    if (result.events.empty() || !result.has_newer) break;
    request.from = result.events.back().seq.next();
  }
  return index;
}

}  // namespace agentstream
