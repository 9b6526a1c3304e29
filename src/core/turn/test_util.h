// Test support for the turn engine: drive inputs, keep the log as stored events.
#pragma once

#include <vector>

#include "core/turn/engine.h"
#include "core/turn/scenario_runner.h"

namespace agentstream::turn::testing {

// A session under test: the engine state, the log it appended and the effects of the last step.
struct Harness {
  TurnState state;
  SequentialTurnIds ids;
  std::vector<Event> log;
  std::vector<Effect> effects;  // of the last step
  Status status;                // of the last step

  Harness() { state.provider = "test"; }

  Harness& Feed(const EngineInput& input) {
    Step step = Advance(std::move(state), input, ids);
    state = std::move(step.state);
    status = step.status;
    effects = std::move(step.effects);
    AppendToLog(step.events, log);
    return *this;
  }
  Harness& Cmd(const Command& c) { return Feed(EngineInput(c)); }
  Harness& Prov(const ProviderEvent& e) { return Feed(EngineInput(e)); }

  template <class T>
  std::vector<const T*> Payloads() const {
    std::vector<const T*> out;
    for (const Event& e : log)
      if (const auto* p = std::get_if<T>(&e.payload)) out.push_back(p);
    return out;
  }
  template <class T>
  std::vector<const T*> EffectsOf() const {
    std::vector<const T*> out;
    for (const Effect& e : effects)
      if (const auto* p = std::get_if<T>(&e)) out.push_back(p);
    return out;
  }
};

}  // namespace agentstream::turn::testing
