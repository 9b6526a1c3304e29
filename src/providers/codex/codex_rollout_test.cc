// A codex session file read as history: testdata/rollout.jsonl was written by the pinned codex CLI
// (tests/peers) in a session of five prompts against the scripted model server (a reply, a shell
// command allowed, one denied, an interrupted turn, a reply, a recall).
#include "providers/codex/codex_rollout.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace agentstream::providers::codex {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(AGENTSTREAM_SOURCE_DIR) + "/src/providers/codex/testdata/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The history as "user:TEXT", "agent:TEXT", "tool:NAME", "end:OUTPUT", "turn:OUTCOME" entries.
std::vector<std::string> Summary(const std::vector<ProviderEvent>& events) {
  std::vector<std::string> out;
  for (const ProviderEvent& e : events) {
    if (const auto* u = std::get_if<ProviderUserEcho>(&e)) out.push_back("user:" + u->text);
    if (std::holds_alternative<ProviderMessageStart>(e)) out.emplace_back("agent:");
    if (const auto* d = std::get_if<ProviderTextDelta>(&e)) out.back() += d->text;
    if (const auto* t = std::get_if<ProviderToolStart>(&e)) out.push_back("tool:" + t->name);
    if (const auto* t = std::get_if<ProviderToolEnd>(&e))
      out.push_back("end:" + t->output.value_or("").substr(0, 20));
    if (const auto* r = std::get_if<ProviderTurnResult>(&e))
      out.emplace_back(r->outcome == TurnOutcome::kCompleted ? "turn:completed" : "turn:canceled");
  }
  return out;
}

TEST(CodexRollout, ARecordedSessionReadsAsItsTurns) {
  const Rollout r = ParseRollout(Testdata("rollout.jsonl"));
  EXPECT_EQ(r.session_id, "01a246ff-b218-7253-8764-b4f96d51e1a3");
  EXPECT_EQ(r.cwd, "/tmp/acp-probe-codex-bPACw3/work");
  EXPECT_EQ(r.lines, 66u);
  EXPECT_EQ(r.malformed, 0u);
  const std::vector<std::string> summary = Summary(r.events);
  const std::vector<std::string> head = {
      "user:[say hello from codex]",
      "agent:hello from codex",
      "turn:completed",
      "user:[shell touch probe-allow.txt && echo probe-allow-ran]",
      "agent:Running it.",
      "tool:exec_command",
      "end:Chunk ID: e2f647\nWal",
      "agent:Tool finished: probe-allow-ran",
      "turn:completed",
      "user:[shell touch probe-deny.txt && echo probe-deny-ran]",
      "agent:Running it.",
      "tool:exec_command",
      "end:aborted by user afte",
      "turn:canceled",
      "user:[slow 20]",
      "turn:canceled",
      "user:[say after cancel]",
      "agent:after cancel",
      "turn:completed",
  };
  ASSERT_GE(summary.size(), head.size());
  EXPECT_EQ(std::vector<std::string>(summary.begin(), summary.begin() + head.size()), head);
  EXPECT_EQ(summary.back(), "turn:completed");
  // The command's arguments are the tool's JSON input.
  for (const ProviderEvent& e : r.events) {
    if (const auto* t = std::get_if<ProviderToolStart>(&e)) {
      ASSERT_TRUE(t->input.is_object());
      EXPECT_TRUE(t->input.as_object().contains("cmd"));
    }
  }
}

TEST(CodexRollout, BadLinesAreSkippedAndCounted) {
  const std::string text =
      "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s1\",\"cwd\":\"/w\"}}\n"
      "not json\n"
      "\n"
      "[1,2]\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"hi\"}}\n"
      "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\","
      "\"content\":[{\"type\":\"input_text\",\"text\":\"<environment_context>\"}]}}\n"
      "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"output\":\"x\"}"
      "}\n"
      "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"sh\","
      "\"arguments\":\"not json\"}}\n"
      "{\"type\":\"event_msg\",\"payload\":\"not an object\"}\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_compl";  // a line being written
  const Rollout r = ParseRollout(text);
  EXPECT_EQ(r.session_id, "s1");
  EXPECT_EQ(r.lines, 9u);
  EXPECT_EQ(r.malformed, 3u);
  EXPECT_EQ(Summary(r.events), (std::vector<std::string>{"user:hi", "tool:sh"}));
  const auto& tool = std::get<ProviderToolStart>(r.events.back());
  EXPECT_EQ(tool.input, boost::json::value("not json"));
  EXPECT_FALSE(tool.call_id.str().empty());
}

TEST(CodexRollout, ReadingTwiceGivesTheSameIds) {
  const std::string text = Testdata("rollout.jsonl");
  const Rollout a = ParseRollout(text);
  const Rollout b = ParseRollout(text);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    if (const auto* s = std::get_if<ProviderMessageStart>(&a.events[i])) {
      EXPECT_EQ(s->message_id, std::get<ProviderMessageStart>(b.events[i]).message_id);
    }
  }
}

}  // namespace
}  // namespace agentstream::providers::codex
