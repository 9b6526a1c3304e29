// Test support: builds stored events of one epoch and reads them back as a RawEventReader.
#pragma once

#include <vector>

#include "core/event.h"
#include "core/timeline/pager.h"

namespace agentstream::timeline::testing {

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
