#include "cli/check.h"

#include <fmt/core.h>
#include <boost/json.hpp>

#include <vector>

#include "core/event_codec.h"
#include "core/timeline/invariants.h"
#include "core/turn/turn_state.h"
#include "store/log_factory.h"

namespace agentstream::cli {

namespace {

// Every event of the session's current epoch, decoded, with its stored record; the first read or
// decode error otherwise.
struct Loaded {
  std::vector<Event> events;
  std::vector<std::uint64_t> writers;  // the ownership generation that wrote each event
  SessionInfo info;
};
Result<Loaded> LoadEvents(EventLog& log, const SessionId& session) {
  Loaded out;
  AS_ASSIGN_OR_RETURN(out.info, log.GetSession(session));
  Seq from(1);
  while (true) {
    AS_ASSIGN_OR_RETURN(ReadResult page,
                        log.Read(ReadRequest{session, out.info.epoch, ReadDirection::kForward, from,
                                             5000, std::size_t{16} << 20}));
    for (const EventRecord& record : page.events) {
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      out.events.push_back(std::move(event));
      out.writers.push_back(record.owner_generation);
    }
    if (page.events.empty() || !page.has_newer) return out;
    from = page.events.back().seq.next();
  }
}

// A check beyond the turn invariants: 'o' (every event was appended by the session's owner of
// the time: no event of a generation lands after a later generation took the session over) and
// 's' (a session nobody runs stores the status its log replays to: no stuck "running").
struct StoreViolation {
  char letter;
  Cursor cursor;
  std::string message;
};

std::vector<StoreViolation> CheckOwnership(const Loaded& loaded,
                                           const std::vector<OwnershipRecord>& grants) {
  std::vector<StoreViolation> out;
  const Epoch epoch = loaded.info.epoch;
  // A fork's first events are its parent's, read where they were written: their generations are
  // the parent's owners', checked against the parent's grants when the parent is checked. (A
  // fork later rewound to before its fork point leaves its own events there unchecked.)
  const Seq inherited = loaded.info.forked_from ? loaded.info.forked_from->seq : Seq(0);
  for (std::size_t i = 0; i < loaded.events.size(); ++i) {
    const std::uint64_t writer = loaded.writers[i];
    const Seq seq = loaded.events[i].seq;
    if (writer == 0 || seq <= inherited) continue;
    bool granted = false;
    for (const OwnershipRecord& grant : grants) {
      if (grant.generation == writer) granted = true;
      if (grant.at.epoch != epoch) continue;
      if (grant.generation == writer && seq <= grant.at.seq) {
        out.push_back({'o',
                       {epoch, seq},
                       fmt::format("written by generation {} before its grant at {}", writer,
                                   FormatCursor(grant.at))});
      } else if (grant.generation > writer && seq > grant.at.seq) {
        out.push_back({'o',
                       {epoch, seq},
                       fmt::format("written by generation {} after generation {} ({}) took the "
                                   "session over at {}",
                                   writer, grant.generation, grant.owner, FormatCursor(grant.at))});
        break;
      }
    }
    if (!granted) {
      out.push_back(
          {'o', {epoch, seq}, fmt::format("written by generation {}, never granted", writer)});
    }
  }
  return out;
}

std::vector<StoreViolation> CheckStatus(const Loaded& loaded) {
  if (loaded.info.owner.live()) return {};  // its runtime keeps the status up to date
  boost::system::error_code ec;
  const boost::json::value stored = boost::json::parse(loaded.info.meta.status_snapshot, ec);
  const boost::json::value* status =
      ec || !stored.is_object() ? nullptr : stored.as_object().if_contains("status");
  if (status == nullptr || !status->is_string()) return {};  // not known: recovery reads the log
  const std::string_view replayed = turn::SessionStatusName(turn::StatusFromLog(loaded.events));
  if (status->as_string() == replayed) return {};
  return {{'s',
           {loaded.info.epoch, loaded.info.tail},
           fmt::format("stores status {} but its log replays to {}",
                       std::string_view(status->as_string()), replayed)}};
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

void ReportStore(const CheckCommand& command, const SessionId& session, const StoreViolation& v) {
  if (command.json) {
    boost::json::object out{{"session", session.str()},
                            {"invariant", std::string(1, v.letter)},
                            {"cursor", FormatCursor(v.cursor)},
                            {"message", v.message}};
    fmt::print("{}\n", boost::json::serialize(out));
  } else {
    fmt::print("{}: {} at {}: {}\n", session.str(), v.letter, FormatCursor(v.cursor), v.message);
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
    auto loaded = LoadEvents(log, session);
    if (!loaded.ok()) {
      fmt::print(stderr, "{}: {}\n", session.str(), loaded.status().ToString());
      ++unreadable;
      continue;
    }
    checked_events += loaded->events.size();
    for (const auto& violation : timeline::CheckInvariants(loaded->events, options)) {
      Report(command, session, violation);
      ++violations;
    }
    std::vector<StoreViolation> found;
    if (auto grants = log.coordination().OwnershipHistory(session); grants.ok()) {
      found = CheckOwnership(*loaded, *grants);
    } else {
      fmt::print(stderr, "{}: {}\n", session.str(), grants.status().ToString());
      ++unreadable;
    }
    if (!command.allow_open)
      for (StoreViolation& v : CheckStatus(*loaded)) found.push_back(std::move(v));
    for (const StoreViolation& v : found) {
      ReportStore(command, session, v);
      ++violations;
    }
  }
  fmt::print(stderr, "checked {} sessions, {} events: {} violations, {} unreadable\n",
             sessions.size(), checked_events, violations, unreadable);
  return violations == 0 && unreadable == 0 ? 0 : 1;
}

}  // namespace agentstream::cli
