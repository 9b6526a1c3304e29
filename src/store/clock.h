// Internal to the store module: the wall clock that stamps committed events.
#pragma once

#include "system/wall_clock.h"

namespace agentstream::store_internal {

// Milliseconds since the Unix epoch (system/wall_clock.h).
using system::WallClockMs;

}  // namespace agentstream::store_internal
