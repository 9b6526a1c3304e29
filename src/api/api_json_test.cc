#include "api/api_json.h"
#include "api/workspace_json.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace agentstream::api {
namespace {

namespace json = boost::json;

json::value Parse(std::string_view text) {
  auto parsed = ParseJson(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : json::value();
}

TEST(ApiJsonTest, ParseJsonRefusesMalformedAndOversizedText) {
  EXPECT_EQ(ParseJson("{\"a\":").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseJson("[1,2,3]", 3).status().code(), ErrorCode::kTooLarge);
  EXPECT_TRUE(ParseJson("[1,2,3]", 7).ok());
}

TEST(ApiJsonTest, AgentConfigRoundTripsAndValidates) {
  AgentConfig config{"scripted", "/tmp/x", "m1", std::nullopt, "demo"};
  auto decoded = AgentConfigFromJson(AgentConfigToJson(config));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->provider, "scripted");
  EXPECT_EQ(decoded->cwd, "/tmp/x");
  EXPECT_EQ(decoded->model, "m1");
  EXPECT_FALSE(decoded->mode.has_value());
  EXPECT_EQ(decoded->title, "demo");

  auto missing = AgentConfigFromJson(Parse(R"({"cwd":"/"})"));
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(), "provider is missing");
  auto wrong = AgentConfigFromJson(Parse(R"({"provider":"x","cwd":"/","model":3})"));
  EXPECT_EQ(wrong.status().message(), "model must be a string");
  EXPECT_EQ(AgentConfigFromJson(Parse("[]")).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ApiJsonTest, AgentSnapshotHasTheDocumentedShapeAndRoundTrips) {
  AgentSnapshot s;
  s.id = SessionId("ses_1");
  s.provider = "scripted";
  s.cwd = "/w";
  s.title = "t";
  s.status = turn::SessionStatus::kPermission;
  s.active_turn = TurnId("turn_2");
  s.cursor = Cursor{Epoch(2), Seq(17)};
  s.queue.push_back({"c9", "later"});
  s.permissions.push_back({RequestId("r1"), ToolCallId("call1"), "Bash"});
  s.created_ms = 1700000000000;
  s.forked_from = HistoryBase{SessionId("ses_0"), Epoch(1), Seq(4)};
  s.loaded = true;

  json::object obj = AgentSnapshotToJson(s);
  EXPECT_EQ(obj.at("status"), "permission");
  EXPECT_EQ(obj.at("cursor"), "2:17");
  EXPECT_EQ(obj.at("activeTurn"), "turn_2");
  EXPECT_EQ(json::serialize(obj.at("forkedFrom")), R"({"agent":"ses_0","cursor":"1:4"})");
  EXPECT_EQ(json::serialize(obj.at("queue")), R"([{"clientMessageId":"c9","text":"later"}])");
  EXPECT_EQ(json::serialize(obj.at("permissions")),
            R"([{"requestId":"r1","toolName":"Bash","callId":"call1"}])");

  auto back = AgentSnapshotFromJson(obj);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->id, s.id);
  EXPECT_EQ(back->status, s.status);
  EXPECT_EQ(back->active_turn, s.active_turn);
  EXPECT_EQ(back->cursor, s.cursor);
  ASSERT_EQ(back->queue.size(), 1u);
  EXPECT_EQ(back->queue[0].text, "later");
  ASSERT_EQ(back->permissions.size(), 1u);
  EXPECT_EQ(back->permissions[0].call_id, ToolCallId("call1"));
  EXPECT_EQ(back->created_ms, s.created_ms);
  EXPECT_EQ(back->forked_from, s.forked_from);
  EXPECT_TRUE(back->loaded);
  EXPECT_FALSE(back->closed);

  AgentSnapshot idle;
  idle.id = SessionId("ses_2");
  json::object idle_json = AgentSnapshotToJson(idle);
  EXPECT_TRUE(idle_json.at("activeTurn").is_null());
  EXPECT_TRUE(idle_json.at("forkedFrom").is_null());
  EXPECT_EQ(idle_json.at("status"), "idle");

  obj["status"] = "sleeping";
  EXPECT_EQ(AgentSnapshotFromJson(obj).status().message(),
            "status must be one of idle, running, permission, error");
}

