#include "mcp_server/mcp_tools.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <deque>
#include <string>
#include <vector>

namespace agentstream::mcp_server {
namespace {

namespace json = boost::json;

// A daemon that records each call and answers from a queue of replies.
struct FakeDaemon {
  struct Call {
    std::string method, target;
    json::value body;
  };
  std::vector<Call> calls;
  std::deque<Result<json::value>> replies;
  std::vector<std::string> waits;  // "agent from client_id timeout_ms"

  ToolEnv Env() {
    ToolEnv env;
    env.call = [this](std::string_view method, const std::string& target,
                      const json::value* body) -> Result<json::value> {
      calls.push_back({std::string(method), target, body ? *body : json::value()});
      if (replies.empty()) return json::value(json::object{});
      Result<json::value> r = std::move(replies.front());
      replies.pop_front();
      return r;
    };
    env.wait = [this](const std::string& agent, const std::string& from, const std::string& id,
                      const std::optional<std::string>&, std::chrono::milliseconds timeout,
                      const std::atomic<bool>*) -> Result<client::TurnEnd> {
      waits.push_back(agent + " " + from + " " + id + " " + std::to_string(timeout.count()));
      return client::TurnEnd{"turn_1", "completed", "end_turn", Cursor{Epoch(1), Seq(9)}};
    };
    return env;
  }
};

Status CallWith(FakeDaemon& d, std::string_view tool, std::string_view args) {
  return CallTool(d.Env(), tool, json::parse(args)).status();
}

TEST(McpTools, BadArgumentsAreRefusedBeforeAnyDaemonCall) {
  FakeDaemon d;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"agents_list", R"({"includeClosed":"yes"})"},
      {"agents_list", R"({"bogus":1})"},
      {"agent_create", R"({"provider":"scripted"})"},
      {"agent_create", R"({"provider":"scripted","cwd":"relative/dir"})"},
      {"agent_create", R"({"provider":"scripted","cwd":"/tmp","notifyParent":""})"},
      {"agent_send", R"({"agent":"a"})"},
      {"agent_send", R"({"agent":"a","text":"hi","timeoutSeconds":0})"},
      {"agent_send", R"({"agent":"a","text":"hi","timeoutSeconds":3601})"},
      {"agent_send", R"({"agent":"a","text":"hi","timeoutSeconds":1.5})"},
      {"agent_send", R"({"agent":"a","text":"hi","whileRunning":"later"})"},
      {"agent_send", R"({"agent":"a","text":"hi","wait":1})"},
      {"agent_timeline", R"({"agent":"a","direction":"before"})"},
      {"agent_timeline", R"({"agent":"a","cursor":"nope"})"},
      {"agent_timeline", R"({"agent":"a","limit":101})"},
      {"agents_search", R"({})"},
      {"agents_search", R"({"query":""})"},
      {"agents_search", R"({"query":"x","limit":51})"},
      {"agents_search", R"({"query":"x","agent":3})"},
      {"agent_last_message", R"({})"},
      {"agent_interrupt", R"({"agent":7})"},
      {"agent_git", R"({"agent":"a"})"},
      {"agent_git", R"({"agent":"a","action":"rebase"})"},
      {"agent_git", R"({"agent":"a","action":"merge","message":"m"})"},
      {"agent_git", R"({"agent":"a","action":"commit","noFastForward":true})"},
      {"agent_git", R"({"agent":"a","action":"push","remote":5})"},
      {"permission_answer", R"({"agent":"a","requestId":"r"})"},
      {"permission_answer", R"({"agent":"a","requestId":"r","decision":"maybe"})"},
      {"no_such_tool", R"({})"},
  };
  for (const auto& [tool, args] : bad) {
    Status s = CallWith(d, tool, args);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << tool << " " << args;
    EXPECT_FALSE(s.message().empty());
  }
  EXPECT_TRUE(d.calls.empty());
}

TEST(McpTools, CreateWithNotifyParentMakesTheAgentThenItsTerminalConsumer) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::object{{"id", "ses_parent"}}));
  d.replies.push_back(json::value(json::object{{"id", "ses_child"}, {"status", "idle"}}));
  auto r = CallTool(d.Env(), "agent_create",
                    json::parse(R"({"provider":"scripted","cwd":"/w","title":"t",
                                    "notifyParent":"ses_parent"})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.calls[0].target, "/v1/agents/ses_parent");  // the parent exists
  EXPECT_EQ(d.calls[1].target, "/v1/agents");
  EXPECT_EQ(d.calls[1].body.at("provider"), "scripted");
  EXPECT_EQ(d.calls[1].body.at("title"), "t");
  EXPECT_TRUE(d.calls[1].body.as_object().contains("clientRequestId"));  // a retry makes one
  EXPECT_EQ(d.calls[2].target, "/v1/consumers");
  const json::value& spec = d.calls[2].body;
  EXPECT_EQ(spec.at("sink").at("kind"), "parent");
  EXPECT_EQ(spec.at("sink").at("parent"), "ses_parent");
  EXPECT_EQ(spec.at("filter").at("sessions"), json::array{"ses_child"});
  EXPECT_EQ(spec.at("filter").at("kinds"),
            (json::array{"turn.completed", "turn.canceled", "turn.failed"}));
  EXPECT_EQ(spec.at("fromNow"), true);
  EXPECT_EQ(r->at("notifyConsumer"), spec.at("id"));
  EXPECT_EQ(r->at("agent").at("id"), "ses_child");
}

