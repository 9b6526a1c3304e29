#include "providers/claude/claude_protocol.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <regex>
#include <sstream>

namespace agentstream::providers::claude {
namespace {

namespace json = boost::json;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)

TEST(ClaudeProtocolTest, ArgvPinsOrResumesTheSession) {
  LaunchOptions o;
  o.program = "/x/claude";
  o.session_id = "abc";
  o.model = "m";
  auto argv = BuildArgv(o);
  EXPECT_EQ(argv.front(), "/x/claude");
  const std::string joined = [&] {
    std::string s;
    for (auto& a : argv) s += a + " ";
    return s;
  }();
  EXPECT_NE(joined.find("--output-format stream-json --verbose --input-format stream-json "
                        "--permission-prompt-tool stdio --include-partial-messages "
                        "--replay-user-messages --session-id abc --model m"),
            std::string::npos);
  o.resume = true;
  argv = BuildArgv(o);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--resume"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--session-id"), argv.end());
}

TEST(ClaudeProtocolTest, EnvAddsOfflineSafetyAndDropsNodeOptions) {
  LaunchOptions o;
  o.env = {"HOME=/h", "NODE_OPTIONS=--inspect", "DISABLE_TELEMETRY=0"};
  auto env = BuildEnv(o);
  auto has = [&](const std::string& e) {
    return std::find(env.begin(), env.end(), e) != env.end();
  };
  EXPECT_TRUE(has("HOME=/h"));
  EXPECT_TRUE(has("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"));
  EXPECT_TRUE(has("DISABLE_TELEMETRY=0"));  // an explicit value wins
  EXPECT_FALSE(has("NODE_OPTIONS=--inspect"));
}

TEST(ClaudeProtocolTest, StdinLinesAreSingleLineJson) {
  const std::string user = UserMessageLine("two\nlines \"quoted\"");
  EXPECT_EQ(user.find('\n'), std::string::npos);
  json::value v = json::parse(user);
  EXPECT_EQ(v.at("type"), "user");
  EXPECT_EQ(v.at("message").at("content").at(0).at("text"), "two\nlines \"quoted\"");
  EXPECT_FALSE(v.as_object().contains("uuid"));
  EXPECT_EQ(json::parse(UserMessageLine("x", "u-1")).at("uuid"), "u-1");
  v = json::parse(InterruptLine("req_2"));
  EXPECT_EQ(v.at("request").at("subtype"), "interrupt");
  EXPECT_EQ(v.at("request_id"), "req_2");
  v = json::parse(PermissionAllowLine("r1", json::object{{"command", "ls"}}, "toolu_1"));
  EXPECT_EQ(v.at("response").at("request_id"), "r1");
  EXPECT_EQ(v.at("response").at("response").at("behavior"), "allow");
  EXPECT_EQ(v.at("response").at("response").at("updatedInput").at("command"), "ls");
  v = json::parse(PermissionDenyLine("r1", "no"));
  EXPECT_EQ(v.at("response").at("response").at("behavior"), "deny");
  v = json::parse(SetPermissionModeLine("req_3", "acceptEdits"));
  EXPECT_EQ(v.at("request").at("mode"), "acceptEdits");
}

TEST(ClaudeProtocolTest, TranscriptPathAndNewUuid) {
  EXPECT_EQ(TranscriptPath("/h", "/tmp/cl1/work", "s1"),
            "/h/.claude/projects/-tmp-cl1-work/s1.jsonl");
  const std::string a = NewSessionUuid(), b = NewSessionUuid();
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::regex_match(
      a, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
}

TEST(ClaudeProtocolTest, RecordedTranscriptGivesTheHistory) {
  std::ifstream in(std::string(AGENTSTREAM_CLAUDE_TESTDATA) + "/transcript_background_task.jsonl");
  std::stringstream buf;
  buf << in.rdbuf();
  // A transcript being written may end with a partial line: it is skipped.
  const auto events = ParseTranscript(buf.str() + "{\"type\":\"assist");
  std::vector<std::string> prompts;
  std::map<std::string, std::string> text;
  int tools = 0, results = 0;
  for (const auto& e : events) {
    if (const auto* u = std::get_if<ProviderUserEcho>(&e)) prompts.push_back(u->text);
    if (const auto* d = std::get_if<ProviderTextDelta>(&e)) text[d->message_id.str()] += d->text;
    tools += std::holds_alternative<ProviderToolStart>(e);
    results += std::holds_alternative<ProviderToolEnd>(e);
  }
  ASSERT_EQ(prompts.size(), 3u);
  EXPECT_EQ(prompts[0], "hello there");
  EXPECT_EQ(prompts[1], "[bg-sleep 1] go");
  EXPECT_EQ(prompts[2].rfind("<task-notification>", 0), 0u);
  EXPECT_EQ(text.size(), 4u);
  EXPECT_EQ(text["msg_scripted_1_15558"], "Echo: hello there");
  EXPECT_EQ(text["msg_scripted_4_15558"], "Background task finished: completed");
  EXPECT_EQ(tools, 1);
  EXPECT_EQ(results, 1);
}

}  // namespace
}  // namespace agentstream::providers::claude
