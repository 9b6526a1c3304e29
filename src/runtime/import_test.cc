// Importing CLI transcripts (transcript_import.h, AgentManager::Import) over a real SQLite log:
// the history a transcript makes, idempotence, a grown transcript, a line still being written,
// bad lines, an agent that went on here, the listing and the path checks. Every session is checked
// against the turn invariants at the end of each test (the fixture's TearDown).
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using testing::AgentManagerTest;
using testing::Of;

constexpr char kUuid[] = "5d0c2f6e-1b7a-4c1e-9a53-0f4b1c2d3e4f";

// A claude transcript record of `type` in `cwd` ("user" content as text or blocks).
std::string ClaudeLine(const std::string& type, const std::string& uuid,
                       const boost::json::value& content, const std::string& cwd) {
  boost::json::object message{{"role", type}, {"content", content}};
  if (type == "assistant") {
    message["id"] = "msg_" + uuid;
    message["type"] = "message";
    message["model"] = "claude-test";
  }
  return boost::json::serialize(boost::json::object{{"type", type},
                                                    {"uuid", uuid},
                                                    {"sessionId", kUuid},
                                                    {"cwd", cwd},
                                                    {"message", std::move(message)}}) +
         "\n";
}

class ImportTest : public AgentManagerTest {
 protected:
  void SetUp() override {
    AgentManagerTest::SetUp();
    root_ = dir_ / "projects";
    project_ = root_ / "-work";
    std::filesystem::create_directories(project_);
    path_ = (project_ / (std::string(kUuid) + ".jsonl")).string();
  }

  void Write(const std::string& text, bool append = true) {
    std::ofstream out(path_, append ? std::ios::app : std::ios::trunc);
    out << text;
  }

  // A turn: the prompt, a tool call with its result, the answer.
  std::string Turn(const std::string& n, const std::string& prompt) {
    const std::string cwd = dir_.string();
    boost::json::array tool_use{boost::json::object{{"type", "tool_use"},
                                                    {"id", "toolu_" + n},
                                                    {"name", "Bash"},
                                                    {"input", {{"command", "ls"}}}}};
    boost::json::array result{boost::json::object{
        {"type", "tool_result"}, {"tool_use_id", "toolu_" + n}, {"content", "file-" + n}}};
    boost::json::array text{boost::json::object{{"type", "text"}, {"text", "answer " + n}}};
    return ClaudeLine("user", "u" + n, boost::json::value(prompt), cwd) +
           ClaudeLine("assistant", "a" + n, tool_use, cwd) +
           ClaudeLine("user", "r" + n, result, cwd) + ClaudeLine("assistant", "t" + n, text, cwd);
  }

  Result<ImportReply> Import(ImportSource source = ImportSource::kClaude) {
    Result<TranscriptFile> file = CheckTranscriptPath(source, root_.string(), path_);
    if (!file.ok()) return file.status();
    return Wait<ImportReply>(
        [&](const Callback<ImportReply>& done) { manager_->Import(source, *file, done); });
  }

  std::filesystem::path root_, project_;
  std::string path_;
};

TEST_F(ImportTest, AClaudeTranscriptBecomesTurnsMarkedImported) {
  StartManager();
  Write(R"({"type":"queue-operation","operation":"enqueue"})"
        "\n" +
        Turn("1", "list the files") + Turn("2", "and again"));
  Result<ImportReply> reply = Import();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->outcome, ImportReply::Outcome::kCreated);
  EXPECT_EQ(reply->agent.id, ImportedSessionId(ImportSource::kClaude, kUuid));
  EXPECT_EQ(reply->agent.imported, "claude");
  EXPECT_EQ(reply->agent.provider, "claude");
  EXPECT_EQ(reply->agent.cwd, dir_.string());
  EXPECT_EQ(reply->agent.title, "list the files");
  EXPECT_EQ(reply->agent.status, turn::SessionStatus::kIdle);
  EXPECT_FALSE(reply->agent.loaded);  // nothing runs until a prompt
  EXPECT_EQ(reply->lines, 9u);
  EXPECT_EQ(reply->skipped.at("queue-operation"), 1u);
  EXPECT_EQ(reply->imported_bytes, std::filesystem::file_size(path_));

  const std::vector<Event> events = Events(reply->agent.id);
  EXPECT_EQ(reply->events, events.size());  // session.created included
  ASSERT_EQ(Of<UserMessage>(events).size(), 2u);
  EXPECT_EQ(std::get<UserMessage>(Of<UserMessage>(events)[1]->payload).text, "and again");
  EXPECT_EQ(Of<TurnStarted>(events).size(), 2u);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 2u);
  ASSERT_EQ(Of<ToolCallEnd>(events).size(), 2u);
  EXPECT_EQ(std::get<ToolCallEnd>(Of<ToolCallEnd>(events)[0]->payload).output, "file-1");
  const auto& marker = std::get<SessionImported>(events.back().payload);
  EXPECT_EQ(marker.offset, static_cast<std::int64_t>(std::filesystem::file_size(path_)));
  EXPECT_EQ(marker.session_id, kUuid);
  // The CLI's session resumes it: the handle names the session id and the cwd.
  Result<SessionInfo> info = sqlite_->GetSession(reply->agent.id);
  ASSERT_TRUE(info.ok());
  std::optional<providers::PersistenceHandle> handle = DecodeHandle(info->meta.persistence_handle);
  ASSERT_TRUE(handle.has_value());
  EXPECT_EQ(handle->session_id, kUuid);
  EXPECT_EQ(handle->cwd, dir_.string());
}

