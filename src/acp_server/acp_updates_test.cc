// The event -> session/update mapping (docs/acp.md's table), one event kind at a time, and the
// permission request and answer.
#include "acp_server/acp_updates.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/utf8.h"

namespace agentstream::acp_server {
namespace {

namespace json = boost::json;

class MapperTest : public ::testing::Test {
 protected:
  // Maps `payload` as the next event of the session (seq 1, 2, ...), in turn "turn_1".
  std::vector<json::object> Map(Payload payload) {
    Event e;
    e.session = SessionId("ses_1");
    e.epoch = Epoch(1);
    e.seq = Seq(++seq_);
    e.turn = TurnId("turn_1");
    e.payload = std::move(payload);
    return mapper_.Map(e);
  }
  static const json::object& Update(const json::object& params) {
    return params.at("update").as_object();
  }
  static std::string Str(const json::object& o, std::string_view key) {
    return std::string(o.at(key).as_string());
  }

  std::uint64_t seq_ = 0;
  UpdateMapper mapper_{"ses_1", SessionSettings{}};
};

TEST_F(MapperTest, AssistantTextIsAMessageChunkKeyedByItsTimelineItem) {
  EXPECT_TRUE(Map(AssistantMessageStart{MessageId("m1")}).empty());
  auto out = Map(AssistantMessageDelta{MessageId("m1"), "Hello"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Str(out[0], "sessionId"), "ses_1");
  const json::object& u = Update(out[0]);
  EXPECT_EQ(Str(u, "sessionUpdate"), "agent_message_chunk");
  EXPECT_EQ(Str(u, "messageId"), "a:m1");
  EXPECT_EQ(u.at("content"), (json::value{{"type", "text"}, {"text", "Hello"}}));
  const json::object& meta = out[0].at("_meta").at("agentstream").as_object();
  EXPECT_EQ(Str(meta, "cursor"), "1:2");
  EXPECT_EQ(Str(meta, "kind"), "assistant.message.delta");
  EXPECT_EQ(Str(meta, "turn"), "turn_1");
  EXPECT_TRUE(Map(AssistantMessageEnd{MessageId("m1"), "end_turn"}).empty());
}

TEST_F(MapperTest, ReasoningIsAThoughtChunkAndUserMessagesCarryTheirImages) {
  auto thought = Map(Reasoning{MessageId("m2"), "hmm"});
  ASSERT_EQ(thought.size(), 1u);
  EXPECT_EQ(Str(Update(thought[0]), "sessionUpdate"), "agent_thought_chunk");
  EXPECT_EQ(Str(Update(thought[0]), "messageId"), "r:m2");

  UserMessage user{MessageId("u1"), "c1", "look", {}};
  user.attachments.push_back(Attachment{"image", "image/png", std::nullopt, std::nullopt, "iVBO"});
  auto out = Map(user);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Str(Update(out[0]), "sessionUpdate"), "user_message_chunk");
  EXPECT_EQ(Str(Update(out[0]), "messageId"), "#2");
  EXPECT_EQ(Update(out[1]).at("content"),
            (json::value{{"type", "image"}, {"mimeType", "image/png"}, {"data", "iVBO"}}));
}

TEST_F(MapperTest, AToolCallStartsRunningStreamsItsOutputAndEnds) {
  auto start = Map(ToolCallStart{ToolCallId("call_1"), "Bash", std::nullopt,
                                 json::object{{"command", "ls"}}, std::nullopt});
  ASSERT_EQ(start.size(), 1u);
  const json::object& s = Update(start[0]);
  EXPECT_EQ(Str(s, "sessionUpdate"), "tool_call");
  EXPECT_EQ(Str(s, "toolCallId"), "call_1");
  EXPECT_EQ(Str(s, "title"), "Bash: ls");
  EXPECT_EQ(Str(s, "kind"), "execute");
  EXPECT_EQ(Str(s, "status"), "in_progress");
  EXPECT_EQ(s.at("rawInput"), (json::value{{"command", "ls"}}));

  auto output = Map(ToolCallOutput{ToolCallId("call_1"), "a\n", false});
  Map(ToolCallOutput{ToolCallId("call_1"), "b\n", false});
  ASSERT_EQ(output.size(), 1u);
  EXPECT_EQ(Str(Update(output[0]), "sessionUpdate"), "tool_call_update");

  auto end = Map(
      ToolCallEnd{ToolCallId("call_1"), ToolCallStatus::kFailed, std::nullopt, false, "exit 1"});
  ASSERT_EQ(end.size(), 1u);
  const json::object& e = Update(end[0]);
  EXPECT_EQ(Str(e, "status"), "failed");
  const json::array& content = e.at("content").as_array();
  ASSERT_EQ(content.size(), 2u);  // the output so far, then the error
  EXPECT_EQ(content[0].at("content").at("text"), "a\nb\n");
  EXPECT_EQ(content[1].at("content").at("text"), "exit 1");
  EXPECT_EQ(
      e.at("rawOutput"),
      (json::value{
          {"output", "a\nb\n"}, {"truncated", false}, {"state", "failed"}, {"error", "exit 1"}}));
}

TEST_F(MapperTest, ToolOutputIsBoundedAsTheTimelineBoundsIt) {
  Map(ToolCallStart{ToolCallId("c"), "Read", std::nullopt, json::object{}, std::nullopt});
  const std::string piece(40 * 1024, 'x');
  Map(ToolCallOutput{ToolCallId("c"), piece, false});
  auto out = Map(ToolCallOutput{ToolCallId("c"), piece, false});
  const std::string text(Update(out[0]).at("content").at(0).at("content").at("text").as_string());
  EXPECT_LE(text.size(), kMaxToolOutputBytes);
  EXPECT_GE(text.size(), piece.size());
}

TEST_F(MapperTest, AnEndOfACallNeverStartedAnnouncesIt) {
  auto out =
      Map(ToolCallEnd{ToolCallId("late"), ToolCallStatus::kCompleted, "done", false, std::nullopt});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Str(Update(out[0]), "sessionUpdate"), "tool_call");
  EXPECT_EQ(Str(Update(out[0]), "status"), "completed");
}

TEST_F(MapperTest, OpenToolCallsAreBounded) {
  for (std::size_t i = 0; i <= UpdateMapper::kMaxOpenTools; ++i)
    Map(ToolCallStart{ToolCallId("c" + std::to_string(i)), "Bash", std::nullopt, json::object{},
                      std::nullopt});
  // The oldest was forgotten: its end announces it anew; the newest is still known.
  auto oldest = Map(ToolCallOutput{ToolCallId("c0"), "x", false});
  EXPECT_EQ(Str(Update(oldest[0]), "sessionUpdate"), "tool_call");
  auto newest = Map(ToolCallOutput{ToolCallId("c1024"), "x", false});
  EXPECT_EQ(Str(Update(newest[0]), "sessionUpdate"), "tool_call_update");
}

TEST_F(MapperTest, APermissionMakesItsCallPendingUntilResolved) {
  Map(ToolCallStart{ToolCallId("call_2"), "Bash", std::nullopt, json::object{}, std::nullopt});
  PermissionRequested request{RequestId("req_1"),
                              ToolCallId("call_2"),
                              "Run touch?",
                              "Bash",
                              json::object{{"command", "touch x"}},
                              {{"allow", PermissionOptionKind::kAllowOnce, "Allow"},
                               {"deny", PermissionOptionKind::kRejectOnce, "Deny"}}};
  auto asked = Map(request);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(Str(Update(asked[0]), "sessionUpdate"), "tool_call_update");
  EXPECT_EQ(Str(Update(asked[0]), "toolCallId"), "call_2");
  EXPECT_EQ(Str(Update(asked[0]), "status"), "pending");
  auto allowed = Map(PermissionResolved{RequestId("req_1"), PermissionDecision::kAllow, "allow"});
  ASSERT_EQ(allowed.size(), 1u);
  EXPECT_EQ(Str(Update(allowed[0]), "status"), "in_progress");

  const json::object params = mapper_.PermissionParams(request);
  EXPECT_EQ(params.at("toolCall").at("toolCallId"), "call_2");
  EXPECT_EQ(params.at("options").at(1),
            (json::value{{"optionId", "deny"}, {"name", "Deny"}, {"kind", "reject_once"}}));
}

TEST_F(MapperTest, APermissionWithoutACallIsACallOfItsOwn) {
  PermissionRequested request{RequestId("req_9"), std::nullopt, "Fetch?", "WebFetch", nullptr, {}};
  auto asked = Map(request);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(Str(Update(asked[0]), "sessionUpdate"), "tool_call");
  EXPECT_EQ(Str(Update(asked[0]), "toolCallId"), "req_9");
  EXPECT_EQ(Str(Update(asked[0]), "kind"), "fetch");
  auto denied = Map(PermissionResolved{RequestId("req_9"), PermissionDecision::kDeny});
  EXPECT_EQ(Str(Update(denied[0]), "status"), "failed");
  // Without options of its own, the editor is offered allow and deny.
  const json::object params = mapper_.PermissionParams(request);
  const json::array& options = params.at("options").as_array();
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(options[0].at("optionId"), "allow");
}

TEST_F(MapperTest, PlansModesAndModels) {
  auto plan = Map(Plan{{{"write tests", PlanEntryStatus::kInProgress, std::nullopt},
                        {"ship", PlanEntryStatus::kPending, "high"}}});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(
      Update(plan[0]).at("entries"),
      (json::value{{{"content", "write tests"}, {"priority", "medium"}, {"status", "in_progress"}},
                   {{"content", "ship"}, {"priority", "high"}, {"status", "pending"}}}));
  auto mode = Map(ModeChanged{"plan"});
  ASSERT_EQ(mode.size(), 2u);
  EXPECT_EQ(Update(mode[0]).at("currentModeId"), "plan");
  EXPECT_EQ(Str(Update(mode[1]), "sessionUpdate"), "config_option_update");
  auto model = Map(ModelChanged{"opus"});
  ASSERT_EQ(model.size(), 1u);
  const json::array& options = Update(model[0]).at("configOptions").as_array();
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(options[0].at("id"), "model");
  EXPECT_EQ(options[0].at("currentValue"), "opus");
  EXPECT_EQ(options[1].at("currentValue"), "plan");
}

TEST_F(MapperTest, TheRuntimesListsAreOfferedToTheEditor) {
  (void)Map(ModeChanged{"default"});
  auto listed = Map(CapabilitiesChanged{{Choice{"default", "Ask"}, Choice{"plan", "Plan only"}},
                                        {Choice{"opus", "Opus"}, Choice{"haiku", ""}},
                                        {Choice{"off", "Off"}, Choice{"on", "On"}},
                                        {CommandInfo{"compact", "Summarise"}}});
  ASSERT_EQ(listed.size(), 2u);
  const json::object& commands = Update(listed[0]);
  EXPECT_EQ(Str(commands, "sessionUpdate"), "available_commands_update");
  EXPECT_EQ(commands.at("availableCommands"),
            (json::array{{{"name", "compact"}, {"description", "Summarise"}}}));
  const json::array& options = Update(listed[1]).at("configOptions").as_array();
  ASSERT_EQ(options.size(), 2u);  // no model is current yet: no model select
  EXPECT_EQ(options[0].at("id"), "mode");
  EXPECT_EQ(options[0].at("options"), (json::array{{{"value", "default"}, {"name", "Ask"}},
                                                   {{"value", "plan"}, {"name", "Plan only"}}}));
  EXPECT_EQ(options[1].at("id"), "thinking");
  EXPECT_EQ(options[1].at("category"), "thought_level");
  EXPECT_EQ(options[1].at("currentValue"), "off");  // the runtime's default: the first
  auto thinking = Map(ThinkingOptionChanged{"on"});
  ASSERT_EQ(thinking.size(), 1u);
  EXPECT_EQ(Update(thinking[0]).at("configOptions").as_array()[1].at("currentValue"), "on");
  // A model the log names that the lists lack is still offered.
  auto model = Map(ModelChanged{"custom"});
  const json::array& models =
      Update(model[0]).at("configOptions").as_array()[0].at("options").as_array();
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[1].at("name"), "haiku");  // no label: its id
  EXPECT_EQ(models[2].at("value"), "custom");
}

