// ScheduleRoutes: the schedules' API (docs/automation.md, "Schedules"), one home for what HTTP,
// the WebSocket protocol and MCP answer:
//   GET    /v1/schedules               {"schedules": [schedule]}
//   POST   /v1/schedules               a definition (schedules.h) -> 201 schedule
//   GET    /v1/schedules/{id}          schedule with "firings": its last firings (?firings=N,
//                                      1 to 100, default 20), with each fired turn's outcome read
//                                      from the agent's log
//   POST   /v1/schedules/{id}/pause    schedule
//   POST   /v1/schedules/{id}/resume   schedule
//   DELETE /v1/schedules/{id}          {"ok": true}
//
// Threading: every method from any thread; each blocks for the store round trips it makes.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/http_types.h"
#include "store/event_log.h"
#include "system/wall_clock.h"

namespace agentstream::server {

class Scheduler;

class ScheduleRoutes {
 public:
  // The firings `Show` lists by default.
  static constexpr std::size_t kShownFirings = 20;

  // `log` and `scheduler` (may be null: nothing fires, e.g. a test) outlive the routes.
  // `floor_ms`: the shortest time between two ticks a new schedule may have.
  ScheduleRoutes(EventLog& log, Scheduler* scheduler, std::int64_t floor_ms,
                 system::WallClock clock = {});

  // Handles the requests above (true); leaves any other (false).
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg,
              const std::function<void(HttpResponse)>& reply);

  // kInvalidArgument for a bad definition (ParseSchedule), kAlreadyExists for a taken id,
  // kResourceExhausted past kMaxSchedules.
  Result<boost::json::object> Create(const boost::json::value& definition);
  Result<boost::json::array> List();
  Result<boost::json::object> Show(const std::string& id, std::size_t firings = kShownFirings);
  Result<boost::json::object> SetPaused(const std::string& id, bool paused);
  Status Delete(const std::string& id);

 private:
  TimestampMs Now() const;
  Result<boost::json::object> View(const ScheduleRecord& record);
  // "completed", "failed", "canceled" or "running", from the agent's newest events; "" when the
  // turn is not among them.
  std::string TurnOutcome(const std::string& agent, const std::string& turn);

  EventLog& log_;
  Scheduler* scheduler_;
  std::int64_t floor_ms_;
  system::WallClock clock_;
};

}  // namespace agentstream::server
