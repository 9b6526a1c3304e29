// The agent manager driving the real `claude` CLI (tests/peers, pinned) against the scripted model
// server (tests/model_server), over a SQLite log: a turn, then a daemon restart that resumes the
// same CLI session through the stored persistence handle, and the usage totals across it (two
// agents editing one file in worktrees of their own: worktree_agents_test.cc).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/timeline/invariants.h"
#include "providers/claude/claude_test_env.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/session_records.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
namespace claude_testing = providers::claude::testing;

class AgentManagerClaude : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agentstream-runtime-claude-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    std::filesystem::create_directories(root_ / "home");
    std::filesystem::create_directories(root_ / "work");
    server_ = std::make_unique<claude_testing::ModelServer>(loop_);
    ASSERT_NE(server_->port(), 0);
    ProviderFactoryOptions options;
    options.claude_program = claude_testing::ClaudeProgram();
    const char* path = ::getenv("PATH");
    options.claude_env = {"HOME=" + (root_ / "home").string(),
                          "PATH=" + std::string(path ? path : "/usr/bin:/bin"),
                          "ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(server_->port()),
                          "ANTHROPIC_API_KEY=sk-ant-offline-test", "IS_SANDBOX=1"};
    factory_ = std::make_unique<DefaultProviderFactory>(options);
    SqliteLogOptions log_options;
    log_options.path = (root_ / "log.db").string();
    log_options.durability = Durability::kOs;
    auto log = OpenSqliteEventLog(log_options);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
  }
  void TearDown() override {
    manager_.reset();
    log_.reset();
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  template <class T>
  Result<T> Wait(const std::function<void(const Callback<T>&)>& start) {
    auto out = std::make_shared<std::optional<Result<T>>>();
    start([out](Result<T> r) { *out = std::move(r); });
    if (!loop_.RunUntil([&] { return out->has_value(); }, 60s))
      return Error(ErrorCode::kInternal, "timed out");
    return std::move(**out);
  }
  bool WaitIdle(const SessionId& id) {
    const auto deadline = process::Clock::now() + 60s;
    while (process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Wait<api::AgentSnapshot>(
          [&](const Callback<api::AgentSnapshot>& d) { manager_->Get(id, d); });
      if (s.ok() && s->status == turn::SessionStatus::kIdle && !s->active_turn) return true;
      loop_.RunFor(20ms);
    }
    return false;
  }
  void Shutdown() {
    bool done = false;
    manager_->Shutdown([&] { done = true; });
    ASSERT_TRUE(loop_.RunUntil([&] { return done; }, 60s));
    manager_.reset();
  }
  // Sends `prompt` (a [shell ...] command), allows the permission request claude makes for it
  // and waits for the turn to end.
  void Allow(const SessionId& id, const std::string& prompt) {
    Result<api::SendReply> sent = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
      manager_->Send(id, api::SendRequest{"c-" + prompt, prompt, {}, turn::WhileRunning::kQueue},
                     d);
    });
    ASSERT_TRUE(sent.ok() && sent->accepted) << sent.status().ToString();
    std::optional<RequestId> request;
    const auto deadline = process::Clock::now() + 60s;
    while (!request && process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Wait<api::AgentSnapshot>(
          [&](const Callback<api::AgentSnapshot>& d) { manager_->Get(id, d); });
      if (s.ok() && !s->permissions.empty()) request = s->permissions.front().request_id;
      if (!request) loop_.RunFor(20ms);
    }
    ASSERT_TRUE(request.has_value()) << "no permission request";
    Result<bool> replied = Wait<bool>([&](const Callback<bool>& d) {
      manager_->ReplyPermission(
          id,
          turn::ReplyPermission{*request, PermissionDecision::kAllow, std::nullopt, std::nullopt},
          [d](const Status& s) { d(s.ok() ? Result<bool>(true) : Result<bool>(s)); });
    });
    ASSERT_TRUE(replied.ok()) << replied.status().ToString();
    ASSERT_TRUE(WaitIdle(id));
  }
  std::string AssistantText(const std::vector<Event>& events) {
    std::string text;
    for (const Event& e : events)
      if (const auto* d = std::get_if<AssistantMessageDelta>(&e.payload)) text += d->text;
    return text;
  }

  std::filesystem::path root_;
  process::EventLoop loop_;
  std::unique_ptr<claude_testing::ModelServer> server_;
  std::unique_ptr<DefaultProviderFactory> factory_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<AgentManager> manager_;
};

