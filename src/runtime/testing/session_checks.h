// What the runtime's tests read and check of a stored session history.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "core/event.h"
#include "core/timeline/invariants.h"

namespace agentstream::runtime::testing {

// The events of `events` whose payload is a T.
template <class T>
std::vector<const Event*> Of(const std::vector<Event>& events) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (std::holds_alternative<T>(e.payload)) out.push_back(&e);
  return out;
}

// The epoch's seqs are dense from 1 and the turn invariants hold (docs/timeline.md).
inline void ExpectDenseAndValid(const SessionId& id, const std::vector<Event>& events) {
  for (std::size_t i = 0; i < events.size(); ++i)
    ASSERT_EQ(events[i].seq.value(), i + 1) << id.str();
  for (const auto& v : timeline::CheckInvariants(events))
    ADD_FAILURE() << id.str() << ": invariant " << timeline::FormatViolation(v);
}

}  // namespace agentstream::runtime::testing