TEST_F(ImportTest, ImportingTwiceChangesNothingAndAGrownTranscriptImportsTheRest) {
  StartManager();
  Write(Turn("1", "first"));
  ASSERT_TRUE(Import().ok());
  const SessionId id = ImportedSessionId(ImportSource::kClaude, kUuid);
  const std::size_t before = Events(id).size();
  Result<ImportReply> again = Import();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, ImportReply::Outcome::kUnchanged);
  EXPECT_EQ(again->events, 0u);
  EXPECT_EQ(Events(id).size(), before);

  // A title given here does not stop later imports.
  ASSERT_TRUE(Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& done) {
                manager_->Rename(id, "mine", done);
              }).ok());
  // The next turn, its last line still being written.
  const std::string next = Turn("2", "second");
  Write(next.substr(0, next.size() - 20));
  Result<ImportReply> partial = Import();
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  EXPECT_EQ(partial->outcome, ImportReply::Outcome::kAppended);
  EXPECT_EQ(partial->lines, 3u);  // the last line waits
  EXPECT_LT(partial->imported_bytes, std::filesystem::file_size(path_));
  Write(next.substr(next.size() - 20));
  Result<ImportReply> rest = Import();
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->outcome, ImportReply::Outcome::kAppended);
  EXPECT_EQ(rest->lines, 1u);
  EXPECT_EQ(rest->imported_bytes, std::filesystem::file_size(path_));
  const std::vector<Event> events = Events(id);
  ASSERT_EQ(Of<UserMessage>(events).size(), 2u);
  EXPECT_EQ(Of<AssistantMessageDelta>(events).size(), 2u);
  EXPECT_EQ(std::get<AssistantMessageDelta>(Of<AssistantMessageDelta>(events)[1]->payload).text,
            "answer 2");
  ASSERT_TRUE(Get(id).ok());
  EXPECT_EQ(Get(id)->title, "mine");
  EXPECT_EQ(Get(id)->status, turn::SessionStatus::kIdle);
}

TEST_F(ImportTest, AnAgentThatWentOnHereIsNotImportedAgain) {
  StartManager();
  Write(Turn("1", "first"));
  ASSERT_TRUE(Import().ok());
  const SessionId id = ImportedSessionId(ImportSource::kClaude, kUuid);
  Result<AppendResult> foreign = Wait<AppendResult>([&](const Callback<AppendResult>& done) {
    manager_->AppendForeign(id, {MakeNewEvent(Notice{NoticeLevel::kInfo, "said here"})},
                            ProducerStamp{ProducerId("test"), 0, 0}, done);
  });
  ASSERT_TRUE(foreign.ok()) << foreign.status().ToString();
  Write(Turn("2", "second"));
  Result<ImportReply> reply = Import();
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->outcome, ImportReply::Outcome::kContinued);
  EXPECT_EQ(Of<UserMessage>(Events(id)).size(), 1u);
}

