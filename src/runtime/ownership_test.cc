// Several daemons on one store, in one process: AgentManagers with their own ids on one shared
// log, commands forwarded between them by an in-process Forwarder (the HTTP one is tested end to
// end), short leases. A daemon "dies" when its manager is destroyed without Shutdown (nothing is
// released) and is "partitioned" when its store calls fail.
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "core/timeline/invariants.h"
#include "runtime/forwarder.h"
#include "runtime/provider_factory.h"
#include "runtime/session_records.h"
#include "runtime/testing/loop_wait.h"
#include "runtime/testing/session_checks.h"
#include "store/forwarding_log.h"
#include "store/memory_log.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
using testing::Of;
using turn::SessionStatus;

// One daemon's view of the shared log; `cut` makes every call fail as a lost connection would.
class DaemonLog final : public agentstream::testing::ForwardingLog {
 public:
  using ForwardingLog::ForwardingLog;
  std::atomic<bool> cut{false};

  void AppendAsync(AppendRequest request, AppendCallback done) override {
    if (cut) return done(Unreachable());
    ForwardingLog::AppendAsync(std::move(request), std::move(done));
  }
  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override {
    if (cut) return Unreachable();
    return ForwardingLog::UpdateSessionMeta(id, update);
  }
  Result<OwnerGrant> AcquireOwnership(const SessionId& s, const std::string& owner,
                                      std::int64_t ttl) override {
    if (cut) return Unreachable();
    return ForwardingLog::AcquireOwnership(s, owner, ttl);
  }
  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl) override {
    if (cut) return Unreachable();
    return ForwardingLog::RenewOwnerships(owner, leases, ttl);
  }
  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl) override {
    if (cut) return Unreachable();
    return ForwardingLog::Heartbeat(self, ttl);
  }
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override {
    if (cut) return Unreachable();
    return ForwardingLog::ListExpiredOwnerships(limit);
  }
  Status ReleaseOwnership(const SessionId& s, std::uint64_t generation) override {
    if (cut) return Unreachable();
    return ForwardingLog::ReleaseOwnership(s, generation);
  }
  Result<SessionInfo> GetSession(const SessionId& id) override {
    if (cut) return Unreachable();
    return ForwardingLog::GetSession(id);
  }
  Result<ReadResult> Read(const ReadRequest& request) override {
    if (cut) return Unreachable();
    return ForwardingLog::Read(request);
  }

 private:
  static Status Unreachable() { return Error(ErrorCode::kUnavailable, "the store is unreachable"); }
};

// Carries commands to the manager registered under the peer's URL; a missing one does not answer.
class LocalForwarder final : public Forwarder {
 public:
  std::map<std::string, AgentManager*> daemons;  // by URL
  std::atomic<int> forwarded{0};

  void Forward(const Peer& owner, const SessionId& agent, const AgentCommand& command,
               Done done) override {
    auto it = daemons.find(owner.url);
    if (it == daemons.end())
      return done(Error(ErrorCode::kUnavailable, "connection refused"), false);
    ++forwarded;
    AgentManager& m = *it->second;
    auto status = [done](const Status& s) {
      if (!s.ok()) return done(s, true);
      done(AgentAnswer{}, true);
    };
    std::visit(
        [&](const auto& c) {
          using T = std::decay_t<decltype(c)>;
          constexpr Forwarding kRefused = Forwarding::kRefused;
          if constexpr (std::is_same_v<T, commands::Send>) {
            m.Send(
                agent, c.request,
                [done](Result<api::SendReply> r) {
                  if (!r.ok()) return done(r.status(), true);
                  done(AgentAnswer{*r}, true);
                },
                kRefused);
          } else if constexpr (std::is_same_v<T, commands::Interrupt>) {
            m.Interrupt(agent, status, kRefused);
          } else if constexpr (std::is_same_v<T, commands::ReplyPermission>) {
            m.ReplyPermission(agent, c.reply, status, kRefused);
          } else if constexpr (std::is_same_v<T, commands::Close>) {
            m.Close(agent, status, kRefused);
          } else {
            done(Error(ErrorCode::kInternal, "not forwarded by this test"), true);
          }
        },
        command);
  }
};

struct Daemon {
  std::string id;
  std::unique_ptr<DaemonLog> log;
  std::unique_ptr<AgentManager> manager;
};

class OwnershipTest : public ::testing::Test {
 protected:
  // A runtime stops by itself after ttl - renew unrenewed, checked every renew / 4: the lease
  // outlives that stop by renew - renew / 4 (750 ms), a margin a loaded machine keeps.
  static constexpr process::Millis kTtl{3000};
  static constexpr process::Millis kRenew{1000};