// notifyParent: true names the agent the server serves (AGENTSTREAM_AGENT_ID of the CLI that
// started it); without one it is refused before any call; false is no notification.
TEST(McpTools, NotifyParentTrueIsTheCallingAgent) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::object{{"id", "ses_me"}}));
  d.replies.push_back(json::value(json::object{{"id", "ses_child"}}));
  ToolEnv env = d.Env();
  env.calling_agent = "ses_me";
  auto r = CallTool(env, "agent_create",
                    json::parse(R"({"provider":"scripted","cwd":"/w","notifyParent":true})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.calls[0].target, "/v1/agents/ses_me");
  EXPECT_EQ(d.calls[2].body.at("sink").at("parent"), "ses_me");
  EXPECT_EQ(r->at("notifyConsumer"), "mcp-notify.ses_child.ses_me");

  FakeDaemon none;
  Status s = CallWith(none, "agent_send", R"({"agent":"ses_x","text":"hi","notifyParent":true})");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("AGENTSTREAM_AGENT_ID"), std::string::npos) << s.message();
  EXPECT_TRUE(none.calls.empty());

  FakeDaemon off;
  off.replies.push_back(json::value(json::object{{"id", "ses_child"}}));
  auto plain = CallTool(off.Env(), "agent_create",
                        json::parse(R"({"provider":"scripted","cwd":"/w","notifyParent":false})"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(off.calls.size(), 1u);
  EXPECT_FALSE(plain->contains("notifyConsumer"));
  EXPECT_EQ(CallWith(off, "agent_create", R"({"provider":"scripted","cwd":"/w","notifyParent":7})")
                .code(),
            ErrorCode::kInvalidArgument);
}

TEST(McpTools, AnUnknownParentCreatesNothing) {
  FakeDaemon d;
  d.replies.push_back(Error(ErrorCode::kNotFound, "daemon: not_found: no agent ses_gone"));
  Status s = CallWith(d, "agent_create",
                      R"({"provider":"scripted","cwd":"/w","notifyParent":"ses_gone"})");
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].method, "GET");
}

TEST(McpTools, NotifySpecIsStableAndRefusesASelfNotification) {
  auto a = NotifySpec("ses_c", "ses_p"), b = NotifySpec("ses_c", "ses_p");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, *b);  // the same consumer: asking again is idempotent
  EXPECT_EQ(a->at("id"), "mcp-notify.ses_c.ses_p");
  EXPECT_EQ(NotifySpec("x", "x").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(NotifySpec(std::string(120, 'c'), "p").status().code(), ErrorCode::kInvalidArgument);
}