TEST_F(ImportTest, BadLinesAreSkippedAndCountedAndNewerRecordTypesNamed) {
  StartManager();
  Write(
      "not json at all\n"
      R"({"type":"future-thing","x":1})"
      "\n[1,2]\n\n" +
      Turn("1", "first"));
  // A line longer than a batch.
  Write(std::string(kImportBatchBytes + 10, 'x') + "\n" + Turn("2", "after the long line"));
  Result<ImportReply> reply = Import();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->malformed, 3u);
  EXPECT_EQ(reply->skipped.at("future-thing"), 1u);
  EXPECT_EQ(reply->imported_bytes, std::filesystem::file_size(path_));
  const std::vector<Event> events = Events(reply->agent.id);
  ASSERT_EQ(Of<UserMessage>(events).size(), 2u);
  EXPECT_EQ(std::get<UserMessage>(Of<UserMessage>(events)[1]->payload).text, "after the long line");
}

TEST_F(ImportTest, RecordsWithoutTheirIdsGetOnesOfTheirOffset) {
  StartManager();
  // An assistant message and a tool call that name no id.
  Write(
      R"({"type":"user","uuid":"u1","cwd":"/w","message":{"role":"user","content":"go"}})"
      "\n"
      R"({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}})"
      "\n"
      R"({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{}}]}})"
      "\n");
  Result<ImportReply> reply = Import();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const std::vector<Event> events = Events(reply->agent.id);
  ASSERT_EQ(Of<AssistantMessageDelta>(events).size(), 1u);
  EXPECT_FALSE(std::get<AssistantMessageDelta>(Of<AssistantMessageDelta>(events)[0]->payload)
                   .message_id.str()
                   .empty());
  EXPECT_EQ(Of<ToolCallStart>(events).size(), 1u);
}

TEST_F(ImportTest, ClaudeSlashCommandsAndInterruptsReadAsTheyHappened) {
  StartManager();
  const std::string cwd = dir_.string();
  Write(
      R"({"type":"user","isMeta":true,"uuid":"m0","message":{"role":"user","content":"meta"}})"
      "\n"
      R"({"type":"user","isSidechain":true,"uuid":"s0","message":{"role":"user","content":"sub"}})"
      "\n");
  Write(
      ClaudeLine("user", "c1",
                 "<command-name>/model</command-name><command-args>opus</command-args>", cwd) +
      ClaudeLine("user", "o1", "<local-command-stdout>Set model to opus</local-command-stdout>",
                 cwd) +
      ClaudeLine("user", "p1", "a long task", cwd) +
      ClaudeLine("user", "i1",
                 boost::json::array{{{"type", "text"}, {"text", "[Request interrupted by user]"}}},
                 cwd) +
      Turn("2", "the next one"));
  Result<ImportReply> reply = Import();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const std::vector<Event> events = Events(reply->agent.id);
  std::vector<std::string> prompts;
  for (const Event* e : Of<UserMessage>(events))
    prompts.push_back(std::get<UserMessage>(e->payload).text);
  EXPECT_EQ(prompts, (std::vector<std::string>{"/model opus", "a long task", "the next one"}));
  EXPECT_EQ(reply->skipped.at("user.meta"), 1u);
  EXPECT_EQ(reply->skipped.at("user.sidechain"), 1u);  // a sub-agent's prompt
  EXPECT_EQ(std::get<AssistantMessageDelta>(Of<AssistantMessageDelta>(events)[0]->payload).text,
            "Set model to opus");
  EXPECT_EQ(Of<TurnCanceled>(events).size(), 1u);
  EXPECT_EQ(reply->agent.title, "a long task");  // a slash command names no conversation
}

