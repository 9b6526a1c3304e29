#include "runtime/live_agent.h"

#include <algorithm>

#include "core/event_codec.h"
#include "log/log.h"

namespace agentstream::runtime {

using turn::SessionStatus;

namespace {

constexpr process::Millis kStopPoll{10};
constexpr process::Millis kReinterruptAfter{500};

bool IsOpenStatus(SessionStatus s) {
  return s == SessionStatus::kRunning || s == SessionStatus::kPermission;
}

// The permission requests pending in the open runs of `state`.
std::set<RequestId> PendingRequests(const turn::TurnState& state) {
  std::set<RequestId> out;
  for (const auto& [id, run] : state.open)
    out.insert(run.pending_permissions.begin(), run.pending_permissions.end());
  return out;
}

Status RuntimeStopping() {
  return Error(ErrorCode::kUnavailable, "the session's runtime is stopping");
}

// The failed turns of `batch` as they go to the log: their code and message, never a prompt.
void LogFailedTurns(const SessionId& id, const std::vector<NewEvent>& batch) {
  for (const NewEvent& event : batch) {
    if (event.kind != EventKind::kTurnFailed) continue;
    Result<Payload> payload =
        DecodePayload(static_cast<std::uint16_t>(event.kind), kEventFormatVersion, event.payload);
    const auto* failed = payload.ok() ? std::get_if<TurnFailed>(&*payload) : nullptr;
    if (failed == nullptr) continue;
    log::Warn("turn.failed", {{"agent", id.str()},
                              {"turn", event.turn ? event.turn->str() : ""},
                              {"code", failed->code},
                              {"message", failed->message}});
  }
}

}  // namespace

void LoopGate::Post(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  if (loop_) loop_->Post(std::move(fn));
}

void LoopGate::Close() {
  std::lock_guard lock(mu_);
  loop_ = nullptr;
}

turn::RecoverAfterRestart RecoveryFor(const OwnerGrant& grant, const std::string& daemon_id,
                                      const turn::RecoverAfterRestart* own) {
  const std::string& previous = grant.previous.owner;
  if (previous.empty() || previous == daemon_id)
    return own != nullptr ? *own : turn::RecoverAfterRestart{};
  return turn::RecoverAfterRestart{
      "owner_lost", "the daemon running this agent (" + previous + ") stopped during this turn"};
}

LiveAgent::LiveAgent(AgentEnv env, SessionInfo info, std::uint64_t generation)
    : env_(std::move(env)), info_(std::move(info)), generation_(generation) {}

LiveAgent::~LiveAgent() {
  // The manager went away without stopping this agent: nobody will answer these otherwise.
  stopping_ = true;
  for (auto& fn : std::exchange(when_ready_, {})) fn(RuntimeStopping());
  for (auto& [id, done] : std::exchange(awaiting_, {})) done(RuntimeStopping());
  for (Deferred& d : std::exchange(deferred_, {})) d.fn(RuntimeStopping());
}

Result<std::shared_ptr<LiveAgent>> LiveAgent::Open(AgentEnv env, const SessionInfo& info,
                                                   const OwnerGrant& grant,
                                                   const turn::RecoverAfterRestart* own) {
  AS_ASSIGN_OR_RETURN(HistoryFold history,
                      LoadHistory(*env.log, info.id, info.epoch, Seq(0), info.meta.provider));
  const std::string daemon_id = env.options.ownership.daemon_id;
  std::shared_ptr<LiveAgent> agent(new LiveAgent(std::move(env), info, grant.lease.generation));
  agent->record_ = DecodeStatusRecord(info.meta.status_snapshot);
  api::AgentConfig& config = agent->config_;
  config.session_id = info.id;
  config.provider = info.meta.provider;
  config.cwd = info.meta.cwd;
  config.title = info.meta.title;
  config.model = history.model;
  config.mode = history.mode;
  agent->capabilities_ = history.capabilities;
  agent->thinking_ = history.thinking;
  const std::optional<providers::PersistenceHandle> resume =
      DecodeHandle(info.meta.persistence_handle);
  AS_ASSIGN_OR_RETURN(agent->provider_,
                      agent->env_.factory->Make(config, resume, *agent->env_.loop));
  agent->resuming_ = resume.has_value();
  agent->acked_tail_ = std::max(info.tail, history.through);
  agent->checkpoint_seq_ = Seq(history.through.value() - history.events_read);
  agent->StoreCheckpoint(history, false);
  turn::TurnState state = std::move(history.turns).Finish();
  const std::size_t left_open = state.open.size();
  agent->desired_status_ = agent->durable_status_ = turn::SessionStatusOf(state);
  agent->durable_permissions_ = PendingRequests(state);
  LiveAgent* self = agent.get();
  agent->runner_ = std::make_unique<providers::SessionRunner>(
      *agent->provider_, std::move(state), *agent->env_.ids,
      [self](const std::vector<NewEvent>& batch) { self->Append(batch); },
      [self](const turn::Effect& effect) { self->OnEffect(effect); });
  // A runtime that stopped without closing these turns (a restart, a lost owner, failed appends).
  if (left_open > 0) {
    const turn::RecoverAfterRestart recovery = RecoveryFor(grant, daemon_id, own);
    log::Info("agent.recovered",
              {{"agent", info.id.str()}, {"open_turns", left_open}, {"code", recovery.code}});
    (void)agent->runner_->Command(recovery);
  }
  agent->StartRuntime();
  return agent;
}

void LiveAgent::StartRuntime() {
  std::weak_ptr<bool> alive = alive_;
  start_timer_ = env_.timers().After(env_.options.start_timeout, [this, alive] {
    if (!alive.lock()) return;
    OnStarted(Error(ErrorCode::kUnavailable,
                    "the runtime did not become ready within " +
                        std::to_string(env_.options.start_timeout.count()) + " ms"));
  });
  // The provider's processes log as this agent's (process/child_process.h).
  log::Scope scope({{"agent", info_.id.str()}, {"provider", config_.provider}});
  provider_->Start([this, alive](const Status& s) {
    if (alive.lock()) OnStarted(s);
  });
}

void LiveAgent::OnStarted(const Status& status) {
  if (ready_ || start_error_ || stopping_) return;  // the timer or the provider came first
  start_timer_.reset();
  if (!status.ok() && resuming_) {
    // The provider's own session could not be resumed (never saved, or gone): a new one keeps
    // the agent usable. Out of the provider's callback first: its provider is replaced.
    resuming_ = false;
    std::weak_ptr<LiveAgent> weak = weak_from_this();
    env_.loop->Post([weak, why = status.message()] {
      if (std::shared_ptr<LiveAgent> agent = weak.lock()) agent->StartFresh(why);
    });
    return;
  }
  if (status.ok()) {
    ready_ = true;
    log::Info("agent.runtime_started", {{"agent", info_.id.str()},
                                        {"provider", config_.provider},
                                        {"pid", provider_->GetRuntimeInfo().pid}});
    if (std::optional<providers::PersistenceHandle> handle = provider_->DescribePersistence()) {
      std::string text = EncodeHandle(*handle);
      if (text != info_.meta.persistence_handle) {
        Status stored = env_.log->UpdateSessionMeta(
            info_.id, SessionMetaUpdate{text, std::nullopt, generation_});
        if (stored.ok()) info_.meta.persistence_handle = std::move(text);
      }
    }
  } else {
    start_error_ = Error(ErrorCode::kUnavailable,
                         "the " + config_.provider + " runtime did not start: " + status.message());
    Append({MakeNewEvent(ErrorEvent{"runtime_start_failed", start_error_->message(), true})});
    env_.notify(AgentNotice::Kind::kError, Snapshot(), start_error_->message());
  }
  if (!start_error_) {
    RecordCapabilities();
    // Prompts the log holds queued (from before a restart or a takeover) go first.
    (void)runner_->Command(turn::ResumeQueue{});
    for (auto& fn : std::exchange(when_ready_, {})) fn(Status::Ok());
    MaybeArmIdle();
    return;
  }
  // Answered once the Error event is durable (or refused).
  AfterAppended([this](const Status&) {
    start_reported_ = true;
    for (auto& fn : std::exchange(when_ready_, {})) fn(*start_error_);
    env_.unload(info_.id, weak_from_this());
  });
}

void LiveAgent::StartFresh(const std::string& why) {
  if (ready_ || start_error_ || stopping_) return;
  Append({MakeNewEvent(Notice{NoticeLevel::kWarning,
                              "the " + config_.provider + " session could not be resumed (" + why +
                                  "); this agent goes on in a new one, without its memory of the "
                                  "earlier turns"})});
  Result<std::unique_ptr<providers::AgentProvider>> fresh =
      env_.factory->Make(config_, std::nullopt, *env_.loop);
  if (!fresh.ok()) return OnStarted(fresh.status());
  turn::TurnState state = runner_->state();
  runner_.reset();  // its subscription goes with the old provider
  provider_ = std::move(*fresh);
  LiveAgent* self = this;
  runner_ = std::make_unique<providers::SessionRunner>(
      *provider_, std::move(state), *env_.ids,
      [self](const std::vector<NewEvent>& batch) { self->Append(batch); },
      [self](const turn::Effect& effect) { self->OnEffect(effect); });
  StartRuntime();
}

void LiveAgent::WhenReady(std::function<void(Status)> fn) {
  if (stopping_) return fn(RuntimeStopping());
  if (start_error_ && start_reported_) return fn(*start_error_);
  if (ready_) return fn(Status::Ok());
  when_ready_.push_back(std::move(fn));
}

// ---- Append pipeline ----

void LiveAgent::Append(const std::vector<NewEvent>& batch) {
  const std::uint64_t index = ++issued_;
  if (append_error_) return;  // refused: every later batch would be refused too (see Fail)
  LogFailedTurns(info_.id, batch);
  if (std::optional<Usage> used = UsageIn(batch); used && info_.meta.usage) {
    // The log adds the same reports to the stored totals in the append's transaction. First, so
    // that the status notice of a turn's end already counts its usage.
    deferred_.push_back({index, [this, used = *used](const Status& s) {
                           if (s.ok() && info_.meta.usage) AddUsage(*info_.meta.usage, used);
                         }});
  }
  const SessionStatus status = runner_->status();
  if (status != desired_status_) {
    desired_status_ = status;
    const std::uint64_t generation = ++status_generation_;
    if (IsOpenStatus(status)) {
      // Stored before the events that open the turn: restart recovery must find this session.
      PersistStatus(status);
    } else {
      // Stored after the events that close the turn are durable.
      deferred_.push_back({index, [this, generation, status](const Status& s) {
                             if (s.ok() && generation == status_generation_) PersistStatus(status);
                           }});
    }
  }
  deferred_.push_back(
      {index, [this, status, asking = PendingRequests(runner_->state())](const Status& s) {
         if (!s.ok()) return;
         durable_status_ = status;
         durable_permissions_ = asking;
       }});
  AppendRequest request;
  request.session = info_.id;
  request.epoch = info_.epoch;
  request.producer = ProducerStamp{kRuntimeProducer, generation_, index - 1};
  request.events = batch;
  request.owner_generation = generation_;
  std::shared_ptr<LoopGate> gate = env_.gate;
  std::weak_ptr<LiveAgent> weak = weak_from_this();
  env_.log->AppendAsync(std::move(request), [gate, weak, index](Result<AppendResult> result) {
    gate->Post([weak, index, result = std::move(result)] {
      if (std::shared_ptr<LiveAgent> agent = weak.lock()) agent->OnAppended(index, result);
    });
  });
}

void LiveAgent::OnAppended(std::uint64_t batch, const Result<AppendResult>& result) {
  if (!result.ok()) return Fail(result.status());
  acked_ = std::max(acked_, batch);
  acked_tail_ = std::max(acked_tail_, result->last_seq);
  RunDeferred();
  if (acked_tail_.value() - checkpoint_seq_.value() >= kCheckpointEvery) RefreshCheckpoint();
}

void LiveAgent::RefreshCheckpoint() {
  if (append_error_ || acked_tail_ <= checkpoint_seq_) return;
  // Through the log's tail: whichever checkpoint is stored (another load's may be newer than
  // this runtime's view) is at or before it, so only the events after it are read.
  Result<HistoryFold> history =
      LoadHistory(*env_.log, info_.id, info_.epoch, Seq(0), info_.meta.provider);
  if (!history.ok()) {
    checkpoint_seq_ = acked_tail_;  // tried again kCheckpointEvery events later
    return;
  }
  StoreCheckpoint(*history, true);
}

void LiveAgent::StoreCheckpoint(const HistoryFold& history, bool any) {
  if (history.events_read == 0) {
    checkpoint_seq_ = history.through;  // the fold started from the stored checkpoint, at its end
    return;
  }
  if (!any && history.events_read < kCheckpointEvery) return;  // too few events to be worth one
  // A checkpoint only saves reading: when it cannot be stored, the next load reads more.
  (void)SaveHistoryCheckpoint(*env_.log, info_.id, info_.epoch, history);
  checkpoint_seq_ = history.through;
}

void LiveAgent::Fail(const Status& status) {
  if (append_error_) return RunDeferred();
  fenced_ = status.code() == ErrorCode::kFenced;
  if (fenced_) {
    log::Warn(
        "ownership.fenced",
        {{"agent", info_.id.str()}, {"generation", generation_}, {"reason", status.message()}});
  }
  // A fenced runtime lost its lease: for its clients that is "try again" (the new owner answers).
  const ErrorCode code =
      status.code() == ErrorCode::kFenced ? ErrorCode::kUnavailable : status.code();
  append_error_ =
      Status(code, "the log refused events of session " + info_.id.str() + ": " + status.message());
  RunDeferred();
  env_.notify(AgentNotice::Kind::kError, Snapshot(), append_error_->message());
  env_.unload(info_.id, weak_from_this());
}

void LiveAgent::Fence(const std::string& why) {
  Fail(Error(ErrorCode::kFenced, "this daemon no longer owns the agent: " + why));
}

void LiveAgent::AfterAppended(std::function<void(Status)> fn) {
  deferred_.push_back({issued_, std::move(fn)});
  RunDeferred();
}

void LiveAgent::RunDeferred() {
  while (!deferred_.empty()) {
    Deferred& front = deferred_.front();
    Status status;
    if (front.batch > acked_) {
      if (!append_error_) return;
      status = *append_error_;
    }
    std::function<void(Status)> fn = std::move(front.fn);
    deferred_.pop_front();
    fn(status);
  }
}

void LiveAgent::PersistStatus(SessionStatus status) {
  StatusRecord record = record_;
  record.status = status;
  const providers::RuntimeInfo runtime = provider_->GetRuntimeInfo();
  if (!runtime.model.empty()) record.model = runtime.model;
  if (!runtime.mode.empty()) record.mode = runtime.mode;
  const turn::TurnState& state = runner_->state();
  record.queued = !state.queue.empty() || state.pending_after_teardown.has_value();
  Status stored = StoreRecord(record);
  if (!stored.ok()) {
    env_.notify(AgentNotice::Kind::kError, Snapshot(),
                "cannot store the session's status: " + stored.message());
    return;
  }
  record_ = std::move(record);
}

void LiveAgent::Rename(const std::string& title, Callback<api::AgentSnapshot> done) {
  if (stopping_) return done(Error(ErrorCode::kUnavailable, "the agent's runtime is stopping"));
  Append({MakeNewEvent(SessionTitled{title})});
  std::weak_ptr<bool> alive = alive_;
  // The log takes the title from the event, in the append's transaction.
  AfterAppended([this, alive, title, done = std::move(done)](const Status& appended) {
    if (!alive.lock() || !appended.ok()) return done(appended);
    info_.meta.title = title;
    api::AgentSnapshot renamed = Snapshot();
    env_.notify(AgentNotice::Kind::kStatus, renamed, "");
    done(std::move(renamed));
  });
}

Status LiveAgent::SetClosed(bool closed) {
  StatusRecord record = record_;
  record.closed = closed;
  AS_RETURN_IF_ERROR(StoreRecord(record));
  record_ = std::move(record);
  return Status::Ok();
}

Status LiveAgent::StoreRecord(const StatusRecord& record) {
  return env_.log->UpdateSessionMeta(
      info_.id, SessionMetaUpdate{std::nullopt, EncodeStatusRecord(record), generation_});
}

// ---- Engine effects ----

void LiveAgent::OnEffect(const turn::Effect& effect) {
  if (const auto* reply = std::get_if<turn::ReplySubmission>(&effect)) return OnReply(*reply);
  if (std::holds_alternative<turn::RuntimeExited>(effect)) {
    // A process that exits before its runtime is ready fails the start instead (OnStarted: a new
    // provider session when the resume failed, else the start error): replacing the runtime
    // would resume the same dead conversation again, and again.
    if (!ready_) return;
    // Once the failed turns and the notice are durable; the next runtime resumes the session.
    return AfterAppended([this](const Status&) { env_.replace(info_.id, weak_from_this()); });
  }
  if (std::holds_alternative<turn::StatusChanged>(effect)) {
    // A runtime may learn or change its lists during a turn (claude names its slash commands in
    // its first turn's init, ACP agents send available_commands_update).
    RecordCapabilities();
    AfterAppended([this](const Status& s) {
      if (!s.ok()) return;
      env_.notify(AgentNotice::Kind::kStatus, Snapshot(), "");
      MaybeArmIdle();
    });
  }
}

// An answer that is not the one Submit() got back from the runner: to a send awaiting its turn's
// start, or to a prompt whose sender was answered already (it was queued).
void LiveAgent::OnReply(const turn::ReplySubmission& reply) {
  auto it = awaiting_.find(reply.client_message_id);
  if (it == awaiting_.end()) {
    // Canceled, or a queued prompt that left the queue for its turn; a retry changes nothing.
    if (reply.outcome != turn::SubmissionOutcome::kDuplicate) NotifyQueue(reply);
    return;
  }
  Callback<api::SendReply> done = std::move(it->second);
  awaiting_.erase(it);
  if (ChangesQueue(reply)) NotifyQueue(reply);
  Answer(std::move(done), reply);
}

bool LiveAgent::ChangesQueue(const turn::ReplySubmission& reply) {
  return reply.outcome == turn::SubmissionOutcome::kQueued ||
         reply.outcome == turn::SubmissionOutcome::kCanceled;
}

void LiveAgent::NotifyQueue(const turn::ReplySubmission& reply) {
  AfterAppended([this, id = reply.client_message_id](const Status& s) {
    if (s.ok()) env_.notify(AgentNotice::Kind::kQueued, Snapshot(), id);
  });
}

void LiveAgent::Answer(Callback<api::SendReply> done, const turn::ReplySubmission& reply) {
  AfterAppended([this, done = std::move(done), reply](const Status& s) {
    if (!s.ok()) return done(s);
    done(MakeReply(reply));
  });
}

api::SendReply LiveAgent::MakeReply(const turn::ReplySubmission& reply) const {
  return api::SendReply{reply.outcome, reply.outcome == turn::SubmissionOutcome::kAccepted,
                        reply.turn, Cursor{info_.epoch, acked_tail_}, reply.message};
}

// ---- Client commands ----

void LiveAgent::Send(api::SendRequest request, Callback<api::SendReply> done) {
  if (stopping_) return done(RuntimeStopping());
  if (open_sends_ >= env_.options.max_pending_sends) {
    return done(Error(ErrorCode::kUnavailable, "too many prompts of this session are waiting (" +
                                                   std::to_string(env_.options.max_pending_sends) +
                                                   ")"));
  }
  ++open_sends_;
  idle_timer_.reset();
  std::weak_ptr<bool> alive = alive_;
  Callback<api::SendReply> counted = [this, alive,
                                      done = std::move(done)](Result<api::SendReply> r) {
    if (alive.lock()) {
      --open_sends_;
      MaybeArmIdle();
    }
    done(std::move(r));
  };
  WhenReady([this, request = std::move(request), counted](const Status& s) mutable {
    if (!s.ok()) return counted(s);
    Submit(std::move(request), std::move(counted));
  });
}

void LiveAgent::Submit(api::SendRequest request, Callback<api::SendReply> done) {
  if (stopping_) return done(RuntimeStopping());
  const std::string id = request.client_message_id;
  const turn::TurnState& state = runner_->state();
  if (state.queue.size() >= env_.options.max_queued_prompts &&
      !state.known_client_ids.Contains(id)) {
    return done(Error(
        ErrorCode::kUnavailable,
        "too many prompts are queued (" + std::to_string(env_.options.max_queued_prompts) + ")"));
  }
  Result<std::optional<turn::ReplySubmission>> reply = runner_->Command(turn::SubmitPrompt{
      id, std::move(request.text), std::move(request.attachments), request.while_running});
  if (!reply.ok()) return done(reply.status());
  // No answer yet: the prompt started a turn that the provider has yet to accept (or it waits
  // behind a running step); OnReply answers it.
  if (!*reply) {
    awaiting_[id] = std::move(done);
    return;
  }
  if (ChangesQueue(**reply)) NotifyQueue(**reply);
  Answer(std::move(done), **reply);
}

void LiveAgent::CancelQueued(const std::string& client_message_id, const StatusCallback& done) {
  const turn::TurnState& state = runner_->state();
  const bool queued = std::any_of(state.queue.begin(), state.queue.end(),
                                  [&](const turn::SubmitPrompt& p) {
                                    return p.client_message_id == client_message_id;
                                  }) ||
                      (state.pending_after_teardown &&
                       state.pending_after_teardown->client_message_id == client_message_id);
  if (!queued) return done(Error(ErrorCode::kNotFound, "no queued prompt " + client_message_id));
  const Status status = runner_->Command(turn::CancelQueuedPrompt{client_message_id}).status();
  if (!status.ok()) return done(status);
  AfterAppended(done);  // prompt.canceled is durable before the client hears of it
}

void LiveAgent::Interrupt(StatusCallback done) {
  if (!ready_ || runner_->state().open.empty()) return done(Status::Ok());
  const Status status = runner_->Command(turn::RequestInterrupt{}).status();
  if (!status.ok()) return done(status);
  AfterAppended(std::move(done));
}

void LiveAgent::ReplyPermission(const turn::ReplyPermission& reply, StatusCallback done) {
  const Status status = runner_->Command(reply).status();
  if (!status.ok()) return done(status);
  AfterAppended(std::move(done));
}

void LiveAgent::SetMode(const std::string& mode, StatusCallback done) {
  std::weak_ptr<bool> alive = alive_;
  WhenReady([this, alive, mode, done = std::move(done)](const Status& s) mutable {
    if (!s.ok()) return done(s);
    provider_->SetMode(mode, [this, alive, done = std::move(done)](const Status& set) {
      if (!alive.lock() || !set.ok()) return done(set);
      RecordCapabilities();  // a mode may change the models or commands offered
      AfterAppended(done);   // the provider's ModeChanged went through the engine
    });
  });
}

void LiveAgent::SetModel(const std::string& model, StatusCallback done) {
  std::weak_ptr<bool> alive = alive_;
  WhenReady([this, alive, model, done = std::move(done)](const Status& s) mutable {
    if (!s.ok()) return done(s);
    provider_->SetModel(model, [this, alive, done = std::move(done)](const Status& set) {
      if (!alive.lock() || !set.ok()) return done(set);
      RecordCapabilities();  // a model may change the thinking options offered
      AfterAppended(done);   // the provider's ModelChanged went through the engine
    });
  });
}

void LiveAgent::SetThinking(const std::string& option, StatusCallback done) {
  std::weak_ptr<bool> alive = alive_;
  WhenReady([this, alive, option, done = std::move(done)](const Status& s) mutable {
    if (!s.ok()) return done(s);
    provider_->SetThinkingOption(
        option, [this, alive, option, done = std::move(done)](const Status& set) mutable {
          if (!alive.lock() || !set.ok()) return done(set);
          if (thinking_ != option && !stopping_) {
            thinking_ = option;
            Append({MakeNewEvent(ThinkingOptionChanged{option})});
          }
          AfterAppended([this, alive, done = std::move(done)](const Status& appended) {
            if (alive.lock() && appended.ok())
              env_.notify(AgentNotice::Kind::kStatus, Snapshot(), "");
            done(appended);
          });
        });
  });
}

void LiveAgent::RecordCapabilities() {
  if (!ready_ || stopping_ || append_error_) return;
  CapabilitiesChanged now = providers::DescribeCapabilities(*provider_);
  if (capabilities_ ? *capabilities_ == now : now == CapabilitiesChanged{}) return;
  capabilities_ = now;
  Append({MakeNewEvent(std::move(now))});
  std::weak_ptr<bool> alive = alive_;
  AfterAppended([this, alive](const Status& appended) {
    if (alive.lock() && appended.ok()) env_.notify(AgentNotice::Kind::kStatus, Snapshot(), "");
  });
}

// ---- Stop ----

void LiveAgent::MaybeArmIdle() {
  const bool idle = ready_ && !stopping_ && !IsOpenStatus(runner_->status()) && open_sends_ == 0 &&
                    runner_->state().queue.empty() && !runner_->state().pending_after_teardown;
  if (!idle) {
    idle_since_.reset();
  } else if (!idle_since_) {
    idle_since_ = env_.timers().Now();
  }
  if (!idle || env_.options.idle_stop_after.count() == 0) {
    idle_timer_.reset();
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  idle_timer_ = env_.timers().After(env_.options.idle_stop_after, [this, alive] {
    if (!alive.lock()) return;
    idle_timer_.reset();
    const bool still_idle = !stopping_ && !IsOpenStatus(runner_->status()) && open_sends_ == 0 &&
                            runner_->state().queue.empty();
    if (still_idle) env_.unload(info_.id, weak_from_this());
  });
}

void LiveAgent::Stop(const StopMode& mode, std::function<void()> done) {
  if (stopped_) return done();
  stop_waiters_.push_back(std::move(done));
  if (stopping_) return;
  stopping_ = true;
  idle_timer_.reset();
  idle_since_.reset();
  start_timer_.reset();
  for (auto& fn : std::exchange(when_ready_, {})) fn(RuntimeStopping());
  const process::Clock::time_point now = env_.timers().Now();
  stop_deadline_ = now + env_.options.stop_timeout;
  if (!append_error_) {
    // No queued prompt starts from here on: each one is canceled, or stays queued in the log.
    (void)runner_->Command(turn::HoldQueue{});
    if (mode.cancel_queue) {
      const turn::TurnState& state = runner_->state();
      std::vector<std::string> queued;
      if (state.pending_after_teardown)
        queued.push_back(state.pending_after_teardown->client_message_id);
      for (const turn::SubmitPrompt& p : state.queue) queued.push_back(p.client_message_id);
      for (const std::string& id : queued)
        (void)runner_->Command(turn::CancelQueuedPrompt{id, mode.reason});
    }
  }
  if (ready_ && !append_error_) {
    if (!runner_->state().open.empty()) {
      (void)runner_->Command(turn::RequestInterrupt{});
      last_interrupt_ = now;
    }
  }
  CheckStop();
}

void LiveAgent::CheckStop() {
  if (closing_provider_) return;
  const process::Clock::time_point now = env_.timers().Now();
  const bool turns_open = ready_ && !append_error_ && !runner_->state().open.empty();
  const bool appends_pending = !append_error_ && acked_ < issued_;
  std::weak_ptr<bool> alive = alive_;
  if ((turns_open || appends_pending) && now < stop_deadline_) {
    if (turns_open && now - last_interrupt_ >= kReinterruptAfter) {
      (void)runner_->Command(turn::RequestInterrupt{});  // a turn that started meanwhile
      last_interrupt_ = now;
    }
    stop_timer_ = env_.timers().After(kStopPoll, [this, alive] {
      if (alive.lock()) CheckStop();
    });
    return;
  }
  closing_provider_ = true;
  provider_->Close([this, alive](const Status&) {
    if (!alive.lock()) return;
    // Out of the provider's callback before anyone may destroy this agent.
    env_.loop->Post([weak = weak_from_this()] {
      if (std::shared_ptr<LiveAgent> agent = weak.lock()) agent->FinishStop();
    });
  });
}

void LiveAgent::FinishStop() {
  stop_timer_.reset();
  for (auto& [id, done] : std::exchange(awaiting_, {}))
    done(Error(ErrorCode::kUnavailable, "the runtime stopped before the prompt's turn started"));
  const turn::TurnState& state = runner_->state();
  const bool queued = !state.queue.empty() || state.pending_after_teardown.has_value();
  if (!append_error_ && (record_.status != runner_->status() || record_.queued != queued))
    PersistStatus(runner_->status());
  RefreshCheckpoint();  // the next load reads nothing
  log::Info("agent.runtime_stopped", {{"agent", info_.id.str()}});
  stopped_ = true;
  for (auto& fn : std::exchange(stop_waiters_, {})) fn();
}

// ---- Snapshot ----

api::AgentSnapshot LiveAgent::Snapshot() const {
  api::AgentSnapshot s;
  s.id = info_.id;
  s.provider = info_.meta.provider;
  s.cwd = info_.meta.cwd;
  s.title = info_.meta.title;
  s.usage = info_.meta.usage;
  const providers::RuntimeInfo runtime = provider_->GetRuntimeInfo();
  s.model = !runtime.model.empty() ? runtime.model : config_.model.value_or(record_.model);
  s.mode = !runtime.mode.empty() ? runtime.mode : config_.mode.value_or(record_.mode);
  const turn::TurnState& state = runner_->state();
  s.status = durable_status_;
  if (state.foreground) {
    s.active_turn = state.foreground;
  } else {
    const turn::Run* newest = nullptr;
    for (const auto& [id, run] : state.open)
      if (!newest || run.order > newest->order) newest = &run;
    if (newest) s.active_turn = newest->id;
  }
  s.cursor = Cursor{info_.epoch, acked_tail_};
  if (state.pending_after_teardown) {
    s.queue.push_back(api::QueuedPrompt{state.pending_after_teardown->client_message_id,
                                        state.pending_after_teardown->text});
  }
  for (const turn::SubmitPrompt& p : state.queue)
    s.queue.push_back(api::QueuedPrompt{p.client_message_id, p.text});
  for (const providers::PendingPermission& p : provider_->PendingPermissions())
    if (durable_permissions_.contains(p.request_id))
      s.permissions.push_back(api::PendingPermissionInfo{p.request_id, p.call_id, p.tool_name});
  s.created_ms = info_.meta.created_ms;
  s.forked_from = info_.forked_from;
  s.loaded = !closing_provider_;
  s.closed = record_.closed;
  s.imported = record_.imported;
  if (!append_error_) s.owner = env_.options.ownership.daemon_id;
  s.thinking = thinking_.value_or("");
  s.capabilities = capabilities_;
  return s;
}

}  // namespace agentstream::runtime
