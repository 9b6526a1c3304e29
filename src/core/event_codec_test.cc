#include "core/event_codec.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/json.hpp>

#include "core/utf8.h"

namespace agentstream {
namespace {

// One instance of every payload kind, with optional fields filled in.
std::vector<Payload> EveryKind() {
  return {
      SessionCreated{"claude", "/work", "t", "sonnet", "plan"},
      SessionForked{SessionId("parent"), Epoch(2), Seq(7)},
      SessionRewound{Epoch(1), Epoch(1), Seq(3)},
      SessionTitled{"Refactor the parser"},
      SessionImported{"claude", "/h/.claude/projects/-w/u.jsonl", "u", 4096, 12, 1,
                      boost::json::object{{"queue-operation", 2}}},
      TurnStarted{TurnOrigin::kAutonomous, std::nullopt, "task-1"},
      TurnCompleted{"end_turn"},
      TurnCanceled{"interrupted"},
      TurnFailed{"provider_exited", "exit 1"},
      UserMessage{MessageId("m1"),
                  "cm1",
                  "hello",
                  {Attachment{"image", "image/png", "a.png", std::nullopt, "iVBOR"}}},
      PromptQueued{"cm2", "next", {}, "interrupt"},
      PromptCanceled{"cm2", "canceled by a client"},
      AssistantMessageStart{MessageId("m2"), MessageId("m1")},
      AssistantMessageDelta{MessageId("m2"), "Hel"},
      AssistantMessageEnd{MessageId("m2"), "end_turn"},
      Reasoning{MessageId("r1"), "thinking"},
      ToolCallStart{ToolCallId("c1"), "shell", "ls", boost::json::object{{"cmd", "ls"}},
                    MessageId("m2")},
      ToolCallOutput{ToolCallId("c1"), "a\nb\n", true},
      ToolCallEnd{ToolCallId("c1"), ToolCallStatus::kFailed, "out", false, "boom"},
      PermissionRequested{RequestId("p1"),
                          ToolCallId("c1"),
                          "Run ls?",
                          "shell",
                          boost::json::object{},
                          {PermissionOption{"o1", PermissionOptionKind::kAllowOnce, "Allow"},
                           PermissionOption{"o2", PermissionOptionKind::kRejectAlways, "Never"}}},
      PermissionResolved{RequestId("p1"), PermissionDecision::kAllow, "o1", std::nullopt},
      Plan{{PlanEntry{"step", PlanEntryStatus::kInProgress, "high"}}},
      ModeChanged{"plan"},
      ModelChanged{"opus"},
      ThinkingOptionChanged{"high"},
      CapabilitiesChanged{{Choice{"default", "Ask"}, Choice{"plan", ""}},
                          {Choice{"opus", "Opus"}},
                          {Choice{"off", "Off"}},
                          {CommandInfo{"compact", "Summarise the conversation"}}},
      Usage{10, 20, 3, 4, 0.25},
      ErrorEvent{"rate_limited", "slow down", false},
      Notice{NoticeLevel::kWarning, "heads up"},
      ProviderMetadata{"claude", "system", boost::json::object{{"x", 1}}},
      AuthorizationRequired{RequestId("a1"), "sign in", "https://example.test/login"},
      AuthorizationCompleted{RequestId("a1"), true},
      SubagentEvent{SessionId("child"), Epoch(1), Seq(4), "assistant.message.delta", TurnId("t9"),
                    boost::json::object{{"messageId", "m"}, {"text", "x"}}},
      WorkspaceCreated{"/data/worktrees/ses_1", "agentstream/ses_1", "HEAD",
                       "0123456789abcdef0123456789abcdef01234567", "/src/repo"},
      WorkspaceRemoved{"/data/worktrees/ses_1", true},
      WorkspaceAction{"merge",
                      "conflict",
                      "agentstream/ses_1",
                      std::nullopt,
                      std::string("main"),
                      std::string("1 file(s) conflict; nothing merged"),
                      {"a.txt"}},
      AutomationFired{"trigger", "issues", "72d3162e", std::string("issues"), {"comment.body"}},
  };
}

TEST(EventCodecTest, EveryKindHasANameAndRoundTrips) {
  const auto payloads = EveryKind();
  EXPECT_EQ(payloads.size(), std::variant_size_v<Payload>);
  for (const Payload& payload : payloads) {
    const EventKind kind = KindOf(payload);
    ASSERT_FALSE(EventKindName(kind).empty());
    EXPECT_EQ(EventKindFromName(EventKindName(kind)), kind);
    const std::string text = EncodePayload(payload);
    auto decoded = DecodePayload(static_cast<std::uint16_t>(kind), kEventFormatVersion, text);
    ASSERT_TRUE(decoded.ok()) << EventKindName(kind) << ": " << decoded.status().ToString();
    EXPECT_EQ(KindOf(*decoded), kind);
    EXPECT_EQ(EncodePayload(*decoded), text) << EventKindName(kind);
  }
}

TEST(EventCodecTest, KindNumbersAreFixed) {
  // Numbers are stored on disk; changing one breaks every existing log.
  EXPECT_EQ(static_cast<int>(EventKind::kSessionCreated), 1);
  EXPECT_EQ(static_cast<int>(EventKind::kSessionImported), 5);
  EXPECT_EQ(static_cast<int>(EventKind::kTurnStarted), 10);
  EXPECT_EQ(static_cast<int>(EventKind::kUserMessage), 20);
  EXPECT_EQ(static_cast<int>(EventKind::kToolCallStart), 30);
  EXPECT_EQ(static_cast<int>(EventKind::kPermissionRequested), 40);
  EXPECT_EQ(static_cast<int>(EventKind::kSubagentEvent), 80);
  EXPECT_EQ(static_cast<int>(EventKind::kWorkspaceCreated), 90);
  EXPECT_EQ(static_cast<int>(EventKind::kWorkspaceRemoved), 91);
  EXPECT_EQ(static_cast<int>(EventKind::kWorkspaceAction), 92);
  EXPECT_EQ(static_cast<int>(EventKind::kAutomationFired), 100);
  EXPECT_EQ(EventKindName(EventKind::kWorkspaceCreated), "workspace.created");
  EXPECT_EQ(EventKindName(EventKind::kAssistantMessageDelta), "assistant.message.delta");
}

TEST(EventCodecTest, OmitsAbsentOptionalFields) {
  EXPECT_EQ(EncodePayload(TurnCompleted{}), "{}");
  EXPECT_EQ(EncodePayload(AssistantMessageStart{MessageId("m"), std::nullopt}),
            R"({"messageId":"m"})");
}

TEST(EventCodecTest, RejectsNewerFormatVersion) {
  auto decoded = DecodePayload(static_cast<std::uint16_t>(EventKind::kNotice),
                               kEventFormatVersion + 1, R"({"level":"info","text":"x"})");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kUnsupportedVersion);
}

TEST(EventCodecTest, NamesTheBadField) {
  const auto kind = static_cast<std::uint16_t>(EventKind::kPermissionRequested);
  auto missing = DecodePayload(kind, 1, R"({"requestId":"p","title":"t","input":{}})");
  EXPECT_TRUE(missing.ok()) << "options may be absent";
  auto bad_enum = DecodePayload(
      kind, 1,
      R"({"requestId":"p","title":"t","input":{},"options":[{"id":"a","kind":"allow_once","label":"A"},{"id":"b","kind":"maybe","label":"B"}]})");
  ASSERT_FALSE(bad_enum.ok());
  EXPECT_EQ(bad_enum.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_enum.status().message().find("options[1].kind"), std::string::npos)
      << bad_enum.status().message();
  auto no_title = DecodePayload(kind, 1, R"({"requestId":"p","input":{}})");
  ASSERT_FALSE(no_title.ok());
  EXPECT_NE(no_title.status().message().find("'title' is missing"), std::string::npos)
      << no_title.status().message();
}

TEST(EventCodecTest, ValidateNewEventChecksSizeKindAndJson) {
  NewEvent ok = MakeNewEvent(Notice{NoticeLevel::kInfo, "hi"});
  EXPECT_TRUE(ValidateNewEvent(ok, 1024).ok());
  EXPECT_EQ(ValidateNewEvent(ok, 4).code(), ErrorCode::kTooLarge);
  NewEvent not_json{EventKind::kNotice, std::nullopt, "{not json"};
  EXPECT_EQ(ValidateNewEvent(not_json, 1024).code(), ErrorCode::kInvalidArgument);
  NewEvent not_object{EventKind::kNotice, std::nullopt, "[1,2]"};
  EXPECT_EQ(ValidateNewEvent(not_object, 1024).code(), ErrorCode::kInvalidArgument);
  NewEvent unknown{static_cast<EventKind>(999), std::nullopt, "{}"};
  EXPECT_EQ(ValidateNewEvent(unknown, 1024).code(), ErrorCode::kInvalidArgument);
  NewEvent invalid_utf8{EventKind::kNotice, std::nullopt, "{\"level\":\"info\",\"text\":\"\xC5\"}"};
  EXPECT_EQ(ValidateNewEvent(invalid_utf8, 1024).code(), ErrorCode::kInvalidArgument);
}

TEST(EventCodecTest, EnvelopeRoundTrips) {
  EventRecord record{SessionId("s1"),
                     Epoch(2),
                     Seq(9),
                     1700000000123,
                     static_cast<std::uint16_t>(EventKind::kTurnStarted),
                     TurnId("t1"),
                     kEventFormatVersion,
                     EncodePayload(TurnStarted{TurnOrigin::kForeground, "cm", std::nullopt})};
  const std::string text = EncodeEnvelope(record);
  auto back = DecodeEnvelope(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->session, record.session);
  EXPECT_EQ(back->cursor(), record.cursor());
  EXPECT_EQ(back->time, record.time);
  EXPECT_EQ(back->kind, record.kind);
  EXPECT_EQ(back->turn, record.turn);
  EXPECT_EQ(back->payload, record.payload);
  auto decoded = DecodeRecord(*back);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::get<TurnStarted>(decoded->payload).client_message_id, "cm");
}

