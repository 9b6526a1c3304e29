#include "cli/check.h"

#include <fmt/core.h>
#include <boost/json.hpp>

#include <vector>

#include "core/event_codec.h"
#include "core/timeline/invariants.h"
#include "store/log_factory.h"

namespace agentstream::cli {

namespace {

// Every event of the session's current epoch, decoded; the first read or decode error otherwise.
Result<std::vector<Event>> LoadEvents(EventLog& log, const SessionId& session) {
  std::vector<Event> events;
  Seq from(1);
  while (true) {
    AS_ASSIGN_OR_RETURN(ReadResult page,
                        log.Read(ReadRequest{session, std::nullopt, ReadDirection::kForward, from,
                                             5000, std::size_t{16} << 20}));
    for (const EventRecord& record : page.events) {
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      events.push_back(std::move(event));
    }
    if (page.events.empty() || !page.has_newer) return events;
    from = page.events.back().seq.next();
  }
}

void Report(const CheckCommand& command, const SessionId& session,
            const timeline::Violation& violation) {
  if (command.json) {
    boost::json::object out{
        {"session", session.str()},
        {"invariant", std::string(1, timeline::InvariantLetter(violation.invariant))},
        {"cursor", FormatCursor(violation.cursor)},
        {"message", violation.message}};
    if (violation.turn) out["turn"] = violation.turn->str();
    fmt::print("{}\n", boost::json::serialize(out));
  } else {
    fmt::print("{}: {}\n", session.str(), timeline::FormatViolation(violation));
  }
}

}  // namespace

int RunCheck(const CheckCommand& command) {
  auto opened = OpenEventLog(StoreConfig{command.store_url});
  if (!opened.ok()) {
    fmt::print(stderr, "agentstream: cannot open the store: {}\n", opened.status().ToString());
    return 2;
  }
  EventLog& log = **opened;
  std::vector<SessionId> sessions;
  if (!command.session.empty()) {
    sessions.emplace_back(command.session);
  } else {
    std::string after;
    while (true) {
      auto page = log.ListSessions(after, 1000);
      if (!page.ok()) {
        fmt::print(stderr, "agentstream: {}\n", page.status().ToString());
        return 1;
      }
      for (const SessionInfo& info : *page) sessions.push_back(info.id);
      if (page->size() < 1000) break;
      after = page->back().id.str();
    }
  }
  std::size_t checked_events = 0, violations = 0, unreadable = 0;
  timeline::CheckOptions options;
  options.allow_open_turns_at_tail = command.allow_open;
  for (const SessionId& session : sessions) {
    auto events = LoadEvents(log, session);
    if (!events.ok()) {
      fmt::print(stderr, "{}: {}\n", session.str(), events.status().ToString());
      ++unreadable;
      continue;
    }
    checked_events += events->size();
    for (const auto& violation : timeline::CheckInvariants(*events, options)) {
      Report(command, session, violation);
      ++violations;
    }
  }
  fmt::print(stderr, "checked {} sessions, {} events: {} violations, {} unreadable\n",
             sessions.size(), checked_events, violations, unreadable);
  return violations == 0 && unreadable == 0 ? 0 : 1;
}

}  // namespace agentstream::cli
