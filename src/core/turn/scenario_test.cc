// Runs every scenario file of tests/scenarios/: provider events and commands in; expected log,
// timeline and status out; the turn invariants (docs/timeline.md) checked after each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/turn/scenario_runner.h"

namespace agentstream::turn::testing {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(AGENTSTREAM_SCENARIO_DIR))
    if (entry.path().extension() == ".json") out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, MatchesExpectations) {
  std::ifstream in(std::string(AGENTSTREAM_SCENARIO_DIR) + "/" + GetParam());
  std::stringstream text;
  text << in.rdbuf();
  Result<ScenarioRun> run = RunScenario(text.str());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  for (const std::string& problem : run->problems) ADD_FAILURE() << GetParam() << ": " << problem;
}

INSTANTIATE_TEST_SUITE_P(Files, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(ScenarioRunner, ReportsAMismatch) {
  // The runner itself must fail a wrong expectation, or every scenario would pass vacuously.
  const std::string text = R"({"inputs":[{"type":"submit","clientMessageId":"c1","text":"hi"}],
    "expect":{"log":["turn.started@turn_1"],"status":"idle","openTurnsAtTail":true}})";
  Result<ScenarioRun> run = RunScenario(text);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->problems.size(), 2u);  // the log has a user message too; the status is running
}

TEST(ScenarioRunner, RejectsUnknownInputType) {
  Result<ScenarioRun> run = RunScenario(R"({"inputs":[{"type":"nope"}],"expect":{}})");
  EXPECT_EQ(run.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace agentstream::turn::testing