TEST_F(ImportTest, ACodexRolloutBecomesTurnsWithItsOwnOutcomes) {
  StartManager();
  root_ = dir_ / "sessions";
  std::filesystem::create_directories(root_ / "2026" / "12" / "05");
  path_ = (root_ / "2026" / "12" / "05" /
           "rollout-2026-12-05T16-18-12-01a246ff-b218-7253-8764-b4f96d51e1a3.jsonl")
              .string();
  const std::string cwd = dir_.string();
  Write(
      R"({"type":"session_meta","payload":{"id":"01a246ff-b218-7253-8764-b4f96d51e1a3","cwd":")" +
      cwd +
      R"("}})"
      "\n"
      R"({"type":"turn_context","payload":{}})"
      "\n"
      R"({"type":"event_msg","payload":{"type":"user_message","message":"build it"}})"
      "\n"
      R"({"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make\"}","call_id":"call_1"}})"
      "\n"
      R"({"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"built"}})"
      "\n"
      R"({"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}})"
      "\n"
      R"({"type":"event_msg","payload":{"type":"task_complete"}})"
      "\n"
      R"({"type":"event_msg","payload":{"type":"user_message","message":"stop"}})"
      "\n"
      R"({"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}})"
      "\n");
  Result<ImportReply> reply = Import(ImportSource::kCodex);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->agent.provider, "codex");
  EXPECT_EQ(reply->agent.imported, "codex");
  EXPECT_EQ(reply->agent.id,
            ImportedSessionId(ImportSource::kCodex, "01a246ff-b218-7253-8764-b4f96d51e1a3"));
  EXPECT_EQ(reply->skipped.at("turn_context"), 1u);
  const std::vector<Event> events = Events(reply->agent.id);
  EXPECT_EQ(Of<UserMessage>(events).size(), 2u);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 1u);
  EXPECT_EQ(Of<TurnCanceled>(events).size(), 1u);
  ASSERT_EQ(Of<ToolCallEnd>(events).size(), 1u);
  EXPECT_EQ(std::get<ToolCallEnd>(Of<ToolCallEnd>(events)[0]->payload).output, "built");
}

TEST(TranscriptFiles, ListedAndCheckedUnderTheirRootOnly) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("import_files_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "projects" / "-work-a");
  std::filesystem::create_directories(dir / "projects" / "-work-b" / kUuid / "subagents");
  const auto touch = [](const std::filesystem::path& p) { std::ofstream(p) << "{}\n"; };
  touch(dir / "projects" / "-work-a" / (std::string(kUuid) + ".jsonl"));
  touch(dir / "projects" / "-work-b" / "6d0c2f6e-1b7a-4c1e-9a53-0f4b1c2d3e4f.jsonl");
  touch(dir / "projects" / "-work-b" / "notes.jsonl");  // not named as a session
  touch(dir / "projects" / "-work-b" / kUuid / "subagents" / "agent-1.jsonl");
  touch(dir / "outside.jsonl");
  const std::string root = (dir / "projects").string();
  bool truncated = true;
  EXPECT_EQ(ListTranscripts(ImportSource::kClaude, root, "", 0, 100, &truncated).size(), 2u);
  EXPECT_FALSE(truncated);
  const auto only_a = ListTranscripts(ImportSource::kClaude, root, "/work/a", 0, 100, &truncated);
  ASSERT_EQ(only_a.size(), 1u);
  EXPECT_EQ(only_a[0].session_id, kUuid);
  EXPECT_EQ(ListTranscripts(ImportSource::kClaude, root, "", 0, 1, &truncated).size(), 1u);
  EXPECT_TRUE(truncated);
  EXPECT_TRUE(ListTranscripts(ImportSource::kClaude, root, "", INT64_MAX, 100, &truncated).empty());

  EXPECT_TRUE(CheckTranscriptPath(ImportSource::kClaude, root, only_a[0].path).ok());
  EXPECT_EQ(CheckTranscriptPath(ImportSource::kClaude, root, (dir / "outside.jsonl").string())
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckTranscriptPath(ImportSource::kClaude, root, root + "/-work-a/../../outside.jsonl")
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  std::filesystem::create_symlink(
      dir / "outside.jsonl",
      dir / "projects" / "-work-a" / "7d0c2f6e-1b7a-4c1e-9a53-0f4b1c2d3e4f.jsonl");
  EXPECT_EQ(CheckTranscriptPath(ImportSource::kClaude, root,
                                root + "/-work-a/7d0c2f6e-1b7a-4c1e-9a53-0f4b1c2d3e4f.jsonl")
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckTranscriptPath(ImportSource::kClaude, root, root + "/-work-a/missing.jsonl")
                .status()
                .code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(CheckTranscriptPath(ImportSource::kClaude, root, root + "/-work-b/notes.jsonl")
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(TranscriptSessionId(ImportSource::kCodex,
                                "/x/rollout-2026-12-05T16-18-12-01a246ff-b218-7253-8764-"
                                "b4f96d51e1a3.jsonl"),
            "01a246ff-b218-7253-8764-b4f96d51e1a3");
  EXPECT_EQ(TranscriptSessionId(ImportSource::kCodex, "/x/rollout-nope.jsonl"), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace agentstream::runtime
