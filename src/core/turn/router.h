// The single routing decision point (docs/timeline.md, "Routing: one decision point"): which
// turn a normalized provider event belongs to. Pure and deterministic: no timing windows, no
// heuristics.
//
// Order:
//   1. metadata events belong to no turn;
//   2. while a foreground run is open it owns every non-metadata event, except events whose
//      identifiers name a turn that already ended (late events: recorded with no turn);
//   3. else by identifier: task id, parent message id, message id, tool call id, request id;
//      an identifier of an open run routes there, of a recently closed run marks the event late;
//   4. else the newest open autonomous run (same background task or none named);
//   5. else content opens a new autonomous turn; anything else is recorded with no turn.
#pragma once

#include <optional>
#include <string>

#include "core/turn/provider_event.h"
#include "core/turn/turn_state.h"

namespace agentstream::turn {

enum class RouteKind {
  kMetadata,       // belongs to no turn by nature
  kTurn,           // belongs to the open run `turn`
  kLate,           // its identifiers name a turn that ended: recorded with no turn
  kNewAutonomous,  // opens a new autonomous turn
  kUnowned,        // nothing claims it and it cannot open a turn: recorded with no turn
};
std::string_view RouteKindName(RouteKind kind);

struct RouteDecision {
  RouteKind kind = RouteKind::kUnowned;
  std::optional<TurnId> turn;  // for kTurn, and the ended turn for kLate
};

RouteDecision Route(const TurnState& state, const ProviderEvent& event);

}  // namespace agentstream::turn
