// The stdout parser on lines recorded from the real CLI (testdata/, claude 2.1.197 against the
// scripted model server) and on hand-made edge cases.
#include "providers/claude/claude_parser.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "core/utf8.h"

namespace agentstream::providers::claude {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)

std::vector<std::string> ReadLines(const std::string& name) {
  std::ifstream in(std::string(AGENTSTREAM_CLAUDE_TESTDATA) + "/" + name);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  EXPECT_FALSE(out.empty()) << name;
  return out;
}

struct Parsed {
  std::vector<ProviderEvent> events;
  std::vector<ParsedLine> lines;
};

Parsed ParseAll(const std::vector<std::string>& lines) {
  ClaudeStreamParser parser;
  Parsed out;
  for (const std::string& l : lines) {
    ParsedLine p = parser.Parse(l);
    for (auto& e : p.events) out.events.push_back(e);
    out.lines.push_back(std::move(p));
  }
  return out;
}

template <class T>
std::vector<T> All(const std::vector<ProviderEvent>& events) {
  std::vector<T> out;
  for (const auto& e : events)
    if (const T* t = std::get_if<T>(&e)) out.push_back(*t);
  return out;
}

std::string TextOf(const std::vector<ProviderEvent>& events, const std::string& message) {
  std::string text;
  for (const auto& d : All<ProviderTextDelta>(events))
    if (d.message_id.str() == message) text += d.text;
  return text;
}

TEST(ClaudeParserTest, BackgroundTaskSessionMapsEveryLine) {
  const Parsed p = ParseAll(ReadLines("stdout_background_task.jsonl"));
  ASSERT_TRUE(p.lines[0].control_response.has_value());
  EXPECT_EQ(p.lines[0].control_response->request_id, "req_1");
  EXPECT_TRUE(p.lines[0].control_response->success);
  ASSERT_TRUE(p.lines[1].init.has_value());
  EXPECT_EQ(p.lines[1].init->session_id, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(p.lines[1].init->version, "2.1.197");
  // Three turns: the prompt, the background-sleep prompt, and the one the CLI started itself.
  EXPECT_EQ(All<ProviderTurnBegan>(p.events).size(), 3u);
  const auto results = All<ProviderTurnResult>(p.events);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) EXPECT_EQ(r.outcome, TurnOutcome::kCompleted);
  EXPECT_EQ(TextOf(p.events, "msg_scripted_1_15558"), "Echo: hello there");
  EXPECT_EQ(TextOf(p.events, "msg_scripted_4_15558"), "Background task finished: completed");
  // Streamed text is not repeated from the `assistant` lines.
  EXPECT_EQ(All<ProviderMessageStart>(p.events).size(), 4u);
  EXPECT_EQ(All<ProviderMessageStop>(p.events).size(), 4u);
  const auto tools = All<ProviderToolStart>(p.events);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].name, "Bash");
  EXPECT_EQ(tools[0].call_id.str(), "toolu_scripted_2_15558");
  EXPECT_EQ(tools[0].input.at("run_in_background"), true);
  EXPECT_EQ(tools[0].parent_message_id->str(), "msg_scripted_2_15558");
  const auto ends = All<ProviderToolEnd>(p.events);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].status, ToolCallStatus::kCompleted);
  EXPECT_NE(ends[0].output->find("Command running in background"), std::string::npos);
  const auto started = All<ProviderTaskStarted>(p.events);
  const auto notes = All<ProviderTaskNotification>(p.events);
  ASSERT_EQ(started.size(), 1u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(started[0].task_id, notes[0].task_id);
  EXPECT_EQ(notes[0].status, "completed");
  // task_updated is not mapped: it is kept as metadata, not dropped.
  const auto unknown = All<ProviderUnknown>(p.events);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].type, "system/task_updated");
  EXPECT_EQ(unknown[0].data.at("task_id"), boost::json::value(notes[0].task_id));
}