TEST(ApiJsonTest, SendRequestValidatesAndDefaultsToQueue) {
  auto plain = SendRequestFromJson(Parse(R"({"text":"hi","clientMessageId":"c1"})"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->while_running, turn::WhileRunning::kQueue);
  EXPECT_EQ(plain->text, "hi");

  auto steer = SendRequestFromJson(Parse(
      R"({"text":"","clientMessageId":"c2","whileRunning":"steer",
          "attachments":[{"kind":"image","mimeType":"image/png","data":"AAAA"}]})"));
  ASSERT_TRUE(steer.ok()) << steer.status().ToString();
  EXPECT_EQ(steer->while_running, turn::WhileRunning::kSteer);
  ASSERT_EQ(steer->attachments.size(), 1u);
  EXPECT_EQ(steer->attachments[0].data, "AAAA");

  auto round = SendRequestFromJson(SendRequestToJson(*steer));
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round->attachments[0].mime_type, "image/png");
  EXPECT_EQ(round->client_message_id, "c2");

  EXPECT_EQ(SendRequestFromJson(Parse(R"({"text":"hi"})")).status().message(),
            "clientMessageId is missing");
  EXPECT_EQ(SendRequestFromJson(Parse(R"({"text":"","clientMessageId":"c"})")).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      SendRequestFromJson(Parse(R"({"text":"x","clientMessageId":"c","whileRunning":"later"})"))
          .status()
          .message(),
      "whileRunning must be one of queue, interrupt, steer");
}

TEST(ApiJsonTest, SendReplyRoundTrips) {
  SendReply reply;
  reply.outcome = turn::SubmissionOutcome::kDuplicate;
  reply.accepted = true;
  reply.turn = TurnId("turn_1");
  reply.cursor = Cursor{Epoch(1), Seq(3)};
  json::object obj = SendReplyToJson(reply);
  EXPECT_EQ(
      json::serialize(obj),
      R"({"accepted":true,"outcome":"duplicate","cursor":"1:3","message":"","turnId":"turn_1"})");
  auto back = SendReplyFromJson(obj);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->outcome, reply.outcome);
  EXPECT_EQ(back->turn, reply.turn);
  EXPECT_EQ(back->cursor, reply.cursor);

  SendReply queued;
  queued.outcome = turn::SubmissionOutcome::kQueued;
  EXPECT_TRUE(SendReplyToJson(queued).at("turnId").is_null());
}

TEST(ApiJsonTest, PermissionReplyNeedsADecision) {
  auto allow =
      PermissionReplyFromJson(Parse(R"({"decision":"allow","optionId":"o1"})"), RequestId("r1"));
  ASSERT_TRUE(allow.ok());
  EXPECT_EQ(allow->decision, PermissionDecision::kAllow);
  EXPECT_EQ(allow->option_id, "o1");
  EXPECT_EQ(allow->request_id, RequestId("r1"));
  EXPECT_EQ(json::serialize(PermissionReplyToJson(*allow)),
            R"({"decision":"allow","optionId":"o1"})");
  EXPECT_EQ(PermissionReplyFromJson(Parse("{}"), RequestId("r1")).status().message(),
            "decision is missing");
  EXPECT_EQ(
      PermissionReplyFromJson(Parse(R"({"decision":"maybe"})"), RequestId("r1")).status().message(),
      "decision must be one of allow, deny");
}

TEST(ApiJsonTest, SmallBodies) {
  EXPECT_EQ(*StringMember(Parse(R"({"mode":"plan"})"), "mode"), "plan");
  EXPECT_EQ(StringMember(Parse(R"({"mode":""})"), "mode").status().code(),
            ErrorCode::kInvalidArgument);
  auto cursor = CursorMember(Parse(R"({"cursor":"3:9"})"), "cursor");
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(*cursor, (Cursor{Epoch(3), Seq(9)}));
  EXPECT_EQ(CursorMember(Parse(R"({"cursor":"3-9"})"), "cursor").status().message(),
            "cursor must be a cursor EPOCH:SEQ, got \"3-9\"");
}

TEST(ApiJsonTest, ErrorsMapToHttpAndBack) {
  const Status status = Error(ErrorCode::kNotFound, "no agent ses_x");
  EXPECT_EQ(json::serialize(ErrorToJson(status)),
            R"({"error":{"code":"not_found","message":"no agent ses_x"}})");
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kTooLarge), 413);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInternal), 500);

  const Status back = ErrorFromJson(ErrorToJson(status), 404);
  EXPECT_EQ(back.code(), ErrorCode::kNotFound);
  EXPECT_EQ(back.message(), "no agent ses_x");
  EXPECT_EQ(ErrorFromJson(json::value("oops"), 503).code(), ErrorCode::kUnavailable);
}

