// The agent manager over a real SQLite log in a temp dir, with the scripted provider on a real
// EventLoop driven by the test thread (RunUntil). Every session's log must satisfy the turn
// invariants at the end of each test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/timeline/invariants.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/session_records.h"
#include "runtime/testing/loop_wait.h"
#include "runtime/testing/session_checks.h"
#include "store/forwarding_log.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream::runtime::testing {

using namespace std::chrono_literals;
using turn::SessionStatus;
using turn::WhileRunning;

// Forwards to a real log, counts reads, fails appends on demand, and on demand holds back the
// append of a permission request (and every append after it, in order) until ReleaseHeld().
class CountingLog final : public agentstream::testing::ReadCountingLog {
 public:
  using ReadCountingLog::ReadCountingLog;
  std::atomic<bool> fail_appends{false};
  std::atomic<bool> hold_permission_requests{false};

  void AppendAsync(AppendRequest request, AppendCallback done) override {
    if (fail_appends) return done(Error(ErrorCode::kIoError, "injected append failure"));
    std::lock_guard lock(mu_);
    const bool asks =
        std::any_of(request.events.begin(), request.events.end(),
                    [](const NewEvent& e) { return e.kind == EventKind::kPermissionRequested; });
    if (!held_.empty() || (hold_permission_requests && asks)) {
      held_.emplace_back(std::move(request), std::move(done));
      return;
    }
    ReadCountingLog::AppendAsync(std::move(request), std::move(done));
  }
  std::size_t held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  void ReleaseHeld() {
    std::lock_guard lock(mu_);
    hold_permission_requests = false;
    for (auto& [request, done] : std::exchange(held_, {}))
      ReadCountingLog::AppendAsync(std::move(request), std::move(done));
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<AppendRequest, AppendCallback>> held_;
};

class AgentManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("agentstream_runtime_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    OpenLog();
  }

  void TearDown() override {
    if (manager_) {
      bool done = false;
      manager_->Shutdown([&] { done = true; });
      EXPECT_TRUE(loop_.RunUntil([&] { return done; }, 20s)) << "shutdown did not finish";
    }
    subscription_.Reset();
    manager_.reset();
    CheckEverySession();
    log_.reset();
    sqlite_.reset();
    std::filesystem::remove_all(dir_);
  }

  void OpenLog() {
    SqliteLogOptions options;
    options.path = (dir_ / "log.db").string();
    options.durability = Durability::kOs;
    auto opened = OpenSqliteEventLog(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    sqlite_ = std::move(opened).value();
    log_ = std::make_unique<CountingLog>(*sqlite_);
  }

  // The daemon dies: no Shutdown. Closing the log lands the appends still queued in its writer,
  // as a killed daemon's are either durable or gone before the next one starts.
  void DieAndReopen() {
    subscription_.Reset();
    manager_.reset();
    log_.reset();
    sqlite_.reset();
    OpenLog();
  }

  // A manager whose scripted agent streams its chunks `gap` apart (a turn lasts about 10 gaps).
  void StartManager(process::Millis gap = 2ms, AgentManagerOptions options = {}) {
    ProviderFactoryOptions factory_options;
    factory_options.scripted_chunk_gap = gap;
    factory_ = std::make_unique<DefaultProviderFactory>(factory_options);
    manager_ = std::make_unique<AgentManager>(*log_, *factory_, loop_, options);
    subscription_ = manager_->WatchNotices([this](const AgentNotice& n) { notices_.push_back(n); });
  }

  template <class T>
  Result<T> Wait(const std::function<void(const Callback<T>&)>& start) {
    return testing::RunForResult<T>(loop_, start);
  }
  Status WaitStatus(const std::function<void(const StatusCallback&)>& start) {
    return testing::RunForStatus(loop_, start);
  }

  api::AgentSnapshot Create(std::optional<std::string> title = std::nullopt) {
    Result<api::AgentSnapshot> s =
        Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& done) {
          manager_->Create(
              api::AgentConfig{"scripted", dir_.string(), std::nullopt, std::nullopt, title}, done);
        });
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : api::AgentSnapshot{};
  }
  Result<api::SendReply> Send(const SessionId& id, const std::string& client_id,
                              const std::string& text, WhileRunning mode = WhileRunning::kQueue) {
    return Wait<api::SendReply>([&](const Callback<api::SendReply>& done) {
      manager_->Send(id, api::SendRequest{client_id, text, {}, mode}, done);
    });
  }
  Result<api::AgentSnapshot> Get(const SessionId& id) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& done) { manager_->Get(id, done); });
  }
  // Polls the snapshot until `pred` holds (20 s deadline).
  bool WaitFor(const SessionId& id, const std::function<bool(const api::AgentSnapshot&)>& pred) {
    const auto deadline = process::Clock::now() + 20s;
    while (process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Get(id);
      if (s.ok() && pred(*s)) return true;
      loop_.RunFor(5ms);
    }
    return false;
  }
  bool WaitIdle(const SessionId& id) {
    return WaitFor(id, [](const api::AgentSnapshot& s) {
      return s.status == SessionStatus::kIdle && s.queue.empty() && !s.active_turn;
    });
  }
  std::vector<Event> Events(const SessionId& id) {
    Result<SessionInfo> info = sqlite_->GetSession(id);
    EXPECT_TRUE(info.ok());
    if (!info.ok()) return {};
    Result<std::vector<Event>> events = ReadEpoch(*sqlite_, id, info->epoch);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<Event>{};
  }
  StatusRecord Stored(const SessionId& id) {
    Result<SessionInfo> info = sqlite_->GetSession(id);
    EXPECT_TRUE(info.ok());
    return info.ok() ? DecodeStatusRecord(info->meta.status_snapshot) : StatusRecord{};
  }
  std::size_t NoticesOf(AgentNotice::Kind kind) const {
    std::size_t n = 0;
    for (const AgentNotice& notice : notices_) n += notice.kind == kind;
    return n;
  }

  // The turn invariants (docs/timeline.md) over every session's current epoch; seqs dense from 1.
  void CheckEverySession() {
    if (!sqlite_) return;
    Result<std::vector<SessionInfo>> sessions = sqlite_->ListSessions("", 10000);
    ASSERT_TRUE(sessions.ok());
    for (const SessionInfo& info : *sessions) {
      ExpectDenseAndValid(info.id, Events(info.id));
    }
  }

  std::filesystem::path dir_;
  process::EventLoop loop_;
  // Steady time a test steps by hand, for a manager given it as AgentManagerOptions::timers (the
  // providers keep the loop's). Callbacks due run on the test thread, which runs the loop.
  process::ManualTimers manual_timers_;
  std::unique_ptr<EventLog> sqlite_;
  std::unique_ptr<CountingLog> log_;
  std::unique_ptr<DefaultProviderFactory> factory_;
  std::unique_ptr<AgentManager> manager_;
  ListenerRegistration subscription_;
  std::vector<AgentNotice> notices_;
};

}  // namespace agentstream::runtime::testing
