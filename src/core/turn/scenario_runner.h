// Test support: runs a scenario file (tests/scenarios/*.json) through the turn engine and checks
// the log, timeline, status and invariants it expects. Format in docs/timeline.md ("Scenario
// files"). Used by scenario_test.cc only.
#pragma once

#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/turn/engine.h"

namespace agentstream::turn::testing {

struct ScenarioRun {
  std::vector<Event> log;       // what the engine appended, with seqs 1.. of epoch 1
  std::vector<Effect> effects;  // every effect, in order
  TurnState state;
  std::vector<std::string> problems;  // mismatches with the expectations; empty when it passes
};

// Parses one input object ({"type": "...", ...}). kInvalidArgument for an unknown type or field.
Result<EngineInput> ParseInput(const boost::json::object& input);

// Runs the scenario text. Errors for malformed files; mismatches are listed in `problems`.
Result<ScenarioRun> RunScenario(const std::string& json_text);

// Converts appended NewEvents to stored Events (session "s", epoch 1, seqs after `log`).
void AppendToLog(const std::vector<NewEvent>& events, std::vector<Event>& log);

}  // namespace agentstream::turn::testing
