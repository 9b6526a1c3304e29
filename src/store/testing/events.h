// Test support: the events tests append when any event will do.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "core/event_codec.h"

namespace agentstream::testing {

// An info notice with `text`, in `turn` when one is given.
inline NewEvent Note(const std::string& text, std::optional<TurnId> turn = std::nullopt) {
  return MakeNewEvent(Notice{NoticeLevel::kInfo, text}, std::move(turn));
}

}  // namespace agentstream::testing
