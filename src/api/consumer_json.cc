#include "api/consumer_json.h"

#include <algorithm>

#include "core/ids.h"

namespace agentstream::api {

namespace json = boost::json;

ConsumerLag SummarizeLag(const consumers::ConsumerState& state) {
  ConsumerLag lag;
  for (const consumers::SessionProgress& p : state.sessions) {
    lag.events = std::max(lag.events, p.lag_events);
    lag.seconds = std::max(lag.seconds, p.lag_seconds);
    lag.parked += p.parked ? 1 : 0;
  }
  return lag;
}

json::object ConsumerStateToJson(const consumers::ConsumerState& state) {
  json::array sessions;
  for (const consumers::SessionProgress& p : state.sessions) {
    json::object s{{"session", p.session.str()},   {"position", FormatCursor(p.position)},
                   {"tail", FormatCursor(p.tail)}, {"lagEvents", p.lag_events},
                   {"lagSeconds", p.lag_seconds},  {"parked", p.parked},
                   {"attempts", p.attempts},       {"generation", p.generation},
                   {"leaseOwner", p.lease_owner}};
    if (!p.last_error.empty()) s["lastError"] = p.last_error;
    sessions.push_back(std::move(s));
  }
  const ConsumerLag lag = SummarizeLag(state);
  return json::object{{"id", state.spec.id.str()},
                      {"spec", consumers::ConsumerSpecToJson(state.spec, /*redact_secret=*/true)},
                      {"deliveries", state.deliveries},
                      {"eventsDelivered", state.events_delivered},
                      {"failures", state.failures},
                      {"parked", lag.parked},
                      {"lagEvents", lag.events},
                      {"lagSeconds", lag.seconds},
                      {"sessions", std::move(sessions)}};
}

}  // namespace agentstream::api