  void TearDown() override {
    for (auto& [name, d] : daemons_) Stop(name);
    CheckEverySession();
  }

  AgentManager& Start(const std::string& name) {
    Daemon& d = daemons_[name];
    d.id = "daemon-" + name;
    d.log = std::make_unique<DaemonLog>(store_);
    AgentManagerOptions options;
    options.ownership.daemon_id = d.id;
    options.ownership.url = "local://" + name;
    options.ownership.ttl = kTtl;
    options.ownership.renew_every = kRenew;
    d.manager = std::make_unique<AgentManager>(*d.log, factory_, loop_, options, &forwarder_);
    forwarder_.daemons[options.ownership.url] = d.manager.get();
    return *d.manager;
  }
  // A clean stop: runtimes stopped, leases released.
  void Stop(const std::string& name) {
    Daemon& d = daemons_[name];
    if (!d.manager) return;
    bool done = false;
    d.manager->Shutdown([&] { done = true; });
    EXPECT_TRUE(loop_.RunUntil([&] { return done; }, 20s));
    Kill(name);
  }
  // kill -9: nothing is stopped or released.
  void Kill(const std::string& name) {
    Daemon& d = daemons_[name];
    forwarder_.daemons.erase("local://" + name);
    d.manager.reset();
  }
  AgentManager& M(const std::string& name) { return *daemons_.at(name).manager; }

  template <class T>
  Result<T> Wait(const std::function<void(const Callback<T>&)>& start) {
    return testing::RunForResult<T>(loop_, start);
  }
  Status WaitStatus(const std::function<void(const StatusCallback&)>& start) {
    return testing::RunForStatus(loop_, start);
  }
  api::AgentSnapshot Create(const std::string& on) {
    Result<api::AgentSnapshot> s =
        Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& done) {
          M(on).Create(api::AgentConfig{"scripted", ::testing::TempDir(), std::nullopt,
                                        std::nullopt, std::nullopt},
                       done);
        });
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : api::AgentSnapshot{};
  }
  Result<api::SendReply> Send(const std::string& on, const SessionId& id,
                              const std::string& client_id, const std::string& text) {
    return Wait<api::SendReply>([&](const Callback<api::SendReply>& done) {
      M(on).Send(id, api::SendRequest{client_id, text, {}, turn::WhileRunning::kQueue}, done);
    });
  }
  Result<api::AgentSnapshot> Get(const std::string& on, const SessionId& id) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& done) { M(on).Get(id, done); });
  }
  bool WaitFor(const std::string& on, const SessionId& id,
               const std::function<bool(const api::AgentSnapshot&)>& pred) {
    const auto deadline = process::Clock::now() + 20s;
    while (process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Get(on, id);
      if (s.ok() && pred(*s)) return true;
      loop_.RunFor(5ms);
    }
    return false;
  }
  bool WaitIdle(const std::string& on, const SessionId& id) {
    return WaitFor(on, id, [](const api::AgentSnapshot& s) {
      return s.status == SessionStatus::kIdle && s.queue.empty() && !s.active_turn;
    });
  }
  std::vector<Event> Events(const SessionId& id) {
    Result<SessionInfo> info = store_.GetSession(id);
    if (!info.ok()) return {};
    Result<std::vector<Event>> events = ReadEpoch(store_, id, info->epoch);
    return events.ok() ? *events : std::vector<Event>{};
  }
  std::vector<EventRecord> Records(const SessionId& id) {
    Result<ReadResult> page =
        store_.Read(ReadRequest{id, std::nullopt, ReadDirection::kForward, Seq(1), 10000, 1 << 24});
    return page.ok() ? page->events : std::vector<EventRecord>{};
  }

  // Turn invariants and dense seqs over every session; and no event of a generation after the
  // next grant (the ownership history says where each grant began).
  void CheckEverySession() {
    Result<std::vector<SessionInfo>> sessions = store_.ListSessions("", 10000);
    ASSERT_TRUE(sessions.ok());
    for (const SessionInfo& info : *sessions) {
      testing::ExpectDenseAndValid(info.id, Events(info.id));
      Result<std::vector<OwnershipRecord>> history = store_.OwnershipHistory(info.id);
      ASSERT_TRUE(history.ok());
      for (const EventRecord& r : Records(info.id)) {
        if (r.owner_generation == 0) continue;
        for (const OwnershipRecord& grant : *history) {
          if (grant.generation == r.owner_generation) {
            EXPECT_GT(r.seq, grant.at.seq) << info.id.str() << " event before its grant";
          } else if (grant.generation > r.owner_generation) {
            EXPECT_LE(r.seq, grant.at.seq)
                << info.id.str() << ": seq " << r.seq.value() << " of generation "
                << r.owner_generation << " landed after generation " << grant.generation;
          }
        }
      }
    }
  }

  process::EventLoop loop_;
  MemoryEventLog store_;
  DefaultProviderFactory factory_{ProviderFactoryOptions{}};
  LocalForwarder forwarder_;
  std::map<std::string, Daemon> daemons_;
};

