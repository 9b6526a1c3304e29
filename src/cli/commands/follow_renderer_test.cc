#include "cli/commands/follow_renderer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands/edit_diff.h"

namespace agentstream::cli {
namespace {

// Builds records of one session in log order.
class Log {
 public:
  EventRecord Add(const Payload& payload, const char* turn = "t1") {
    EventRecord record;
    record.session = SessionId("ses_1");
    record.epoch = Epoch(1);
    record.seq = Seq(++seq_);
    record.kind = static_cast<std::uint16_t>(KindOf(payload));
    if (turn != nullptr) record.turn = TurnId(turn);
    record.payload = EncodePayload(payload);
    return record;
  }

 private:
  std::uint64_t seq_ = 0;
};

std::string RenderAll(FollowRenderer& renderer, const std::vector<EventRecord>& records) {
  std::string out;
  for (const auto& record : records) out += renderer.Render(record);
  return out + renderer.CloseLine();
}

ToolCallStart Shell(const char* id, const char* command) {
  return ToolCallStart{ToolCallId(id), "shell", std::nullopt,
                       boost::json::object{{"command", command}}, std::nullopt};
}

ToolCallEnd End(const char* id, ToolCallStatus status = ToolCallStatus::kCompleted,
                std::optional<std::string> error = std::nullopt) {
  return ToolCallEnd{ToolCallId(id), status, std::nullopt, false, std::move(error)};
}

TEST(FollowRendererTest, StreamsAssistantTextIntoOneParagraph) {
  Log log;
  FollowRenderer renderer({});
  const std::vector<EventRecord> turn = {
      log.Add(TurnStarted{TurnOrigin::kForeground, "c1", std::nullopt}),
      log.Add(UserMessage{MessageId("u1"), "c1", "hi", {}}),
      log.Add(AssistantMessageStart{MessageId("m1"), std::nullopt}),
      log.Add(AssistantMessageDelta{MessageId("m1"), "Hel"}),
      log.Add(AssistantMessageDelta{MessageId("m1"), "lo"}),
      log.Add(AssistantMessageEnd{MessageId("m1"), std::nullopt}),
      log.Add(TurnCompleted{std::nullopt}),
  };
  EXPECT_EQ(RenderAll(renderer, turn),
            "-- turn t1 started (foreground)\n"
            "> hi\n"
            "Hello\n"
            "-- turn t1 completed\n");
}

TEST(FollowRendererTest, ANewEpochSaysTheHistoryWasRewound) {
  Log log;
  FollowRenderer renderer({});
  EventRecord first = log.Add(Notice{NoticeLevel::kInfo, "before"}, nullptr);
  EventRecord rewound = log.Add(Notice{NoticeLevel::kInfo, "after"}, nullptr);
  rewound.epoch = Epoch(2);
  rewound.seq = Seq(1);
  const std::string out = RenderAll(renderer, {first, rewound});
  EXPECT_NE(out.find("-- history rewound: epoch 2 from seq 1\n"), std::string::npos) << out;
  EXPECT_LT(out.find("before"), out.find("history rewound"));
  EXPECT_LT(out.find("history rewound"), out.find("after"));
}

TEST(FollowRendererTest, AWorktreeIsShownWhenMadeAndWhenRemoved) {
  Log log;
  FollowRenderer renderer({});
  const std::string out =
      RenderAll(renderer, {log.Add(WorkspaceCreated{"/d/worktrees/ses_1", "agentstream/ses_1",
                                                    "main", "0123456789abcdef0123", "/src/app"},
                                   nullptr),
                           log.Add(WorkspaceRemoved{"/d/worktrees/ses_1", true}, nullptr)});
  EXPECT_EQ(out,
            "worktree /d/worktrees/ses_1 on branch agentstream/ses_1 from main (0123456789ab)\n"
            "worktree /d/worktrees/ses_1 removed (changes discarded)\n");
}

TEST(FollowRendererTest, GitActionsAreOneLineEach) {
  Log log;
  FollowRenderer renderer({});
  WorkspaceAction merged{"merge",
                         "fast-forward",
                         "agentstream/ses_1",
                         std::string("0123456789abcdef0123"),
                         std::string("main"),
                         std::nullopt,
                         {}};
  WorkspaceAction conflict{
      "merge",           "conflict",          "agentstream/ses_1",
      std::nullopt,      std::string("main"), std::string("2 file(s) conflict; nothing merged"),
      {"a.txt", "b.txt"}};
  const std::string out =
      RenderAll(renderer, {log.Add(merged, nullptr), log.Add(conflict, nullptr)});
  EXPECT_EQ(out,
            "git merge fast-forward 0123456789ab into main\n"
            "git merge conflict into main: 2 file(s) conflict; nothing merged: a.txt, b.txt\n");
}

TEST(FollowRendererTest, ACompletedFileEditShowsItsChangeAsDiffLines) {
  Log log;
  FollowRenderer renderer({});
  const boost::json::value edit = boost::json::object{
      {"file_path", "/w/a.txt"}, {"old_string", "two\n"}, {"new_string", "TWO\nthree\n"}};
  EXPECT_EQ(renderer.Render(
                log.Add(ToolCallStart{ToolCallId("e1"), "Edit", std::nullopt, edit, std::nullopt})),
            "");
  EXPECT_EQ(renderer.Render(log.Add(End("e1"))),
            "  tool Edit ({\"file_path\":\"/w/a.txt\",\"old_string\":\"two\\n\",\"new_string\":"
            "\"TWO\\nthree\\n\"}): completed\n"
            "    --- /w/a.txt\n"
            "    - two\n"
            "    + TWO\n"
            "    + three\n");
  // A failed edit changed nothing: no diff.
  renderer.Render(
      log.Add(ToolCallStart{ToolCallId("e2"), "Edit", std::nullopt, edit, std::nullopt}));
  EXPECT_EQ(renderer.Render(log.Add(End("e2", ToolCallStatus::kFailed, "no match"))).find("---"),
            std::string::npos);
}

TEST(EditDiffTest, EditsMultiEditsAndWritesOfClaudeAndOpencodeBounded) {
  namespace json = boost::json;
  EXPECT_EQ(EditDiffLines("Write", json::object{{"file_path", "/f"}, {"content", "a\nb"}}),
            (std::vector<std::string>{"--- /f (written)", "+ a", "+ b"}));
  EXPECT_EQ(EditDiffLines("edit",
                          json::object{{"filePath", "/f"}, {"oldString", "x"}, {"newString", "y"}}),
            (std::vector<std::string>{"--- /f", "- x", "+ y"}));
  EXPECT_EQ(
      EditDiffLines(
          "MultiEdit",
          json::object{
              {"file_path", "/f"},
              {"edits", json::array{json::object{{"old_string", "1"}, {"new_string", "2"}},
                                    json::object{{"old_string", "3"}, {"new_string", "4"}}}}}),
      (std::vector<std::string>{"--- /f", "- 1", "+ 2", "- 3", "+ 4"}));
  EXPECT_TRUE(EditDiffLines("Bash", json::object{{"command", "ls"}}).empty());
  EXPECT_TRUE(EditDiffLines("Edit", json::object{{"file_path", "/f"}}).empty());
  EXPECT_TRUE(EditDiffLines("Edit", json::value(3)).empty());
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line\n";
  const auto bounded =
      EditDiffLines("Write", json::object{{"file_path", "/f"}, {"content", many}}, 5, 160);
  ASSERT_EQ(bounded.size(), 6u);
  EXPECT_EQ(bounded.back(), "... 96 more lines");
  const auto cut = EditDiffLines(
      "Write", json::object{{"file_path", "/f"}, {"content", std::string(300, 'x')}}, 24, 10);
  EXPECT_EQ(cut[1], "+ xxxxxxxx...");
}

TEST(EditDiffTest, CodexPatchesAndFileChangesAndAcpDiffs) {
  namespace json = boost::json;
  using Lines = std::vector<std::string>;
  // codex apply_patch, as the argv of its exec command.
  const std::string patch =
      "*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n-    return 1\n+    return 2\n"
      " keep\n*** Add File: b.txt\n+new\n*** Delete File: c.txt\n*** End Patch\n";
  EXPECT_EQ(EditDiffLines("exec", json::object{{"command", json::array{"apply_patch", patch}}}),
            (Lines{"--- src/a.py (update)", "@@ def f():", "-     return 1", "+     return 2",
                   "  keep", "--- b.txt (add)", "+ new", "--- c.txt (delete)"}));
  EXPECT_EQ(EditDiffLines("apply_patch", json::object{{"input", patch}}).size(), 8u);
  // codex file changes: a list with unified diffs, or an object keyed by path.
  EXPECT_EQ(EditDiffLines(
                "fileChange",
                json::object{
                    {"changes", json::array{json::object{
                                    {"path", "/w/x.ts"},
                                    {"kind", json::object{{"type", "update"}}},
                                    {"diff", "--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-a\n+b\n"}}}}}),
            (Lines{"--- /w/x.ts (update)", "@@ -1 +1 @@", "- a", "+ b"}));
  EXPECT_EQ(EditDiffLines(
                "fileChange",
                json::object{
                    {"changes",
                     json::object{{"/w/n.md", json::object{{"type", "add"}, {"content", "hi"}}}}}}),
            (Lines{"--- /w/n.md (add)", "+ hi"}));
  // ACP diff content items, in the input's content or as the input itself.
  EXPECT_EQ(
      EditDiffLines("edit", json::object{{"content", json::array{json::object{{"type", "text"}},
                                                                 json::object{{"type", "diff"},
                                                                              {"path", "/w/y"},
                                                                              {"oldText", "o"},
                                                                              {"newText", "n"}}}}}),
      (Lines{"--- /w/y", "- o", "+ n"}));
  EXPECT_EQ(EditDiffLines("write", json::object{{"path", "/w/z"}, {"newText", "all"}}),
            (Lines{"--- /w/z (written)", "+ all"}));
  // Not edits, or malformed: nothing.
  EXPECT_TRUE(EditDiffLines("exec", json::object{{"command", json::array{"ls", "-l"}}}).empty());
  EXPECT_TRUE(EditDiffLines("fileChange", json::object{{"changes", json::array{7, "x"}}}).empty());
  EXPECT_TRUE(EditDiffLines("edit", json::object{{"content", json::array{json::object{
                                                                 {"type", "diff"}, {"path", 3}}}}})
                  .empty());
}

TEST(FollowRendererTest, DeltaIsAppendedWithoutANewline) {
  Log log;
  FollowRenderer renderer({});
  EXPECT_EQ(renderer.Render(log.Add(AssistantMessageDelta{MessageId("m1"), "a"})), "a");
  EXPECT_EQ(renderer.Render(log.Add(AssistantMessageDelta{MessageId("m1"), "b"})), "b");
  // Another message starts a new paragraph.
  EXPECT_EQ(renderer.Render(log.Add(AssistantMessageDelta{MessageId("m2"), "c"})), "\nc");
  EXPECT_EQ(renderer.CloseLine(), "\n");
  EXPECT_EQ(renderer.CloseLine(), "");
}

TEST(FollowRendererTest, ToolCallIsOneLineWhenItEndsWithoutATerminal) {
  Log log;
  FollowRenderer renderer({});
  EXPECT_EQ(renderer.Render(log.Add(Shell("c1", "ls"))), "");
  EXPECT_EQ(renderer.Render(log.Add(ToolCallOutput{ToolCallId("c1"), "a\nb\n", false})), "");
  EXPECT_EQ(renderer.Render(log.Add(End("c1"))), "  tool shell (ls): completed\n");
  EXPECT_EQ(renderer.Render(log.Add(Shell("c2", "rm x"))), "");
  EXPECT_EQ(renderer.Render(log.Add(End("c2", ToolCallStatus::kFailed, "denied"))),
            "  tool shell (rm x): failed: denied\n");
}

TEST(FollowRendererTest, OnATerminalTheRunningLineIsRewrittenInPlace) {
  Log log;
  FollowRenderer renderer({.tty = true});
  EXPECT_EQ(renderer.Render(log.Add(Shell("c1", "ls"))),
            "\033[2m  tool shell (ls): running\033[0m");
  EXPECT_EQ(renderer.Render(log.Add(End("c1"))),
            "\r\033[2K\033[32m  tool shell (ls): completed\033[0m\n");
}

TEST(FollowRendererTest, OnATerminalOutputBetweenStartAndEndKeepsBothLines) {
  Log log;
  FollowRenderer renderer({.tty = true});
  renderer.Render(log.Add(Shell("c1", "ls")));
  EXPECT_EQ(renderer.Render(log.Add(AssistantMessageDelta{MessageId("m1"), "x"})), "\nx");
  EXPECT_EQ(renderer.Render(log.Add(End("c1", ToolCallStatus::kCanceled))),
            "\n\033[33m  tool shell (ls): canceled\033[0m\n");
}

TEST(FollowRendererTest, ToolEndWithoutItsStartStillShowsALine) {
  Log log;
  FollowRenderer renderer({});
  EXPECT_EQ(renderer.Render(log.Add(End("c9"))), "  tool ? (c9): completed\n");
}

TEST(FollowRendererTest, ReasoningIsPrefixedAndDimmedOnATerminal) {
  Log log;
  FollowRenderer plain({});
  FollowRenderer tty({.tty = true});
  const auto r1 = log.Add(Reasoning{MessageId("r1"), "think"});
  const auto r2 = log.Add(Reasoning{MessageId("r1"), "ing"});
  const auto text = log.Add(AssistantMessageDelta{MessageId("m1"), "done"});
  EXPECT_EQ(RenderAll(plain, {r1, r2, text}), "(thinking) thinking\ndone\n");
  EXPECT_EQ(RenderAll(tty, {r1, r2, text}),
            "\033[2m(thinking) \033[0m\033[2mthink\033[0m\033[2ming\033[0m\ndone\n");
}

TEST(FollowRendererTest, PermissionShowsTheAnswerCommandsAndIsTracked) {
  Log log;
  FollowRenderer renderer({.agent = "ses_1"});
  const std::string text = renderer.Render(
      log.Add(PermissionRequested{RequestId("p1"), ToolCallId("c1"), "Run rm x", "shell", {}, {}}));
  EXPECT_EQ(text,
            "permission p1: Run rm x [shell]\n"
            "  answer: agentstream approve ses_1 p1   or   agentstream deny ses_1 p1\n");
  ASSERT_EQ(renderer.pending().size(), 1u);
  EXPECT_EQ(renderer.pending().front(), (PendingRequest{"p1", "Run rm x"}));
  EXPECT_EQ(renderer.Render(log.Add(PermissionResolved{RequestId("p1"), PermissionDecision::kDeny,
                                                       std::nullopt, "not now"})),
            "permission p1: denied: not now\n");
  EXPECT_TRUE(renderer.pending().empty());
}

TEST(FollowRendererTest, ToolNameEqualToTheTitleIsNotRepeated) {
  Log log;
  FollowRenderer renderer({.agent = "ses_1"});
  const std::string text =
      renderer.Render(log.Add(PermissionRequested{RequestId("p1"), {}, "Bash", "Bash", {}, {}}));
  EXPECT_TRUE(text.starts_with("permission p1: Bash\n")) << text;
}

TEST(FollowRendererTest, InteractiveModeOffersTheInlineAnswer) {
  Log log;
  FollowRenderer renderer({.agent = "ses_1", .interactive = true});
  const std::string text =
      renderer.Render(log.Add(PermissionRequested{RequestId("p1"), {}, "Edit", {}, {}, {}}));
  EXPECT_NE(text.find("type a (allow) or d (deny)"), std::string::npos) << text;
}

TEST(FollowRendererTest, PendingRequestsAreBounded) {
  Log log;
  FollowRenderer renderer({});
  for (std::size_t i = 0; i <= FollowRenderer::kMaxPending; ++i) {
    renderer.Render(
        log.Add(PermissionRequested{RequestId("p" + std::to_string(i)), {}, "t", {}, {}, {}}));
  }
  EXPECT_EQ(renderer.pending().size(), FollowRenderer::kMaxPending);
  EXPECT_EQ(renderer.pending().front().request_id, "p1");  // the oldest was forgotten
}

TEST(FollowRendererTest, TurnOutcomesAreShown) {
  Log log;
  FollowRenderer renderer({});
  EXPECT_EQ(renderer.Render(log.Add(TurnStarted{TurnOrigin::kAutonomous, {}, "task7"}, "t2")),
            "-- turn t2 started (autonomous, task task7)\n");
  EXPECT_EQ(renderer.Render(log.Add(TurnCanceled{"interrupted"}, "t2")),
            "-- turn t2 canceled: interrupted\n");
  EXPECT_EQ(renderer.Render(log.Add(TurnFailed{"daemon_restarted", "the daemon restarted"}, "t3")),
            "-- turn t3 failed: daemon_restarted: the daemon restarted\n");
}

TEST(FollowRendererTest, AnUndecodablePayloadIsAWarningNotAStop) {
  Log log;
  FollowRenderer renderer({});
  EventRecord bad = log.Add(Notice{NoticeLevel::kInfo, "x"});
  bad.payload = "{\"level\":5}";
  const std::string text = renderer.Render(bad);
  EXPECT_TRUE(text.starts_with("! 1:1 notice: ")) << text;
  EXPECT_EQ(renderer.Render(log.Add(Notice{NoticeLevel::kWarning, "careful"}, nullptr)),
            "warning: careful\n");
}

TEST(FollowRendererTest, PlainModeWritesNoEscapeSequences) {
  Log log;
  FollowRenderer renderer({});
  const std::string text = RenderAll(
      renderer, {log.Add(TurnStarted{TurnOrigin::kForeground, "c1", std::nullopt}),
                 log.Add(Reasoning{MessageId("r"), "hm"}), log.Add(Shell("c1", "ls")),
                 log.Add(End("c1", ToolCallStatus::kFailed, "x")),
                 log.Add(ErrorEvent{"boom", "bad", true}), log.Add(TurnFailed{"boom", "bad"})});
  EXPECT_EQ(text.find('\033'), std::string::npos) << text;
  EXPECT_NE(text.find("error boom: bad (fatal)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace agentstream::cli
