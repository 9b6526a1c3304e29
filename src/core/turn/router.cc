#include "core/turn/router.h"

namespace agentstream::turn {

namespace {

template <class Map, class Key>
std::optional<TurnId> Lookup(const Map& map, const std::optional<Key>& key) {
  if (!key) return std::nullopt;
  auto it = map.find(*key);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

// The turn named by the first identifier (in priority order) that any index knows.
std::optional<TurnId> KeyedTurn(const TurnState& state, const RouteKeys& keys) {
  if (auto t = Lookup(state.by_task, keys.task_id)) return t;
  if (auto t = Lookup(state.by_message, keys.parent_message_id)) return t;
  if (auto t = Lookup(state.by_message, keys.message_id)) return t;
  if (auto t = Lookup(state.by_call, keys.call_id)) return t;
  if (auto t = Lookup(state.by_request, keys.request_id)) return t;
  return std::nullopt;
}

}  // namespace

std::string_view RouteKindName(RouteKind kind) {
  switch (kind) {
    case RouteKind::kMetadata:
      return "metadata";
    case RouteKind::kTurn:
      return "turn";
    case RouteKind::kLate:
      return "late";
    case RouteKind::kNewAutonomous:
      return "new_autonomous";
    case RouteKind::kUnowned:
      return "unowned";
  }
  return "unknown";
}

RouteDecision Route(const TurnState& state, const ProviderEvent& event) {
  if (IsMetadata(event)) return {RouteKind::kMetadata, std::nullopt};
  const RouteKeys keys = RouteKeysOf(event);
  const std::optional<TurnId> keyed = KeyedTurn(state, keys);
  const bool keyed_open = keyed && state.open.count(*keyed) > 0;
  if (keyed && !keyed_open) return {RouteKind::kLate, keyed};
  if (state.foreground) return {RouteKind::kTurn, state.foreground};
  if (keyed_open) return {RouteKind::kTurn, keyed};
  if (const Run* newest = NewestAutonomous(state)) {
    const bool other_task = keys.task_id && newest->task_id && *keys.task_id != *newest->task_id;
    if (!other_task || !OpensAutonomousTurn(event)) return {RouteKind::kTurn, newest->id};
  }
  if (OpensAutonomousTurn(event)) return {RouteKind::kNewAutonomous, std::nullopt};
  return {RouteKind::kUnowned, std::nullopt};
}

}  // namespace agentstream::turn
