// LiveAgent: one session with a runtime attached: its provider, the SessionRunner that drives it
// through the turn engine (the session's ONE provider subscription), the ordered append pipeline
// into the log, the status snapshot kept in SessionMeta, and the sends waiting for their turn.
// Private to src/runtime/ (the AgentManager owns one per loaded session).
//
// Ownership: a LiveAgent exists only while this daemon holds the session's lease, and runs under
// the lease's generation (store/coordination.h). Every append and metadata update carries it, so
// once another daemon took the session over the log refuses them (kFenced) and the agent stops.
//
// Appends: each engine step's events are one AppendAsync, issued in step order, stamped as the
// runtime's idempotent producer (producer epoch = the ownership generation, seq = the step's
// number). A refused batch makes every later one refused too (a sequence gap): the log keeps a
// consistent prefix of the runtime's output, the session reports kError, its runtime stops, and
// the next prompt reloads it from the log. Appends from outside the runtime (the inbox) carry
// producer stamps of their own and may land in between.
//
// Threading: the manager's loop thread only. Log callbacks are posted back to it through the
// LoopGate.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "providers/session_runner.h"
#include "runtime/agent_manager.h"
#include "runtime/session_records.h"

namespace agentstream::runtime {

// Posts to the loop while the manager lives; a no-op afterwards. Thread-safe.
class LoopGate {
 public:
  explicit LoopGate(process::EventLoop& loop) : loop_(&loop) {}
  void Post(std::function<void()> fn);
  void Close();

 private:
  std::mutex mu_;
  process::EventLoop* loop_;
};

// What a LiveAgent needs from its manager. Everything outlives the agent.
class LiveAgent;

struct AgentEnv {
  EventLog* log = nullptr;
  process::EventLoop* loop = nullptr;
  ProviderFactory* factory = nullptr;
  turn::TurnIdSource* ids = nullptr;
  std::shared_ptr<LoopGate> gate;
  AgentManagerOptions options;
  // The runtime's clock and timers: options.timers, else the loop's.
  process::Timers& timers() const { return options.timers ? *options.timers : loop->timers(); }
  // A notice about this agent, for the watchers.
  std::function<void(AgentNotice::Kind, const api::AgentSnapshot&, const std::string&)> notify;
  // The agent cannot go on (its log refused a batch, its runtime did not start, it lost its
  // lease) or was idle for options.idle_stop_after: the manager stops and drops it
  // (asynchronously; not when `agent` is no longer the session's runtime by then: a request of
  // a runtime never reaches its successor).
  std::function<void(const SessionId&, const std::weak_ptr<LiveAgent>& agent)> unload;
  // The agent's process is gone: the manager drops this runtime and, when prompts wait in its
  // queue, starts a new one at once (else the next prompt does). Asynchronous, as unload.
  std::function<void(const SessionId&, const std::weak_ptr<LiveAgent>& agent)> replace;
};

// The producer id of every runtime's appends (its epoch is the ownership generation).
inline const ProducerId kRuntimeProducer{"agentstream.runtime"};

// The terminal code of turns left open by a runtime that stopped without closing them, given who
// held the lease before this grant: this daemon's earlier run ("daemon_restarted", or `own` when
// given: why this daemon's runtime stopped) or another daemon that stopped answering
// ("owner_lost").
turn::RecoverAfterRestart RecoveryFor(const OwnerGrant& grant, const std::string& daemon_id,
                                      const turn::RecoverAfterRestart* own = nullptr);

// How a stopping runtime leaves its queued prompts.
struct StopMode {
  // Canceled (prompt.canceled with `reason`: the agent was closed, the session rewound), or
  // held in the log to run when the session next loads (the daemon stops, the lease was lost).
  bool cancel_queue = false;
  std::string reason;
};

class LiveAgent : public std::enable_shared_from_this<LiveAgent> {
 public:
  // Reads the current epoch of `info`'s session, restores its turn state, makes the provider and
  // the runner, closes turns a stopped runtime left open (RecoveryFor(grant, own)), and starts the
  // runtime; prompts the log holds queued start once it is ready. Prompts wait for the start
  // (bounded by options.start_timeout). `grant` is this daemon's lease of the session. Errors:
  // the log's read errors; the factory's kInvalidArgument.
  static Result<std::shared_ptr<LiveAgent>> Open(AgentEnv env, const SessionInfo& info,
                                                 const OwnerGrant& grant,
                                                 const turn::RecoverAfterRestart* own = nullptr);
  ~LiveAgent();
  LiveAgent(const LiveAgent&) = delete;
  LiveAgent& operator=(const LiveAgent&) = delete;