TEST_F(MapperTest, ErrorsNoticesAndFailedTurnsAreMessagesOfTheirOwn) {
  auto error = Map(ErrorEvent{"rate_limited", "slow down", false});
  EXPECT_EQ(Update(error[0]).at("content").at("text"), "Error (rate_limited): slow down");
  EXPECT_EQ(Update(error[0]).at("messageId"), "#1");
  auto failed = Map(TurnFailed{"daemon_restarted", "the daemon restarted"});
  EXPECT_EQ(Update(failed[0]).at("messageId"), "#2");
  auto notice = Map(Notice{NoticeLevel::kWarning, "low disk"});
  EXPECT_EQ(Update(notice[0]).at("content").at("text"), "Warning: low disk");
}

TEST_F(MapperTest, KindsWithoutAnUpdateMapToNothing) {
  EXPECT_TRUE(Map(TurnStarted{}).empty());
  EXPECT_TRUE(Map(TurnCompleted{"end_turn"}).empty());
  EXPECT_TRUE(Map(TurnCanceled{"interrupted"}).empty());
  EXPECT_TRUE(Map(PromptQueued{"c2", "later", {}, std::nullopt}).empty());
  EXPECT_TRUE(Map(PromptCanceled{"c2", "canceled"}).empty());
  EXPECT_TRUE(Map(Usage{10, 20, 0, 0, std::nullopt}).empty());
  EXPECT_TRUE(Map(ProviderMetadata{"claude", "system", json::object{}}).empty());
  EXPECT_TRUE(Map(SessionCreated{"scripted", "/tmp", std::nullopt, "m", "default"}).empty());
  // ... but the creation told the mapper the session's settings.
  EXPECT_EQ(mapper_.settings().model, "m");
  auto titled = Map(SessionCreated{"scripted", "/tmp", "refactor", std::nullopt, std::nullopt});
  EXPECT_EQ(Update(titled[0]).at("title"), "refactor");
}