TEST(McpTools, SendWithWaitReadsFromTheTailThenReturnsTheTurnEndAndLastMessage) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::object{{"id", "a"}, {"cursor", "1:4"}}));
  d.replies.push_back(json::value(
      json::parse(R"({"outcome":"accepted","accepted":true,"turn":"turn_1","cursor":"1:5"})")));
  d.replies.push_back(json::value(json::parse(
      R"({"epoch":1,"items":[{"kind":"user_message","text":"hi","seqEnd":5},
          {"kind":"assistant_message","text":"Hello","turn":"turn_1","seqEnd":8},
          {"kind":"tool_call","seqEnd":9}],"hasOlder":false})")));
  auto r = CallTool(d.Env(), "agent_send",
                    json::parse(R"({"agent":"a","text":"hi","wait":true,"timeoutSeconds":5})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.calls[1].target, "/v1/agents/a/messages");
  EXPECT_EQ(d.calls[1].body.at("whileRunning"), "queue");
  ASSERT_EQ(d.waits.size(), 1u);
  EXPECT_EQ(d.waits[0],
            "a 1:4 " + std::string(d.calls[1].body.at("clientMessageId").as_string()) + " 5000");
  EXPECT_EQ(r->at("turnOutcome"), "completed");
  EXPECT_EQ(r->at("endCursor"), "1:9");
  EXPECT_EQ(r->at("lastMessage"), "Hello");
  EXPECT_EQ(r->at("timedOut"), false);
}

TEST(McpTools, LastMessageReadsOlderPagesAndSaysNullWhenThereIsNone) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::parse(
      R"({"epoch":2,"items":[{"kind":"tool_call"}],"hasOlder":true,"startCursor":"2:40"})")));
  d.replies.push_back(json::value(json::parse(
      R"({"epoch":2,"items":[{"kind":"assistant_message","text":"old","seqEnd":3}],
          "hasOlder":false,"startCursor":"2:1"})")));
  auto r = CallTool(d.Env(), "agent_last_message", json::parse(R"({"agent":"a"})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at("text"), "old");
  EXPECT_EQ(r->at("cursor"), "2:3");
  EXPECT_NE(d.calls[1].target.find("direction=before&cursor=2:40"), std::string::npos)
      << d.calls[1].target;

  d.replies.push_back(json::value(json::parse(R"({"epoch":1,"items":[],"hasOlder":false})")));
  auto none = CallTool(d.Env(), "agent_last_message", json::parse(R"({"agent":"a"})"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->at("text").is_null());
}

TEST(McpTools, DaemonErrorsComeBackAsTheyAre) {
  FakeDaemon d;
  d.replies.push_back(Error(ErrorCode::kNotFound, "daemon: not_found: no agent zz"));
  Status s = CallWith(d, "agent_interrupt", R"({"agent":"zz"})");
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_EQ(d.calls.at(0).target, "/v1/agents/zz/interrupt");
}

TEST(McpTools, SettingsSetsWhatIsGivenThenReadsTheAgent) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::object{{"ok", true}}));
  d.replies.push_back(json::value(json::object{{"ok", true}}));
  d.replies.push_back(json::parse(
      R"({"id":"a","mode":"plan","model":"m","thinking":"off","status":"idle",
          "capabilities":{"thinkingOptions":[{"id":"off","label":"Off"}]}})"));
  auto r = CallTool(d.Env(), "agent_settings",
                    json::parse(R"({"agent":"a","thinking":"off","mode":"plan"})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.calls[0].target, "/v1/agents/a/mode");  // mode, model, thinking: in that order
  EXPECT_EQ(d.calls[0].body.at("mode"), "plan");
  EXPECT_EQ(d.calls[1].target, "/v1/agents/a/thinking");
  EXPECT_EQ(d.calls[1].body.at("thinking"), "off");
  EXPECT_EQ(d.calls[2].method, "GET");
  EXPECT_EQ(d.calls[2].target, "/v1/agents/a");
  EXPECT_EQ(r->at("thinking"), "off");
  EXPECT_EQ(r->at("capabilities").at("thinkingOptions").as_array().size(), 1u);
  EXPECT_FALSE(r->contains("status"));  // the settings only

  // A refused setting is the call's error, and nothing after it is asked.
  FakeDaemon refusing;
  refusing.replies.push_back(Error(ErrorCode::kInvalidArgument, "unknown mode loud"));
  EXPECT_EQ(
      CallWith(refusing, "agent_settings", R"({"agent":"a","mode":"loud","model":"m"})").code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusing.calls.size(), 1u);
}

TEST(McpTools, PermissionAnswerPostsTheDecision) {
  FakeDaemon d;
  ASSERT_TRUE(
      CallWith(d, "permission_answer",
               R"({"agent":"a","requestId":"r 1","decision":"allow","optionId":"allow_once"})")
          .ok());
  EXPECT_EQ(d.calls.at(0).target, "/v1/agents/a/permissions/r%201");
  EXPECT_EQ(d.calls.at(0).body.at("decision"), "allow");
  EXPECT_EQ(d.calls.at(0).body.at("optionId"), "allow_once");
}

// Each action posts its own members to its endpoint and answers the daemon's result.
TEST(McpTools, GitPostsTheActionWithItsOwnMembers) {
  FakeDaemon d;
  d.replies.push_back(json::value(json::object{{"outcome", "merged"}, {"commit", "abc"}}));
  auto r =
      CallTool(d.Env(), "agent_git", json::parse(R"({"agent":"a","action":"merge","into":"main",
                                    "noFastForward":true})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->at("outcome"), "merged");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].method, "POST");
  EXPECT_EQ(d.calls[0].target, "/v1/agents/a/git/merge");
  EXPECT_EQ(d.calls[0].body, json::parse(R"({"into":"main","noFastForward":true})"));
  ASSERT_TRUE(
      CallTool(d.Env(), "agent_git", json::parse(R"({"agent":"a","action":"commit"})")).ok());
  EXPECT_EQ(d.calls[1].target, "/v1/agents/a/git/commit");
  EXPECT_EQ(d.calls[1].body, json::object{});
}

}  // namespace
}  // namespace agentstream::mcp_server