  // Runs `fn` with OK once the runtime is ready, or with the start error (kUnavailable).
  void WhenReady(std::function<void(Status)> fn);

  // `request` has a client message id: AgentManager::Send refuses one without before it routes
  // the send, so that a malformed prompt neither loads a runtime nor travels to another daemon.
  void Send(api::SendRequest request, Callback<api::SendReply> done);
  void CancelQueued(const std::string& client_message_id, const StatusCallback& done);
  void Interrupt(StatusCallback done);
  void ReplyPermission(const turn::ReplyPermission& reply, StatusCallback done);
  void SetMode(const std::string& mode, StatusCallback done);
  void SetModel(const std::string& model, StatusCallback done);
  // Asks the runtime for thinking option `option`, then appends thinking_option.changed (when it
  // changed); `done` once that is durable, or with the runtime's refusal.
  void SetThinking(const std::string& option, StatusCallback done);
  // Appends session.titled, then stores the title in the session's snapshot and tells watchers;
  // `done` with the renamed agent, or the append's error (kUnavailable while stopping).
  void Rename(const std::string& title, Callback<api::AgentSnapshot> done);
  // Stores `closed` in the status snapshot.
  Status SetClosed(bool closed);

  // The lease is gone (another daemon took it, or it went unrenewed too long): nothing more is
  // appended, waiting sends fail with kUnavailable naming `why`, and the runtime stops.
  void Fence(const std::string& why);

  // Stops queued prompts from starting (held or canceled as `mode` says), interrupts open
  // turns, waits (up to options.stop_timeout) for them to end and for the appends in flight,
  // then closes the provider. `done` runs once, on the loop, outside provider callbacks.
  // Idempotent (the first mode wins; `done` of a Stop after the agent stopped runs at once);
  // sends arriving meanwhile get kUnavailable.
  void Stop(const StopMode& mode, std::function<void()> done);

  // Status and cursor as of the acknowledged log; queue, active turn, permissions live.
  api::AgentSnapshot Snapshot() const;
  const SessionId& id() const { return info_.id; }
  std::uint64_t generation() const { return generation_; }
  bool stopping() const { return stopping_; }
  bool closed() const { return record_.closed; }
  // Since when the session has been idle with nothing waiting (no open turn, nothing queued, no
  // send waiting, ready and not stopping); nullopt while it is not.
  std::optional<process::Clock::time_point> idle_since() const { return idle_since_; }
  // The log refused this agent's appends (fenced, or a failed batch).
  bool failed() const { return append_error_.has_value(); }
  // Why the log refused them when it was not a lost lease (whose new owner closes what this
  // runtime left open); nullopt otherwise.
  std::optional<Status> refused() const { return fenced_ ? std::nullopt : append_error_; }

 private:
  struct Deferred {
    std::uint64_t batch;             // runs once this batch is acknowledged
    std::function<void(Status)> fn;  // OK, or the append error
  };