TEST(ApiJsonTest, PageCarriesCursorsAndItems) {
  timeline::Page page;
  page.epoch = Epoch(1);
  page.tail = Seq(9);
  page.has_older = true;
  page.start_cursor = Cursor{Epoch(1), Seq(4)};
  page.end_cursor = Cursor{Epoch(1), Seq(9)};
  timeline::ProjectedItem item;
  item.kind = timeline::ItemKind::kNotice;
  item.key = "#4";
  item.seq_start = Seq(4);
  item.seq_end = Seq(4);
  item.source_seq_ranges = {{Seq(4), Seq(4)}};
  item.body = timeline::NoticeBody{NoticeLevel::kInfo, "hello"};
  page.items.push_back(item);
  json::object obj = PageToJson(page);
  EXPECT_EQ(obj.at("startCursor"), "1:4");
  EXPECT_EQ(obj.at("endCursor"), "1:9");
  EXPECT_EQ(obj.at("hasOlder"), true);
  EXPECT_EQ(obj.at("hasNewer"), false);
  ASSERT_EQ(obj.at("items").as_array().size(), 1u);
  EXPECT_EQ(obj.at("items").as_array()[0].as_object().at("text"), "hello");
  EXPECT_EQ(json::serialize(obj.at("items").as_array()[0].as_object().at("sourceSeqRanges")),
            "[[4,4]]");
}

TEST(WorkspaceJsonTest, TheWorktreeMemberOfACreate) {
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"provider":"p","cwd":"/x"})")));
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"worktree":null})")));
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"worktree":false})")));
  auto defaults = WorktreeRequestFromJson(Parse(R"({"worktree":true})"));
  ASSERT_TRUE(defaults.ok() && *defaults);
  EXPECT_FALSE((*defaults)->branch);
  auto given = WorktreeRequestFromJson(Parse(R"({"worktree":{"branch":"fix/a","base":"main"}})"));
  ASSERT_TRUE(given.ok() && *given);
  EXPECT_EQ((*given)->branch, "fix/a");
  EXPECT_EQ((*given)->base, "main");
  EXPECT_EQ(json::serialize(WorktreeRequestToJson(**given)), R"({"branch":"fix/a","base":"main"})");
  for (const char* bad : {R"({"worktree":3})", R"({"worktree":{"branch":7}})",
                          R"({"worktree":{"base":""}})", R"({"worktree":"x"})"}) {
    EXPECT_EQ(WorktreeRequestFromJson(Parse(bad)).status().code(), ErrorCode::kInvalidArgument)
        << bad;
  }
}

TEST(ApiJsonTest, RequestBodiesRefuseAMemberTheyDoNotDefine) {
  const auto message_of = [](const Status& status) {
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    return status.message();
  };
  EXPECT_EQ(
      message_of(
          AgentConfigFromJson(Parse(R"({"provider":"p","cwd":"/","worktre":true})")).status()),
      "unknown field \"worktre\" in the agent config (known: provider, cwd, model, mode, "
      "title, clientRequestId, worktree)");
  EXPECT_EQ(message_of(WorktreeRequestFromJson(Parse(R"({"worktree":{"brnch":"x"}})")).status()),
            "unknown field \"brnch\" in worktree (known: branch, base)");
  EXPECT_EQ(
      message_of(
          SendRequestFromJson(Parse(R"({"text":"x","clientMessageId":"c","txt":"y"})")).status()),
      "unknown field \"txt\" in the message (known: text, clientMessageId, attachments, "
      "whileRunning)");
  EXPECT_EQ(message_of(SendRequestFromJson(Parse(R"({"clientMessageId":"c","attachments":)"
                                                 R"([{"kind":"k","mimeType":"","size":1}]})"))
                           .status()),
            "unknown field \"size\" in an attachment (known: kind, mimeType, name, uri, data)");
  EXPECT_EQ(message_of(
                PermissionReplyFromJson(Parse(R"({"decision":"allow","why":"x"})"), RequestId("r1"))
                    .status()),
            "unknown field \"why\" in the permission reply (known: decision, optionId, message)");
  EXPECT_EQ(
      message_of(StringBodyFromJson(Parse(R"({"mode":"plan","model":"m"})"), "mode").status()),
      "unknown field \"model\" in the body (known: mode)");
  EXPECT_EQ(message_of(CursorBodyFromJson(Parse(R"({"cursor":"1:2","epoch":1})")).status()),
            "unknown field \"epoch\" in the body (known: cursor)");
  // A long name is quoted cut, on a character boundary.
  const std::string long_name = std::string(70, 'k');
  EXPECT_EQ(message_of(CursorBodyFromJson(Parse(R"({")" + long_name + R"(":1})")).status()),
            "unknown field \"" + std::string(64, 'k') + "...\" in the body (known: cursor)");
}

