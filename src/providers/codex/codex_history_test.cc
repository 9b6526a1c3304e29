// The codex history mapping on turns recorded from `thread/turns/list` of codex-cli 0.171.0
// (itemsView "full", against the scripted model server): a tool round and an interrupted turn.
#include "providers/codex/codex_history.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace agentstream::providers::codex {
namespace {

namespace json = boost::json;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)

// The page's turns as codex returned them (newest first), whitespace added.
constexpr char kPage[] = R"([
 {"id":"01a22b1b-5ee8-7372-bee6-5f8ca55c8ffb","rootTurnId":"01a22b1b-5ee8-7372-bee6-5f8ca55c8ffb",
  "items":[{"type":"userMessage","id":"01a22b1b-5f1d-7d22-89ec-073156e32b31","clientId":null,
    "content":[{"type":"text","text":"[slow 40] go","text_elements":[]}],
    "startedAtMs":1796019543841,"completedAtMs":1796019543841}],
  "itemsView":"full","status":"interrupted","error":null,"startedAt":1796019543,
  "completedAt":1796019544,"durationMs":404},
 {"id":"01a22b1b-5b32-79a0-a79b-b931c582bc8c","rootTurnId":"01a22b1b-5b32-79a0-a79b-b931c582bc8c",
  "items":[
   {"type":"userMessage","id":"01a22b1b-5bdc-7ff3-aefd-cc4385ff80df","clientId":null,
    "content":[{"type":"text","text":"[shell echo hi]","text_elements":[]}],
    "startedAtMs":1796019543007,"completedAtMs":1796019543007},
   {"type":"agentMessage","moderation":null,"id":"msg_scripted_1_0","text":"Running it.",
    "phase":null,"memoryCitation":null,"delivery":null,"questions":null,
    "startedAtMs":1796019543196,"completedAtMs":1796019543196},
   {"type":"commandExecution","id":"call_scripted_1_14973","pluginId":null,"scriptPath":null,
    "command":"/bin/bash -lc 'echo hi'","cwd":"/tmp/resume-work/run1796019541118/work",
    "processId":"52456","source":"unifiedExecStartup","status":"completed",
    "commandActions":[{"type":"unknown","command":"echo hi"}],"aggregatedOutput":"hi\n",
    "exitCode":0,"durationMs":85,"startedAtMs":1796019543485,"completedAtMs":1796019543571},
   {"type":"agentMessage","moderation":null,"id":"msg_scripted_2_0","text":"Tool finished: hi",
    "phase":null,"memoryCitation":null,"delivery":null,"questions":null,
    "startedAtMs":1796019543710,"completedAtMs":1796019543710}],
  "itemsView":"full","status":"completed","error":null,"startedAt":1796019542,
  "completedAt":1796019543,"durationMs":890}
])";

std::vector<ProviderEvent> Map(const json::array& turns_newest_first) {
  std::vector<ProviderEvent> out;
  for (auto it = turns_newest_first.rbegin(); it != turns_newest_first.rend(); ++it)
    AppendTurnHistory(it->as_object(), out);
  return out;
}

TEST(CodexHistory, RecordedTurnsMapToTheLiveEventsOldestFirst) {
  const std::vector<ProviderEvent> events = Map(json::parse(kPage).as_array());
  ASSERT_EQ(events.size(), 10u);
  const auto& echo = std::get<ProviderUserEcho>(events[0]);
  EXPECT_EQ(echo.text, "[shell echo hi]");
  EXPECT_EQ(echo.message_id->str(), "01a22b1b-5bdc-7ff3-aefd-cc4385ff80df");
  EXPECT_EQ(std::get<ProviderMessageStart>(events[1]).message_id.str(), "msg_scripted_1_0");
  EXPECT_EQ(std::get<ProviderTextDelta>(events[2]).text, "Running it.");
  EXPECT_EQ(std::get<ProviderMessageStop>(events[3]).message_id.str(), "msg_scripted_1_0");
  const auto& start = std::get<ProviderToolStart>(events[4]);
  EXPECT_EQ(start.call_id.str(), "call_scripted_1_14973");
  EXPECT_EQ(start.name, "commandExecution");
  EXPECT_EQ(start.title.value_or(""), "/bin/bash -lc 'echo hi'");
  const auto& end = std::get<ProviderToolEnd>(events[5]);
  EXPECT_EQ(end.call_id.str(), "call_scripted_1_14973");
  EXPECT_EQ(end.status, ToolCallStatus::kCompleted);
  EXPECT_EQ(end.output.value_or(""), "hi\n");
  EXPECT_EQ(std::get<ProviderTextDelta>(events[7]).text, "Tool finished: hi");
  EXPECT_TRUE(std::holds_alternative<ProviderMessageStop>(events[8]));
  // The interrupted turn kept only its prompt (codex does not store the cut-off answer).
  EXPECT_EQ(std::get<ProviderUserEcho>(events[9]).text, "[slow 40] go");
}

TEST(CodexHistory, ToolStatusesAndOddItems) {
  auto end_of = [](const char* text) { return ToolEndOf(json::parse(text).as_object()); };
  EXPECT_EQ(end_of(R"({"id":"a","status":"completed"})").status, ToolCallStatus::kCompleted);
  EXPECT_EQ(end_of(R"({"id":"a"})").status, ToolCallStatus::kCompleted);  // e.g. webSearch
  EXPECT_EQ(end_of(R"({"id":"a","status":"inProgress"})").status, ToolCallStatus::kCanceled);
  const ProviderToolEnd declined = end_of(R"({"id":"a","status":"declined"})");
  EXPECT_EQ(declined.status, ToolCallStatus::kFailed);
  EXPECT_EQ(declined.error.value_or(""), "declined");

  std::vector<ProviderEvent> out;
  AppendItemHistory(json::parse(R"({"type":"agentMessage","text":"no id"})").as_object(), out);
  AppendItemHistory(
      json::parse(R"({"type":"reasoning","id":"r","summary":[],"content":[]})").as_object(), out);
  EXPECT_TRUE(out.empty());  // no id: skipped; reasoning without text: nothing
  AppendItemHistory(
      json::parse(R"({"type":"reasoning","id":"r","summary":["thinking"],"content":[]})")
          .as_object(),
      out);
  AppendItemHistory(json::parse(R"({"type":"agentMessage","id":"m","text":""})").as_object(), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(std::get<ProviderReasoningDelta>(out[0]).text, "thinking");
  EXPECT_TRUE(std::holds_alternative<ProviderMessageStart>(out[1]));  // an empty message: no delta
  EXPECT_TRUE(std::holds_alternative<ProviderMessageStop>(out[2]));
}

}  // namespace
}  // namespace agentstream::providers::codex
