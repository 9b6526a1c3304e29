// The system's wall clock, read in one place.
//
// A module that takes time for decisions (leases, TTLs, cursors, signatures) accepts a WallClock
// so that its tests can set the time by hand; an empty WallClock stands for WallClockMs.
#pragma once

#include <chrono>
#include <functional>

#include "core/event.h"

namespace agentstream::system {

// Milliseconds since the Unix epoch, by std::chrono::system_clock. Thread-safe.
inline TimestampMs WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A source of milliseconds since the Unix epoch. Empty: WallClockMs.
using WallClock = std::function<TimestampMs()>;

// `clock()` when it is set, else WallClockMs().
inline TimestampMs Now(const WallClock& clock) { return clock ? clock() : WallClockMs(); }

}  // namespace agentstream::system