TEST(ApiJsonTest, AnEnvelopeIsAcceptedBesideABodysOwnMembers) {
  constexpr std::string_view kEnvelope[] = {"type", "id", "agent"};
  const json::value send =
      Parse(R"({"type":"send","id":"1","agent":"a","text":"x","clientMessageId":"c"})");
  EXPECT_EQ(SendRequestFromJson(send).status().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(SendRequestFromJson(send, kEnvelope).ok());
  EXPECT_EQ(SendRequestFromJson(send, kEnvelope)->text, "x");
  const json::value mode = Parse(R"({"type":"mode.set","agent":"a","mode":"plan"})");
  EXPECT_EQ(*StringBodyFromJson(mode, "mode", kEnvelope), "plan");
  // Only a title may be empty ("" clears it).
  EXPECT_FALSE(StringBodyFromJson(Parse(R"({"mode":""})"), "mode").ok());
  EXPECT_EQ(*StringBodyFromJson(Parse(R"({"title":""})"), "title", {}, /*allow_empty=*/true), "");
  EXPECT_EQ(*CursorBodyFromJson(Parse(R"({"type":"fork","cursor":"1:2"})"), kEnvelope),
            (Cursor{Epoch(1), Seq(2)}));
  // What the daemon answers is read leniently: a newer daemon may add members.
  EXPECT_EQ(*StringMember(Parse(R"({"id":"ses_1","newField":1})"), "id"), "ses_1");
  EXPECT_TRUE(SendReplyFromJson(Parse(R"({"cursor":"1:2","extra":true})")).ok());
  // Every encoder's output reads back.
  const AgentConfig config{"p", "/", "m", "plan", "t", "req"};
  json::object create = AgentConfigToJson(config);
  create["worktree"] = WorktreeRequestToJson(workspace::WorktreeRequest{"b", "main"});
  EXPECT_TRUE(AgentConfigFromJson(create).ok());
  EXPECT_TRUE(WorktreeRequestFromJson(create).ok());
  SendRequest request;
  request.text = "x";
  request.client_message_id = "c";
  request.attachments.push_back(Attachment{"image", "image/png", "a", "file:///a", "AAA"});
  EXPECT_TRUE(SendRequestFromJson(SendRequestToJson(request)).ok());
  turn::ReplyPermission reply;
  reply.decision = PermissionDecision::kAllow;
  reply.option_id = "o";
  reply.message = "m";
  EXPECT_TRUE(PermissionReplyFromJson(PermissionReplyToJson(reply), RequestId("r")).ok());
}

TEST(WorkspaceJsonTest, AWorktreeEntryRoundTrips) {
  const workspace::Workspace ws{"/d/worktrees/ses_1", "agentstream/ses_1", "HEAD", "abc", "/r"};
  const json::object out =
      WorktreeToJson(SessionId("ses_1"), ws, workspace::WorktreeState::kMissing, true);
  EXPECT_EQ(out.at("state"), "missing");
  auto back = WorktreeEntryFromJson(out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->agent, SessionId("ses_1"));
  EXPECT_EQ(back->workspace.branch, "agentstream/ses_1");
  EXPECT_EQ(back->workspace.base_commit, "abc");
  EXPECT_EQ(back->state, "missing");
  EXPECT_TRUE(back->closed);
  EXPECT_FALSE(WorktreeEntryFromJson(Parse(R"({"agent":"a"})")).ok());
}

TEST(WorkspaceJsonTest, TheDiffShapeTotalsFilesAndRepairsUtf8) {
  const workspace::Workspace ws{"/w", "b", "HEAD", "c0", "/r"};
  workspace::WorktreeDiff diff;
  diff.against = "HEAD";
  diff.against_commit = "c0";
  diff.text =
      "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-x\n+y\n+\xff\n"
      "diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n";
  diff.truncated = true;
  const json::object out = DiffToJson(SessionId("ses_1"), ws, diff);
  EXPECT_EQ(out.at("additions"), 2);
  EXPECT_EQ(out.at("deletions"), 1);
  EXPECT_EQ(out.at("truncated"), true);
  const json::array& files = out.at("files").as_array();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].at("hunks").at(0).at("lines").at(2), "+\xef\xbf\xbd");
  EXPECT_EQ(files[0].at("hunks").at(0).at("newLines"), 2);
  EXPECT_FALSE(files[0].as_object().contains("oldPath"));
  EXPECT_EQ(files[1].at("status"), "renamed");
  EXPECT_EQ(files[1].at("oldPath"), "old");
  EXPECT_EQ(files[1].at("path"), "new");
}

}  // namespace
}  // namespace agentstream::api
