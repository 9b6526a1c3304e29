// Internal to the store module: the wall clock that stamps committed events.
#pragma once

#include <chrono>

#include "core/event.h"

namespace agentstream::store_internal {

// Milliseconds since the Unix epoch.
inline TimestampMs WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace agentstream::store_internal
