// Private to src/runtime/: the AgentManager's state and the jobs it splits across files.
//   agent_manager.cc   sessions (create, list, get, fork), loading, unloading, notices, shutdown
//   agent_routing.cc   where a command runs: the local runtime, one started here, or the owner
//   agent_import.cc    importing CLI transcripts
//   agent_recovery.cc  restart recovery, takeover of leases other daemons stopped renewing, and
//                      the lease keeper's reports (lost and overdue leases)
// Threading: everything here runs on the manager's loop thread, except Run() and the keeper's
// callbacks, which post to it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/agent_manager.h"
#include "runtime/forwarder.h"
#include "runtime/lease_keeper.h"
#include "runtime/live_agent.h"
#include "runtime/session_records.h"

namespace agentstream::runtime {

// The notice watchers; shared with the Subscriptions, which may outlive the manager.
struct NoticeHub {
  std::mutex mu;
  std::uint64_t next = 0;
  std::map<std::uint64_t, std::shared_ptr<NoticeWatcher>> watchers;
};

// The snapshot a session's stored metadata gives (no runtime attached here).
api::AgentSnapshot StoredSnapshot(const SessionInfo& info);

class AgentManager::Impl {
 public:
  Impl(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
       AgentManagerOptions options, Forwarder* forwarder);
  ~Impl();

  // Runs `fn` on the loop thread unless the manager is gone by then.
  void Run(std::function<void(Impl&)> fn);

  // ---- agent_manager.cc ----
  void Create(const api::AgentConfig& config, const Callback<api::AgentSnapshot>& done);
  void List(bool include_closed, const Callback<std::vector<api::AgentSnapshot>>& done);
  Result<api::AgentSnapshot> Get(const SessionId& id);
  void AppendForeign(const SessionId& id, std::vector<NewEvent> events, ProducerStamp stamp,
                     Callback<AppendResult> done);
  void Fork(const SessionId& id, Cursor at, const Callback<api::AgentSnapshot>& done,
            const std::optional<ForkWorkspace>& workspace);
  ListenerRegistration Watch(NoticeWatcher watcher);
  LeaseKeeper& keeper() { return *keeper_; }
  void Shutdown(std::function<void()> done);
  bool shut_down() const { return shut_down_; }

  // ---- agent_routing.cc ----
  using AnswerCallback = std::function<void(Result<AgentAnswer>)>;
  // Runs `command` where the agent's runtime runs (agent_manager.h, "The commands below").
  void Dispatch(const SessionId& id, AgentCommand command, Forwarding forwarding,
                AnswerCallback done);

  // ---- agent_recovery.cc ----
  void Recover(const StatusCallback& done);

  // ---- agent_import.cc ----
  struct ImportJob;
  void Import(ImportSource source, TranscriptFile file, const Callback<ImportReply>& done);

 private:
  // One command on its way to where it runs.
  struct Attempt {
    SessionId id;
    AgentCommand command;
    Forwarding forwarding = Forwarding::kAllowed;
    AnswerCallback done;
    process::Clock::time_point deadline;  // waiting for a silent owner's lease ends here
    int hops = 0;                         // re-routings so far (the owner changed meanwhile)
  };
  using AttemptPtr = std::shared_ptr<Attempt>;

  // ---- agent_manager.cc ----
  AgentEnv MakeEnv();
  void Notify(AgentNotice::Kind kind, const api::AgentSnapshot& agent, const std::string& message);
  std::shared_ptr<LiveAgent> Live(const SessionId& id) const;
  // Whether another runtime may start under max_live_agents: the runtimes not stopping are
  // fewer, or the one idle the longest was told to stop to make room (it leaves as it stops).
  bool MakeRoom();
  // `agent` is still the runtime of session `id`.
  bool IsCurrent(const SessionId& id, const std::weak_ptr<LiveAgent>& agent);
  Coordination& coordination() { return log_.coordination(); }
  std::int64_t ttl_ms() const { return options_.ownership.ttl.count(); }
  process::Timers& timers() { return options_.timers ? *options_.timers : loop_.timers(); }
  process::Clock::time_point Now() { return timers().Now(); }
  // The live agent of `id`, taking its lease and starting its runtime when needed. kConflict
  // when another daemon holds the lease (`*owner` names it when given).
  Result<std::shared_ptr<LiveAgent>> Load(const SessionId& id, std::string* owner = nullptr);
  // Attaches a runtime under `grant` (asked for at `sent`); releases the lease when it fails.
  Result<std::shared_ptr<LiveAgent>> Attach(const SessionId& id, const OwnerGrant& grant,
                                            process::Clock::time_point sent);
  void Release(const SessionId& id, std::uint64_t generation);
  // The runtime of `id` lost its process: drops it, and starts a new one when prompts wait.
  void Replace(const SessionId& id);
  // Stops the live agent of `id` (if any) as `mode` says and drops it, releasing its lease unless
  // `keep_lease`; then runs `then` with the generation still held (nullopt: none held any more).
  void Unload(const SessionId& id, const StopMode& mode, bool keep_lease,
              std::function<void(std::optional<std::uint64_t>)> then);
  // Marks the session closed in its snapshot under `generation`.
  Result<api::AgentSnapshot> MarkClosed(const SessionId& id, std::uint64_t generation);
  // The initial events of a fork or rewind at `at`: `first`, then TurnCanceled for every turn
  // still open at `at` and PromptCanceled for every prompt queued there. `status` gets the
  // status the new history ends in, and `prefix` the history's fold through `at`.
  Result<std::vector<NewEvent>> BranchEvents(const SessionInfo& info, Cursor at,
                                             const Payload& first, const std::string& reason,
                                             turn::SessionStatus* status, HistoryFold* prefix);
  // Stores the checkpoint of a new fork or epoch: `prefix` (the fold through the branch point)
  // with the branch's own events, so that its first load reads none of the history before.
  void CheckpointBranch(const SessionId& id, Epoch epoch, HistoryFold prefix);
  Result<api::AgentSnapshot> RewindWith(const SessionId& id, Cursor to, std::uint64_t generation);
  // Hears commits of sessions that run elsewhere and tells the watchers when their stored
  // status changed, so every daemon's clients see every agent's status.
  void WatchRemoteStatus(const SessionId& id);
  void FlushRemoteStatus();