TEST(EventCodecTest, EnvelopeRejectsNewerVersionAndGarbage) {
  auto newer = DecodeEnvelope(
      R"({"v":2,"session":"s","epoch":1,"seq":1,"time":0,"kind":"notice","payload":{}})");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), ErrorCode::kUnsupportedVersion);
  for (const char* bad :
       {"", "[]", "{}", R"({"v":1})",
        R"({"v":1,"session":"s","epoch":1,"seq":1,"time":0,"kind":"nope","payload":{}})",
        R"({"v":1,"session":"s","epoch":-1,"seq":1,"time":0,"kind":"notice","payload":{}})"}) {
    auto decoded = DecodeEnvelope(bad);
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(EventCodecTest, ToEventPlacesANewEventAtItsCursor) {
  auto event = ToEvent(MakeNewEvent(ModeChanged{"plan"}, TurnId("t")), SessionId("s"),
                       Cursor{Epoch(2), Seq(5)}, 42);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->cursor(), (Cursor{Epoch(2), Seq(5)}));
  EXPECT_EQ(event->turn, TurnId("t"));
  EXPECT_EQ(event->time, 42);
  EXPECT_EQ(std::get<ModeChanged>(event->payload).mode, "plan");
  NewEvent bad{EventKind::kModeChanged, std::nullopt, "{}"};
  EXPECT_EQ(ToEvent(bad, SessionId("s"), Cursor{Epoch(1), Seq(1)}).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(EventCodecTest, DecodeRecordReportsDamageAsCorruption) {
  EventRecord record{SessionId("s"),
                     Epoch(1),
                     Seq(1),
                     0,
                     static_cast<std::uint16_t>(EventKind::kNotice),
                     std::nullopt,
                     kEventFormatVersion,
                     "{\"level\":\"info\""};
  auto decoded = DecodeRecord(record);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kCorruption);
}

// Text from agents may hold any bytes; once sanitized it survives encode and decode unchanged.
RC_GTEST_PROP(EventCodecProperty, SanitizedTextRoundTrips, (const std::string& bytes)) {
  const std::string text = SanitizeUtf8(bytes);
  Payload payload = AssistantMessageDelta{MessageId("m"), text};
  auto decoded = DecodePayload(static_cast<std::uint16_t>(EventKind::kAssistantMessageDelta), 1,
                               EncodePayload(payload));
  RC_ASSERT(decoded.ok());
  RC_ASSERT(std::get<AssistantMessageDelta>(*decoded).text == text);
}

}  // namespace
}  // namespace agentstream