TEST_F(AgentManagerClaude, RunsATurnAndResumesTheCliSessionAfterARestart) {
  manager_ = std::make_unique<AgentManager>(*log_, *factory_, loop_);
  Result<api::AgentSnapshot> agent =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& d) {
        manager_->Create(api::AgentConfig{"claude", (root_ / "work").string(), {}, {}, {"cli"}}, d);
      });
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  const SessionId id = agent->id;
  Result<api::SendReply> first = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
    manager_->Send(id, api::SendRequest{"c1", "hello there", {}, turn::WhileRunning::kQueue}, d);
  });
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->accepted);
  ASSERT_TRUE(WaitIdle(id));
  Result<SessionInfo> info = log_->GetSession(id);
  ASSERT_TRUE(info.ok());
  const auto handle = DecodeHandle(info->meta.persistence_handle);
  ASSERT_TRUE(handle.has_value()) << info->meta.persistence_handle;
  EXPECT_EQ(handle->provider, "claude");
  EXPECT_FALSE(handle->session_id.empty());
  // The live snapshot counts the turn's usage report as the log does.
  Result<api::AgentSnapshot> after_first = Wait<api::AgentSnapshot>(
      [&](const Callback<api::AgentSnapshot>& d) { manager_->Get(id, d); });
  ASSERT_TRUE(after_first.ok() && after_first->usage.has_value());
  EXPECT_GT(after_first->usage->input_tokens, 0);
  ASSERT_TRUE(info->meta.usage.has_value());
  EXPECT_EQ(after_first->usage->input_tokens, info->meta.usage->input_tokens);
  EXPECT_EQ(after_first->usage->output_tokens, info->meta.usage->output_tokens);
  Shutdown();

  // The daemon restarts: the next prompt starts `claude --resume <stored session id>`.
  manager_ = std::make_unique<AgentManager>(*log_, *factory_, loop_);
  Result<api::SendReply> second = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
    manager_->Send(id, api::SendRequest{"c2", "again", {}, turn::WhileRunning::kQueue}, d);
  });
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->accepted);
  ASSERT_TRUE(WaitIdle(id));
  info = log_->GetSession(id);
  ASSERT_TRUE(info.ok());
  const auto resumed = DecodeHandle(info->meta.persistence_handle);
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->session_id, handle->session_id);
  Shutdown();

  Result<std::vector<Event>> events = ReadEpoch(*log_, id, info->epoch);
  ASSERT_TRUE(events.ok());
  std::size_t completed = 0;
  for (const Event& e : *events) completed += std::holds_alternative<TurnCompleted>(e.payload);
  EXPECT_EQ(completed, 2u);
  EXPECT_EQ(AssistantText(*events), "Echo: hello thereEcho: again");
  // The stored totals, across the restart, are the sum of the log's usage events.
  Usage summed;
  int reports = 0;
  for (const Event& e : *events) {
    if (const auto* u = std::get_if<Usage>(&e.payload)) AddUsage(summed, *u), ++reports;
  }
  EXPECT_EQ(reports, 2);
  ASSERT_TRUE(info->meta.usage.has_value());
  EXPECT_EQ(info->meta.usage->input_tokens, summed.input_tokens);
  EXPECT_EQ(info->meta.usage->output_tokens, summed.output_tokens);
  EXPECT_EQ(info->meta.usage->cache_read_tokens, summed.cache_read_tokens);
  EXPECT_EQ(info->meta.usage->cost_usd.has_value(), summed.cost_usd.has_value());
  for (const auto& v : timeline::CheckInvariants(*events))
    ADD_FAILURE() << "invariant " << timeline::FormatViolation(v);
}

}  // namespace
}  // namespace agentstream::runtime