TEST(ClaudeParserTest, ApiErrorInterruptAndPermission) {
  const Parsed p = ParseAll(ReadLines("stdout_error_interrupt_permission.jsonl"));
  const auto results = All<ProviderTurnResult>(p.events);
  ASSERT_EQ(results.size(), 3u);
  // 1. The model server answered 400: a failed turn, with the synthetic message's text kept.
  EXPECT_EQ(results[0].outcome, TurnOutcome::kFailed);
  EXPECT_EQ(results[0].error_code, "api_error_400");
  EXPECT_NE(results[0].message.find("scripted failure"), std::string::npos);
  EXPECT_EQ(TextOf(p.events, "524d6597-95b8-4706-bc93-e164b72e31f2"),
            "API Error: 400 scripted failure: the model server was told to fail");
  // 2. Interrupted mid-stream: canceled, and the CLI's "[Request interrupted by user]" is a
  //    user message (the engine keeps it as unmatched metadata).
  EXPECT_EQ(results[1].outcome, TurnOutcome::kCanceled);
  const auto echoes = All<ProviderUserEcho>(p.events);
  ASSERT_EQ(echoes.size(), 1u);
  EXPECT_EQ(echoes[0].text, "[Request interrupted by user]");
  // 3. can_use_tool: a permission request keyed by the CLI's request id, with the tool call id.
  const auto perms = All<ProviderPermissionRequest>(p.events);
  ASSERT_EQ(perms.size(), 1u);
  EXPECT_EQ(perms[0].request_id.str(), "2b879bb3-cbb1-44aa-ac82-8ec57169a340");
  EXPECT_EQ(perms[0].call_id->str(), "toolu_scripted_6_15558");
  EXPECT_EQ(perms[0].tool_name, "Bash");
  EXPECT_EQ(perms[0].input.at("command"), "touch x && ls");
  int control_requests = 0;
  for (const auto& l : p.lines) control_requests += l.control_request.has_value();
  EXPECT_EQ(control_requests, 1);
  // The tool result the CLI produced when stdin closed before the answer: a failed tool call.
  const auto ends = All<ProviderToolEnd>(p.events);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].status, ToolCallStatus::kFailed);
  EXPECT_EQ(results[2].outcome, TurnOutcome::kCompleted);
}

TEST(ClaudeParserTest, GarbageIsANonFatalErrorAndBlankLinesAreIgnored) {
  ClaudeStreamParser parser;
  EXPECT_TRUE(parser.Parse("").events.empty());
  EXPECT_TRUE(parser.Parse("   \r").events.empty());
  for (const char* line : {"not json at all", "[1,2,3]", "{\"type\":", "\"str\""}) {
    ParsedLine p = parser.Parse(line);
    ASSERT_EQ(p.events.size(), 1u) << line;
    const auto& err = std::get<ProviderError>(p.events[0]);
    EXPECT_EQ(err.code, "protocol_garbage");
    EXPECT_FALSE(err.fatal);
  }
  ParsedLine big = parser.Oversize(100, 9000000);
  ASSERT_EQ(big.events.size(), 1u);
  EXPECT_EQ(std::get<ProviderError>(big.events[0]).code, "protocol_oversize");
}

TEST(ClaudeParserTest, InvalidUtf8IsRepairedEverywhere) {
  ClaudeStreamParser parser;
  (void)parser.Parse(
      R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}})");
  const std::string line =
      "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\","
      "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok \xC5 \xFF"
      "\"}}}";
  ParsedLine p = parser.Parse(line);
  ASSERT_EQ(p.events.size(), 1u);
  const auto& d = std::get<ProviderTextDelta>(p.events[0]);
  EXPECT_TRUE(IsValidUtf8(d.text));
  EXPECT_EQ(d.text.rfind("ok ", 0), 0u);
  ParsedLine u = parser.Parse("{\"type\":\"mystery\",\"k\xFE\":\"v\xC0\"}");
  ASSERT_EQ(u.events.size(), 1u);
  const auto& unk = std::get<ProviderUnknown>(u.events[0]);
  EXPECT_EQ(unk.type, "mystery");
  const std::string serialized = boost::json::serialize(unk.data);
  EXPECT_TRUE(IsValidUtf8(serialized));
  // Garbage with invalid bytes: the error message is valid UTF-8 too.
  ParsedLine g = parser.Parse("\xFF\xFE garbage");
  EXPECT_TRUE(IsValidUtf8(std::get<ProviderError>(g.events[0]).message));
}

