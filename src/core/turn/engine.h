// The turn engine: the pure state machine between the provider layer and the session log.
//
//   Advance(state, input, ids) -> Step{state', events to append, effects}
//
// Inputs are daemon commands (command.h) and normalized provider events (provider_event.h).
// Every provider event goes through Route() (router.h), the single routing decision point.
// The engine assigns turn ids (from `ids`, never from a provider), records exactly one
// user.message per foreground turn (provider echoes are de-duplicated), gives every turn start
// exactly one terminal, records late events (after their turn's terminal) with no turn, bounds
// tool output to kMaxToolOutputBytes on a UTF-8 boundary, and turns autonomous -> foreground
// atomically (interrupt, await teardown, start).
//
// The owner must append `events` in order (one batch) before executing `effects`, and must feed
// inputs one at a time in the order it serializes them. No I/O, no threads, no clock.
#pragma once

#include <vector>

#include "core/event_codec.h"
#include "core/status.h"
#include "core/turn/command.h"
#include "core/turn/effect.h"
#include "core/turn/turn_state.h"

namespace agentstream::turn {

struct Step {
  TurnState state;
  std::vector<NewEvent> events;  // to append, in order, as one batch
  std::vector<Effect> effects;   // to execute after the append is acknowledged
  // Non-OK when the input was refused (kInvalidArgument: a prompt without a client message id;
  // kNotFound: a permission reply for a request that is not pending). Then `state` is the input
  // state unchanged and `events` and `effects` are empty.
  Status status;
};

[[nodiscard]] Step Advance(TurnState state, const EngineInput& input, TurnIdSource& ids);

}  // namespace agentstream::turn
