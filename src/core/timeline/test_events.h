// Test support: builds stored events of one epoch and reads them back as a RawEventReader.
#pragma once

#include <string>
#include <vector>

#include "core/event.h"
#include "core/timeline/pager.h"

namespace agentstream::timeline::testing {

// One of nine payloads by `kind` (0..8), on one of 5 messages and 4 tool calls by `key`: the
// random logs of the property tests.
inline Payload RandomPayload(int kind, int key) {
  const MessageId m("m" + std::to_string(key % 5));
  const ToolCallId t("t" + std::to_string(key % 4));
  switch (kind % 9) {
    case 0:
      return UserMessage{MessageId("u"), "c", "prompt"};
    case 1:
      return AssistantMessageStart{m};
    case 2:
      return AssistantMessageDelta{m, "d" + std::to_string(key)};
    case 3:
      return AssistantMessageEnd{m};
    case 4:
      return ToolCallStart{t, "Bash"};
    case 5:
      return ToolCallOutput{t, "o"};
    case 6:
      return ToolCallEnd{t};
    case 7:
      return Usage{};  // an item of its own
    default:
      return Reasoning{m, "r"};
  }
}

// A log under construction: Add() gives each event the next seq of epoch `epoch`.
struct LogBuilder {
  Epoch epoch{1};
  std::vector<Event> events;

  LogBuilder& Add(Payload payload, std::optional<TurnId> turn = std::nullopt) {
    events.push_back(Event{SessionId("s"), epoch, Seq(events.size() + 1), 0, std::move(turn),
                           std::move(payload)});
    return *this;
  }
};

// Reads from a vector and counts what it was asked for.
class VectorReader final : public RawEventReader {
 public:
  explicit VectorReader(const std::vector<Event>& events) : events_(events) {}
  Result<std::vector<Event>> ReadRange(Epoch epoch, Seq first, Seq last) override {
    ++reads;
    std::vector<Event> out;
    for (std::uint64_t s = first.value(); s <= last.value() && s <= events_.size(); ++s) {
      if (s == 0) continue;
      out.push_back(events_[s - 1]);
      ++events_read;
    }
    return out;
  }
  std::size_t reads = 0;
  std::size_t events_read = 0;

 private:
  const std::vector<Event>& events_;
};

}  // namespace agentstream::timeline::testing