TEST(ClaudeParserTest, UnknownTypesAndSubtypesAreKept) {
  ClaudeStreamParser parser;
  for (const char* line :
       {R"({"type":"rate_limit_event","x":1})", R"({"type":"system","subtype":"api_retry"})",
        R"({"type":"stream_event","event":{"type":"brand_new"}})", R"({"no_type":true})",
        R"({"type":"control_request","request_id":"r9","request":{"subtype":"hook_callback"}})"}) {
    ParsedLine p = parser.Parse(line);
    ASSERT_EQ(p.events.size(), 1u) << line;
    EXPECT_TRUE(std::holds_alternative<ProviderUnknown>(p.events[0])) << line;
  }
}

TEST(ClaudeParserTest, PermissionModeChangesAndCancelRequests) {
  ClaudeStreamParser parser;
  ParsedLine init =
      parser.Parse(R"({"type":"system","subtype":"init","permissionMode":"default"})");
  EXPECT_TRUE(All<ProviderModeChanged>(init.events).empty());  // the initial mode is no change
  ParsedLine st = parser.Parse(
      R"({"type":"system","subtype":"status","status":null,"permissionMode":"acceptEdits"})");
  ASSERT_EQ(All<ProviderModeChanged>(st.events).size(), 1u);
  EXPECT_EQ(All<ProviderModeChanged>(st.events)[0].mode, "acceptEdits");
  EXPECT_TRUE(parser
                  .Parse(R"({"type":"system","subtype":"status","status":"requesting",
      "permissionMode":"acceptEdits"})")
                  .events.empty());
  ParsedLine c = parser.Parse(R"({"type":"control_cancel_request","request_id":"abc"})");
  EXPECT_EQ(c.cancel_request_id, "abc");
  ParsedLine r = parser.Parse(
      R"({"type":"control_response","response":{"subtype":"error","request_id":"req_4","error":"no"}})");
  ASSERT_TRUE(r.control_response.has_value());
  EXPECT_FALSE(r.control_response->success);
  EXPECT_EQ(r.control_response->error, "no");
}

TEST(ClaudeParserTest, ReplayOfOurPromptIsAnEchoWithItsUuid) {
  ClaudeStreamParser parser;
  ParsedLine p = parser.Parse(
      R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello A"}]},)"
      R"("uuid":"aaaaaaaa-0000-4000-8000-000000000002","isReplay":true})");
  EXPECT_EQ(p.replayed_uuid, "aaaaaaaa-0000-4000-8000-000000000002");
  ASSERT_EQ(p.events.size(), 1u);
  const auto& echo = std::get<ProviderUserEcho>(p.events[0]);
  EXPECT_EQ(echo.text, "hello A");
  EXPECT_EQ(echo.message_id->str(), "aaaaaaaa-0000-4000-8000-000000000002");
  // A user line that is no replay (a tool result) sets nothing.
  EXPECT_FALSE(parser.Parse(R"({"type":"user","uuid":"x","message":{"content":"t"}})")
                   .replayed_uuid.has_value());
}

TEST(ClaudeParserTest, ResultCarriesUsageAndErrors) {
  ClaudeStreamParser parser;
  ParsedLine p = parser.Parse(
      R"({"type":"result","subtype":"error_max_turns","is_error":true,"errors":["too many"],
          "usage":{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":2},
          "total_cost_usd":0.5})");
  EXPECT_TRUE(p.turn_result);
  ASSERT_EQ(p.events.size(), 2u);
  const auto& u = std::get<ProviderUsage>(p.events[0]).usage;
  EXPECT_EQ(u.input_tokens, 7);
  EXPECT_EQ(u.cache_read_tokens, 2);
  EXPECT_EQ(u.cost_usd, 0.5);
  const auto& r = std::get<ProviderTurnResult>(p.events[1]);
  EXPECT_EQ(r.outcome, TurnOutcome::kFailed);
  EXPECT_EQ(r.error_code, "error_max_turns");
  EXPECT_EQ(r.message, "too many");
}

}  // namespace
}  // namespace agentstream::providers::claude