TEST(PermissionAnswer, ReadsTheOptionByItsKind) {
  PermissionRequested request{RequestId("r"),
                              std::nullopt,
                              "t",
                              std::nullopt,
                              nullptr,
                              {{"yes", PermissionOptionKind::kAllowAlways, "Always"},
                               {"no", PermissionOptionKind::kRejectOnce, "No"}}};
  auto selected = [](std::string id) {
    return json::value{{"outcome", {{"outcome", "selected"}, {"optionId", id}}}};
  };
  auto allow = ReadPermissionAnswer(request, selected("yes"));
  ASSERT_TRUE(allow.ok());
  EXPECT_TRUE(allow->allow);
  EXPECT_EQ(allow->option_id.value_or(""), "yes");
  auto deny = ReadPermissionAnswer(request, selected("no"));
  ASSERT_TRUE(deny.ok());
  EXPECT_FALSE(deny->allow);
  auto cancelled =
      ReadPermissionAnswer(request, json::value{{"outcome", {{"outcome", "cancelled"}}}});
  ASSERT_TRUE(cancelled.ok());
  EXPECT_FALSE(cancelled->allow);
  EXPECT_FALSE(ReadPermissionAnswer(request, selected("maybe")).ok());
  EXPECT_FALSE(ReadPermissionAnswer(request, json::value{{"outcome", "selected"}}).ok());
  EXPECT_FALSE(ReadPermissionAnswer(request, nullptr).ok());
}

TEST(ToolKinds, FollowTheToolName) {
  EXPECT_EQ(ToolKindFor("Bash"), "execute");
  EXPECT_EQ(ToolKindFor("read_file"), "read");
  EXPECT_EQ(ToolKindFor("MultiEdit"), "edit");
  EXPECT_EQ(ToolKindFor("Grep"), "search");
  EXPECT_EQ(ToolKindFor("mystery"), "other");
}

}  // namespace
}  // namespace agentstream::acp_server