  LiveAgent(AgentEnv env, SessionInfo info, std::uint64_t generation);
  void StartRuntime();
  void OnStarted(const Status& status);
  // The resumed runtime did not start: records why and starts a new provider session instead.
  void StartFresh(const std::string& why);
  void Append(const std::vector<NewEvent>& batch);
  void OnAppended(std::uint64_t batch, const Result<AppendResult>& result);
  // Folds the events since the stored checkpoint into a new one (once kCheckpointEvery events
  // were acknowledged since, and when the runtime stops).
  void RefreshCheckpoint();
  // Stores `history` as the checkpoint when it read any events (`any`), or kCheckpointEvery; a
  // fold that read none started from the stored checkpoint, which is then at its seq.
  void StoreCheckpoint(const HistoryFold& history, bool any);
  void Fail(const Status& status);
  // Appends capabilities.changed when the runtime's lists (DescribeCapabilities) differ from the
  // last recorded ones: once it is ready, after each turn, and after a setting changed.
  void RecordCapabilities();
  void AfterAppended(std::function<void(Status)> fn);
  void RunDeferred();
  void OnEffect(const turn::Effect& effect);
  void OnReply(const turn::ReplySubmission& reply);
  static bool ChangesQueue(const turn::ReplySubmission& reply);  // kQueued or kCanceled
  // Tells watchers the queue changed once the step's events are durable.
  void NotifyQueue(const turn::ReplySubmission& reply);
  // Answers a send with `reply` once the step's events are durable (its cursor includes them).
  void Answer(Callback<api::SendReply> done, const turn::ReplySubmission& reply);
  void Submit(api::SendRequest request, Callback<api::SendReply> done);
  void PersistStatus(turn::SessionStatus status);
  // Stores `record` as the status snapshot under this runtime's generation.
  Status StoreRecord(const StatusRecord& record);
  void CheckStop();
  // (Re)arms the idle stop when the session is idle with nothing waiting; else disarms it.
  void MaybeArmIdle();
  void FinishStop();
  api::SendReply MakeReply(const turn::ReplySubmission& reply) const;

  AgentEnv env_;
  SessionInfo info_;
  const std::uint64_t generation_;  // the ownership generation this runtime appends under
  api::AgentConfig config_;
  StatusRecord record_;                              // as stored
  std::optional<CapabilitiesChanged> capabilities_;  // as last appended (or read from the log)
  std::optional<std::string> thinking_;              // as last appended (or read from the log)
  std::unique_ptr<providers::AgentProvider> provider_;
  std::unique_ptr<providers::SessionRunner> runner_;  // destroyed before provider_
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  // Runtime start.
  bool resuming_ = false;  // the provider resumes a stored session (a fresh one is tried once)
  bool ready_ = false;
  std::optional<Status> start_error_;
  bool start_reported_ = false;  // start_error_'s Error event is durable (or refused)
  std::vector<std::function<void(Status)>> when_ready_;
  std::unique_ptr<process::TimerHandle> start_timer_;

  // Append pipeline: batches issued and acknowledged (in order); batch i is producer seq i - 1.
  std::uint64_t issued_ = 0;
  std::uint64_t acked_ = 0;
  Seq acked_tail_;
  Seq checkpoint_seq_;  // the seq of the session's stored checkpoint, as far as this runtime knows
  std::optional<Status> append_error_;  // sticky once a batch was refused
  bool fenced_ = false;                 // ... because the lease was lost
  std::deque<Deferred> deferred_;

  turn::SessionStatus durable_status_ = turn::SessionStatus::kIdle;  // as of acked_tail_
  // The permission requests of the open runs as of acked_tail_: a snapshot lists only these, so
  // a client never sees (and answers) a request before the log holds it.
  std::set<RequestId> durable_permissions_;
  turn::SessionStatus desired_status_ = turn::SessionStatus::kIdle;  // newest decision, and
  std::uint64_t status_generation_ = 0;                              // its number

  // Sends not answered yet (waiting for the start, or submitted), and those of them whose prompt
  // started a turn that the provider has yet to accept, by client message id.
  std::size_t open_sends_ = 0;
  std::map<std::string, Callback<api::SendReply>> awaiting_;

  std::unique_ptr<process::TimerHandle> idle_timer_;
  std::optional<process::Clock::time_point> idle_since_;  // see idle_since()

  // Stop.
  bool stopping_ = false;
  bool stopped_ = false;
  bool closing_provider_ = false;
  std::vector<std::function<void()>> stop_waiters_;
  std::unique_ptr<process::TimerHandle> stop_timer_;
  process::Clock::time_point stop_deadline_;
  process::Clock::time_point last_interrupt_;
};

}  // namespace agentstream::runtime