TEST_F(OwnershipTest, ASendThroughAnotherDaemonRunsOnTheOwner) {
  Start("a");
  Start("b");
  const api::AgentSnapshot agent = Create("a");
  EXPECT_EQ(agent.owner, "daemon-a");
  Result<api::SendReply> reply = Send("b", agent.id, "c1", "hello");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_TRUE(reply->accepted);
  EXPECT_EQ(forwarder_.forwarded.load(), 1);
  ASSERT_TRUE(WaitIdle("a", agent.id));
  Result<api::AgentSnapshot> seen_by_b = Get("b", agent.id);
  ASSERT_TRUE(seen_by_b.ok());
  EXPECT_FALSE(seen_by_b->loaded) << "b runs no second runtime";
  EXPECT_EQ(seen_by_b->owner, "daemon-a");
  // A retry through b is the same prompt: recorded once.
  Result<api::SendReply> retry = Send("b", agent.id, "c1", "hello");
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->outcome, turn::SubmissionOutcome::kDuplicate);
  EXPECT_EQ(Of<UserMessage>(Events(agent.id)).size(), 1u);
  for (const EventRecord& r : Records(agent.id)) {
    if (r.seq.value() > 1) {
      EXPECT_EQ(r.owner_generation, 1u) << "seq " << r.seq.value();
    }
  }
}

TEST_F(OwnershipTest, AKilledOwnersTurnEndsOnceAndTheNextPromptRunsOnTheSurvivor) {
  Start("a");
  Start("b");
  const api::AgentSnapshot agent = Create("a");
  // A long turn on a: many chunks.
  Result<api::SendReply> started = Send("a", agent.id, "c1", std::string(400, 'x'));
  ASSERT_TRUE(started.ok() && started->accepted) << started.status().ToString();
  Kill("a");
  // b's keeper finds the expired lease and ends a's turn: owner_lost, once.
  ASSERT_TRUE(WaitFor("b", agent.id, [](const api::AgentSnapshot& s) {
    return s.status != SessionStatus::kRunning && s.owner.empty();
  }));
  std::vector<Event> events = Events(agent.id);
  ASSERT_EQ(Of<TurnFailed>(events).size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(Of<TurnFailed>(events)[0]->payload).code, "owner_lost");
  Result<api::SendReply> next = Send("b", agent.id, "c2", "go on");
  ASSERT_TRUE(next.ok() && next->accepted) << next.status().ToString();
  ASSERT_TRUE(WaitIdle("b", agent.id));
  EXPECT_EQ(Get("b", agent.id)->owner, "daemon-b");
  events = Events(agent.id);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 1u);
  auto history = store_.OwnershipHistory(agent.id);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->front().owner, "daemon-a");
  EXPECT_EQ(history->back().owner, "daemon-b");
}

TEST_F(OwnershipTest, AStartingDaemonLeavesAnotherLiveDaemonsTurnsAlone) {
  Start("a");
  const api::AgentSnapshot agent = Create("a");
  Result<api::SendReply> started = Send("a", agent.id, "c1", std::string(400, 'x'));
  ASSERT_TRUE(started.ok() && started->accepted);
  Start("c");
  ASSERT_TRUE(WaitStatus([&](const StatusCallback& d) { M("c").Recover(d); }).ok());
  EXPECT_TRUE(Of<TurnFailed>(Events(agent.id)).empty());
  ASSERT_TRUE(WaitIdle("a", agent.id));
  EXPECT_EQ(Of<TurnCompleted>(Events(agent.id)).size(), 1u);
}

TEST_F(OwnershipTest, ARestartedDaemonTakesItsOwnLeasesBackAtOnce) {
  Start("a");
  const api::AgentSnapshot agent = Create("a");
  ASSERT_TRUE(Send("a", agent.id, "c1", std::string(400, 'x')).ok());
  Kill("a");
  Start("a");  // same id, well within the lease's ttl
  const auto before = process::Clock::now();
  ASSERT_TRUE(WaitStatus([&](const StatusCallback& d) { M("a").Recover(d); }).ok());
  EXPECT_LT(process::Clock::now() - before, kTtl) << "it did not wait for its own lease";
  std::vector<Event> events = Events(agent.id);
  ASSERT_EQ(Of<TurnFailed>(events).size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(Of<TurnFailed>(events)[0]->payload).code, "daemon_restarted");
}