  // ---- agent_routing.cc ----
  void Route(const AttemptPtr& attempt);
  void Retry(const AttemptPtr& attempt);
  void RunLocal(const std::shared_ptr<LiveAgent>& agent, const AttemptPtr& attempt);
  void RunWithoutRuntime(const AttemptPtr& attempt);
  void CloseLive(const AttemptPtr& attempt);
  void RewindLive(const AttemptPtr& attempt, Cursor to);
  // Takes the lease, closes what a lost runtime left open, runs `fn` under the lease, releases.
  void WithLease(const AttemptPtr& attempt,
                 std::function<Result<AgentAnswer>(const OwnerGrant&, turn::TurnState&)> fn);
  void Forward(const std::string& owner, const AttemptPtr& attempt);
  // The owner did not answer: waits for its lease to expire or move, then routes again.
  void WaitForOwner(const std::string& owner, const AttemptPtr& attempt);
  // Runs `fn` on the loop after `delay`, unless the manager is destroyed first.
  void After(process::Millis delay, std::function<void()> fn);

  // ---- agent_import.cc ----
  // Imports the job's next batch, then posts the one after it (or answers).
  void ImportBatch(const std::shared_ptr<ImportJob>& job);
  // Creates the job's session with the first batch's `events` (atomically: a session exists only
  // with its first session.imported).
  Status CreateImported(ImportJob& job, const TranscriptBatch& batch, std::vector<NewEvent> events);
  // Appends `events` to the job's existing session under its lease, with its status.
  Status AppendImported(ImportJob& job, std::vector<NewEvent> events);

  // ---- agent_recovery.cc ----
  // Asks the store for the lease of `id` (AcquireOwnership); logs a takeover from another daemon.
  Result<OwnerGrant> Acquire(const SessionId& id);
  // Takes over `id` when its lease can be taken: closes the turns a stopped runtime left open and
  // releases the lease, or starts a runtime here when prompts wait in its queue. Skips a session
  // another live daemon holds. `why`, when given, is why this daemon's own runtime stopped.
  Status TakeOver(const SessionId& id, const turn::RecoverAfterRestart* why = nullptr);
  // Under `grant`, with `history` the fold of the session's current epoch: appends the terminals
  // of the turns left open (for `why` when given and the lease was this daemon's or nobody's)
  // and stores the recomputed status; returns the state (its queue included).
  Result<turn::TurnState> RecoverWith(const SessionInfo& info, const OwnerGrant& grant,
                                      HistoryFold history,
                                      const turn::RecoverAfterRestart* why = nullptr);
  // The log refused the appends of the runtime of `id` (`refused` says why) and it stopped,
  // leaving its turns open and its stored status as it was. Unless a client's command loads the
  // session first, this closes them (TakeOver), again after a backoff while the store still
  // refuses (attempt: how many tried before). A command that loads the session first closes them
  // the same way (Attach).
  void RecoverRefused(const SessionId& id, const Status& refused, int attempt);
  void OnLeasesLost(const std::vector<SessionId>& lost);
  void OnLeasesExpired(const std::vector<std::pair<SessionId, OwnerLease>>& expired);
  void CheckOverdue();

  EventLog& log_;
  ProviderFactory& factory_;
  process::EventLoop& loop_;
  AgentManagerOptions options_;
  Forwarder* forwarder_;
  std::shared_ptr<LoopGate> gate_;
  std::shared_ptr<NoticeHub> hub_ = std::make_shared<NoticeHub>();
  RandomTurnIds turn_ids_;
  RandomIds session_ids_;
  std::map<SessionId, std::shared_ptr<LiveAgent>> agents_;
  std::map<SessionId, std::size_t> foreign_in_flight_;  // AppendForeign calls per session
  // The sessions RecoverRefused is retrying, with the end their open turns get.
  std::map<SessionId, turn::RecoverAfterRestart> refused_;
  bool shut_down_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  // Timers started by After(), by number.
  std::map<std::uint64_t, std::unique_ptr<process::TimerHandle>> timers_;
  std::uint64_t next_timer_ = 0;
  std::unique_ptr<process::TimerHandle> overdue_timer_;

  // Remote status: the last status told for sessions that run elsewhere (bounded), the ones
  // whose commits arrived since the last flush, and the commit subscription.
  std::map<SessionId, turn::SessionStatus> remote_status_;
  std::set<SessionId> remote_dirty_;
  bool remote_flush_scheduled_ = false;
  ListenerRegistration commits_;

  std::unique_ptr<LeaseKeeper> keeper_;  // last: its thread stops first
};

}  // namespace agentstream::runtime