TEST_F(OwnershipTest, APartitionedOwnerStopsItsRuntimeAndCannotAppendAfterTheTakeover) {
  Start("a");
  Start("b");
  const api::AgentSnapshot agent = Create("a");
  ASSERT_TRUE(Send("a", agent.id, "c1", "permission please").ok());
  ASSERT_TRUE(WaitFor("a", agent.id, [](const api::AgentSnapshot& s) {
    return s.status == SessionStatus::kPermission;
  }));
  std::vector<std::string> errors;
  ListenerRegistration watch = M("a").WatchNotices([&](const AgentNotice& n) {
    if (n.kind == AgentNotice::Kind::kError) errors.push_back(n.message);
  });
  daemons_["a"].log->cut = true;  // a cannot reach the store: renewals fail
  // a stops its runtime by itself (its lease went unrenewed), before b may take over.
  ASSERT_TRUE(loop_.RunUntil([&] { return !errors.empty(); }, 20s));
  EXPECT_NE(errors[0].find("no longer owns"), std::string::npos) << errors[0];
  EXPECT_TRUE(store_.GetOwnership(agent.id)->live()) << "a stopped after its lease expired";
  const auto taken_over = [&] { return store_.OwnershipHistory(agent.id)->size() >= 2; };
  ASSERT_TRUE(loop_.RunUntil(taken_over, 20s));
  EXPECT_EQ(store_.OwnershipHistory(agent.id)->back().owner, "daemon-b");
  daemons_["a"].log->cut = false;  // healed: a's late appends meet the fence
  AppendRequest late;
  late.session = agent.id;
  late.owner_generation = 1;
  late.events = {MakeNewEvent(Notice{NoticeLevel::kInfo, "late"})};
  EXPECT_EQ(daemons_["a"].log->Append(late).status().code(), ErrorCode::kFenced);
  std::vector<Event> events = Events(agent.id);
  ASSERT_EQ(Of<TurnFailed>(events).size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(Of<TurnFailed>(events)[0]->payload).code, "owner_lost");
  // The permission of the lost turn is gone with it.
  EXPECT_EQ(WaitStatus([&](const StatusCallback& d) {
              M("b").ReplyPermission(agent.id, turn::ReplyPermission{RequestId("x")}, d);
            }).code(),
            ErrorCode::kNotFound);
}

TEST_F(OwnershipTest, PromptsQueuedOnAKilledOwnerRunOnTheSurvivorInOrderOnce) {
  Start("a");
  Start("b");
  const api::AgentSnapshot agent = Create("a");
  ASSERT_TRUE(Send("a", agent.id, "c0", std::string(400, 'x')).ok());
  for (int i = 1; i <= 5; ++i) {
    Result<api::SendReply> queued = Send("a", agent.id, "c" + std::to_string(i), "queued");
    ASSERT_TRUE(queued.ok());
    EXPECT_EQ(queued->outcome, turn::SubmissionOutcome::kQueued);
  }
  Kill("a");
  ASSERT_TRUE(
      WaitFor("b", agent.id, [](const api::AgentSnapshot& s) { return s.owner == "daemon-b"; }));
  ASSERT_TRUE(WaitIdle("b", agent.id));
  const std::vector<Event> events = Events(agent.id);
  std::vector<std::string> prompts;
  for (const Event* e : Of<UserMessage>(events))
    prompts.push_back(std::get<UserMessage>(e->payload).client_message_id);
  EXPECT_EQ(prompts, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4", "c5"}));
  EXPECT_EQ(Of<PromptQueued>(events).size(), 5u);
}

TEST_F(OwnershipTest, AForwardToAnOwnerThatDoesNotAnswerWaitsForItsLeaseThenRunsHere) {
  Start("a");
  Start("b");
  const api::AgentSnapshot agent = Create("a");
  forwarder_.daemons.erase("local://a");  // a keeps renewing but does not answer b
  Result<api::SendReply> reply = Send("b", agent.id, "c1", "hello");
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable) << "a still holds a live lease";
  Kill("a");
  Result<api::SendReply> after = Send("b", agent.id, "c2", "hello again");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(after->accepted);
  ASSERT_TRUE(WaitIdle("b", agent.id));
}

}  // namespace
}  // namespace agentstream::runtime
