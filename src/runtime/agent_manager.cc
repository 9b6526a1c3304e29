#include "runtime/agent_manager.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/turn/engine.h"
#include "runtime/agent_session.h"
#include "runtime/session_records.h"

namespace agentstream::runtime {

namespace {

// The notice watchers; shared with the Subscriptions, which may outlive the manager.
struct NoticeHub {
  std::mutex mu;
  std::uint64_t next = 0;
  std::map<std::uint64_t, std::shared_ptr<NoticeWatcher>> watchers;
};

Status ShutDown() { return Error(ErrorCode::kUnavailable, "the agent manager was shut down"); }

Status ValidateCursor(const SessionInfo& info, Cursor at) {
  if (at.epoch != info.epoch) {
    return Error(ErrorCode::kConflict, "cursor " + FormatCursor(at) +
                                           " is not in the session's current epoch " +
                                           std::to_string(info.epoch.value()));
  }
  if (at.seq.value() == 0 || at.seq > info.tail) {
    return Error(ErrorCode::kInvalidArgument, "cursor " + FormatCursor(at) +
                                                  " is not an event of the session (tail " +
                                                  FormatCursor({info.epoch, info.tail}) + ")");
  }
  return Status::Ok();
}

AgentSnapshot StoredSnapshot(const SessionInfo& info) {
  const StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  AgentSnapshot s;
  s.id = info.id;
  s.provider = info.meta.provider;
  s.cwd = info.meta.cwd;
  s.title = info.meta.title;
  s.model = record.model;
  s.mode = record.mode;
  s.status = record.status.value_or(turn::SessionStatus::kIdle);
  s.cursor = Cursor{info.epoch, info.tail};
  s.created_ms = info.meta.created_ms;
  s.forked_from = info.forked_from;
  s.closed = record.closed;
  return s;
}

}  // namespace

class AgentManager::Impl {
 public:
  Impl(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
       AgentManagerOptions options)
      : log_(log),
        factory_(factory),
        loop_(loop),
        options_(options),
        gate_(std::make_shared<LoopGate>(loop)) {}
  ~Impl() {
    gate_->Close();
    alive_.reset();   // nothing posted from here on runs
    agents_.clear();  // their destructors answer what still waits
  }

  // Runs `fn` on the loop thread unless the manager is gone by then.
  void Run(std::function<void(Impl&)> fn) {
    if (!alive_) return;
    std::weak_ptr<bool> alive = alive_;
    loop_.Post([this, alive, fn = std::move(fn)] {
      if (alive.lock()) fn(*this);
    });
  }

  void Recover(const StatusCallback& done);
  void Create(const AgentConfig& config, const Callback<AgentSnapshot>& done);
  void List(bool include_closed, const Callback<std::vector<AgentSnapshot>>& done);
  Result<AgentSnapshot> Get(const SessionId& id);
  void Close(const SessionId& id, const StatusCallback& done);
  // The live agent of `id`, loading (and reopening) it when needed.
  Result<std::shared_ptr<LiveAgent>> Load(const SessionId& id);
  // Load(), after the stop of a runtime that is stopping (it then loads afresh).
  void WithAgent(const SessionId& id, std::function<void(Result<std::shared_ptr<LiveAgent>>)> fn);
  // The live agent of `id` when one is attached.
  std::shared_ptr<LiveAgent> Live(const SessionId& id) const {
    auto it = agents_.find(id);
    return it == agents_.end() ? nullptr : it->second;
  }
  void AppendForeign(const SessionId& id, std::vector<NewEvent> events, ProducerStamp stamp,
                     Callback<AppendResult> done);
  void Fork(const SessionId& id, Cursor at, const Callback<AgentSnapshot>& done);
  void Rewind(const SessionId& id, Cursor to, const Callback<AgentSnapshot>& done);
  Subscription Watch(NoticeWatcher watcher);
  void Shutdown(std::function<void()> done);
  bool shut_down() const { return shut_down_; }

 private:
  AgentEnv MakeEnv();
  void Notify(AgentNotice::Kind kind, const AgentSnapshot& agent, const std::string& message);
  Status RecoverSession(const SessionInfo& info);
  // Stops the live agent of `id` (if any), drops it, then runs `then`.
  void Unload(const SessionId& id, std::function<void()> then);
  Result<AgentSnapshot> MarkClosed(const SessionId& id);
  // The initial events of a fork or rewind at `at`: `first`, then TurnCanceled for every turn
  // still open at `at`. `status` gets the status the new history ends in.
  Result<std::vector<NewEvent>> BranchEvents(const SessionInfo& info, Cursor at,
                                             const Payload& first, const std::string& reason,
                                             turn::SessionStatus* status);

  EventLog& log_;
  ProviderFactory& factory_;
  process::EventLoop& loop_;
  AgentManagerOptions options_;
  std::shared_ptr<LoopGate> gate_;
  std::shared_ptr<NoticeHub> hub_ = std::make_shared<NoticeHub>();
  RandomTurnIds turn_ids_;
  RandomIds session_ids_;
  std::map<SessionId, std::shared_ptr<LiveAgent>> agents_;
  bool shut_down_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

AgentEnv AgentManager::Impl::MakeEnv() {
  AgentEnv env;
  env.log = &log_;
  env.loop = &loop_;
  env.factory = &factory_;
  env.ids = &turn_ids_;
  env.gate = gate_;
  env.options = options_;
  env.notify = [this](AgentNotice::Kind kind, const AgentSnapshot& agent, const std::string& m) {
    Notify(kind, agent, m);
  };
  env.unload = [this](const SessionId& id) { Run([id](Impl& impl) { impl.Unload(id, [] {}); }); };
  return env;
}

void AgentManager::Impl::Notify(AgentNotice::Kind kind, const AgentSnapshot& agent,
                                const std::string& message) {
  std::vector<std::shared_ptr<NoticeWatcher>> watchers;
  {
    std::lock_guard lock(hub_->mu);
    for (const auto& [id, w] : hub_->watchers) watchers.push_back(w);
  }
  const AgentNotice notice{kind, agent, message};
  for (const auto& w : watchers) (*w)(notice);
}

Subscription AgentManager::Impl::Watch(NoticeWatcher watcher) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(hub_->mu);
    id = hub_->next++;
    hub_->watchers[id] = std::make_shared<NoticeWatcher>(std::move(watcher));
  }
  return Subscription([weak = std::weak_ptr<NoticeHub>(hub_), id] {
    if (std::shared_ptr<NoticeHub> hub = weak.lock()) {
      std::lock_guard lock(hub->mu);
      hub->watchers.erase(id);
    }
  });
}

// ---- Restart recovery ----

void AgentManager::Impl::Recover(const StatusCallback& done) {
  Status first_error;
  std::string after;
  while (true) {
    Result<std::vector<SessionInfo>> page = log_.ListSessions(after, kListPage);
    if (!page.ok()) return done(page.status());
    for (const SessionInfo& info : *page) {
      if (agents_.count(info.id)) continue;
      if (!MayHaveOpenTurn(DecodeStatusRecord(info.meta.status_snapshot))) continue;
      Status s = RecoverSession(info);
      if (!s.ok() && first_error.ok()) {
        first_error = Status(s.code(), "recovering " + info.id.str() + ": " + s.message());
      }
    }
    if (page->size() < kListPage) break;
    after = page->back().id.str();
  }
  done(first_error);
}

Status AgentManager::Impl::RecoverSession(const SessionInfo& info) {
  AS_ASSIGN_OR_RETURN(std::vector<Event> events, ReadEpoch(log_, info.id, info.epoch));
  turn::TurnState state = turn::RestoreTurnState(events, info.meta.provider);
  if (!state.open.empty()) {
    turn::Step step =
        turn::Advance(std::move(state), turn::Command(turn::RecoverAfterRestart{}), turn_ids_);
    if (!step.events.empty()) {
      const Seq tail = events.empty() ? info.tail : events.back().seq;
      AS_RETURN_IF_ERROR(
          log_.Append(AppendRequest{info.id, info.epoch, tail, std::nullopt, step.events})
              .status());
    }
    state = std::move(step.state);
  }
  StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  record.status = turn::SessionStatusOf(state);
  std::optional<std::string> model, mode;
  LastModelAndMode(events, &model, &mode);
  if (record.model.empty()) record.model = model.value_or("");
  if (record.mode.empty()) record.mode = mode.value_or("");
  return log_.UpdateSessionMeta(
      info.id, SessionMetaUpdate{std::nullopt, std::nullopt, EncodeStatusRecord(record)});
}

// ---- Sessions ----

void AgentManager::Impl::Create(const AgentConfig& config, const Callback<AgentSnapshot>& done) {
  if (shut_down_) return done(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  const std::vector<std::string> names = factory_.Names();
  if (std::find(names.begin(), names.end(), config.provider) == names.end())
    return done(Error(ErrorCode::kInvalidArgument, "unknown provider \"" + config.provider + "\""));
  if (config.cwd.empty())
    return done(Error(ErrorCode::kInvalidArgument, "an agent needs a working directory (cwd)"));
  if (agents_.size() >= options_.max_live_agents) {
    return done(Error(ErrorCode::kUnavailable,
                      "too many live agents (" + std::to_string(options_.max_live_agents) + ")"));
  }
  const SessionId id(session_ids_.Next("ses"));
  const StatusRecord record{turn::SessionStatus::kIdle, false, config.model.value_or(""),
                            config.mode.value_or("")};
  SessionMeta meta{config.provider,           config.cwd, config.title.value_or(""), 0, "",
                   EncodeStatusRecord(record)};
  Result<AppendResult> created =
      log_.CreateSession(id, std::move(meta),
                         {MakeNewEvent(SessionCreated{config.provider, config.cwd, config.title,
                                                      config.model, config.mode})});
  if (!created.ok()) return done(created.status());
  Result<std::shared_ptr<LiveAgent>> agent = Load(id);
  if (!agent.ok()) return done(agent.status());
  Notify(AgentNotice::Kind::kCreated, (*agent)->Snapshot(), "");
  (*agent)->WhenReady([weak = std::weak_ptr<LiveAgent>(*agent), done](const Status& s) {
    std::shared_ptr<LiveAgent> live = weak.lock();
    if (!s.ok()) return done(s);
    if (!live) return done(Error(ErrorCode::kUnavailable, "the agent stopped"));
    done(live->Snapshot());
  });
}

Result<std::shared_ptr<LiveAgent>> AgentManager::Impl::Load(const SessionId& id) {
  if (std::shared_ptr<LiveAgent> live = Live(id)) {
    if (live->stopping())
      return Error(ErrorCode::kUnavailable, "the session's runtime is stopping");
    return live;
  }
  if (shut_down_) return Error(ErrorCode::kUnavailable, "the daemon is stopping");
  if (agents_.size() >= options_.max_live_agents) {
    return Error(ErrorCode::kUnavailable,
                 "too many live agents (" + std::to_string(options_.max_live_agents) + ")");
  }
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  AS_ASSIGN_OR_RETURN(std::shared_ptr<LiveAgent> agent, LiveAgent::Open(MakeEnv(), info));
  agents_[id] = agent;
  if (agent->closed()) (void)agent->SetClosed(false);  // a prompt reopens a closed session
  return agent;
}

void AgentManager::Impl::WithAgent(const SessionId& id,
                                   std::function<void(Result<std::shared_ptr<LiveAgent>>)> fn) {
  if (std::shared_ptr<LiveAgent> live = Live(id); live && live->stopping()) {
    // Its Unload() waiter (registered first) drops it; this one then loads it again.
    live->Stop([this, alive = std::weak_ptr<bool>(alive_), id, fn = std::move(fn)]() mutable {
      if (alive.lock()) WithAgent(id, std::move(fn));
    });
    return;
  }
  fn(Load(id));
}

void AgentManager::Impl::List(bool include_closed,
                              const Callback<std::vector<AgentSnapshot>>& done) {
  std::vector<AgentSnapshot> out;
  std::string after;
  while (true) {
    Result<std::vector<SessionInfo>> page = log_.ListSessions(after, kListPage);
    if (!page.ok()) return done(page.status());
    for (const SessionInfo& info : *page) {
      std::shared_ptr<LiveAgent> live = Live(info.id);
      AgentSnapshot s = live ? live->Snapshot() : StoredSnapshot(info);
      if (include_closed || !s.closed) out.push_back(std::move(s));
    }
    if (page->size() < kListPage) break;
    after = page->back().id.str();
  }
  done(std::move(out));
}

void AgentManager::Impl::AppendForeign(const SessionId& id, std::vector<NewEvent> events,
                                       ProducerStamp stamp, Callback<AppendResult> done) {
  if (shut_down_) return done(ShutDown());
  if (std::shared_ptr<LiveAgent> live = Live(id)) {
    if (!live->stopping()) return live->AppendForeign(std::move(events), std::move(stamp), done);
    // Its last batches may still be in flight: append once it has stopped.
    live->Stop([this, alive = std::weak_ptr<bool>(alive_), id, events = std::move(events),
                stamp = std::move(stamp), done = std::move(done)]() mutable {
      if (alive.lock()) AppendForeign(id, std::move(events), std::move(stamp), std::move(done));
    });
    return;
  }
  // No runtime writes this session: append directly. Synchronously, so that a load of the session
  // on this thread cannot read its tail while the append is in flight.
  done(log_.Append(
      AppendRequest{id, std::nullopt, std::nullopt, std::move(stamp), std::move(events)}));
}

Result<AgentSnapshot> AgentManager::Impl::Get(const SessionId& id) {
  if (std::shared_ptr<LiveAgent> live = Live(id)) return live->Snapshot();
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  return StoredSnapshot(info);
}

void AgentManager::Impl::Unload(const SessionId& id, std::function<void()> then) {
  std::shared_ptr<LiveAgent> agent = Live(id);
  if (!agent) return then();
  agent->Stop([this, alive = std::weak_ptr<bool>(alive_), id, weak = std::weak_ptr(agent),
               then = std::move(then)] {
    if (!alive.lock()) return;
    auto it = agents_.find(id);
    if (it != agents_.end() && it->second == weak.lock()) agents_.erase(it);
    then();
  });
}

Result<AgentSnapshot> AgentManager::Impl::MarkClosed(const SessionId& id) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  record.closed = true;
  info.meta.status_snapshot = EncodeStatusRecord(record);
  AS_RETURN_IF_ERROR(log_.UpdateSessionMeta(
      id, SessionMetaUpdate{std::nullopt, std::nullopt, info.meta.status_snapshot}));
  return StoredSnapshot(info);
}

void AgentManager::Impl::Close(const SessionId& id, const StatusCallback& done) {
  if (!Live(id)) {
    if (Result<SessionInfo> info = log_.GetSession(id); !info.ok()) return done(info.status());
  }
  Unload(id, [this, id, done] {
    Result<AgentSnapshot> closed = MarkClosed(id);
    if (!closed.ok()) return done(closed.status());
    Notify(AgentNotice::Kind::kDisposed, *closed, "");
    done(Status::Ok());
  });
}

// ---- Fork and rewind ----

Result<std::vector<NewEvent>> AgentManager::Impl::BranchEvents(const SessionInfo& info, Cursor at,
                                                               const Payload& first,
                                                               const std::string& reason,
                                                               turn::SessionStatus* status) {
  AS_ASSIGN_OR_RETURN(std::vector<Event> prefix, ReadEpoch(log_, info.id, at.epoch, at.seq));
  const turn::TurnState state = turn::RestoreTurnState(prefix, info.meta.provider);
  std::vector<NewEvent> events{MakeNewEvent(first)};
  for (NewEvent& e : CancelOpenTurns(state, reason)) events.push_back(std::move(e));
  *status = state.errored ? turn::SessionStatus::kError : turn::SessionStatus::kIdle;
  return events;
}

void AgentManager::Impl::Fork(const SessionId& id, Cursor at, const Callback<AgentSnapshot>& done) {
  if (shut_down_) return done(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  Result<SessionInfo> info = log_.GetSession(id);
  if (!info.ok()) return done(info.status());
  if (Status s = ValidateCursor(*info, at); !s.ok()) return done(s);
  turn::SessionStatus status = turn::SessionStatus::kIdle;
  Result<std::vector<NewEvent>> initial =
      BranchEvents(*info, at, SessionForked{id, at.epoch, at.seq},
                   "the session was forked before this turn ended", &status);
  if (!initial.ok()) return done(initial.status());
  StatusRecord record = DecodeStatusRecord(info->meta.status_snapshot);
  record.status = status;
  record.closed = false;
  SessionMeta meta = info->meta;
  meta.created_ms = 0;
  meta.persistence_handle.clear();  // the runtime's own session holds the parent's whole history
  meta.status_snapshot = EncodeStatusRecord(record);
  const SessionId child(session_ids_.Next("ses"));
  Result<AppendResult> forked = log_.Fork(id, at, child, std::move(meta), std::move(*initial));
  if (!forked.ok()) return done(forked.status());
  Result<AgentSnapshot> snapshot = Get(child);
  if (!snapshot.ok()) return done(snapshot.status());
  Notify(AgentNotice::Kind::kCreated, *snapshot, "");
  done(std::move(snapshot));
}

void AgentManager::Impl::Rewind(const SessionId& id, Cursor to,
                                const Callback<AgentSnapshot>& done) {
  if (shut_down_) return done(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  Result<SessionInfo> before = log_.GetSession(id);
  if (!before.ok()) return done(before.status());
  if (Status s = ValidateCursor(*before, to); !s.ok()) return done(s);
  // The runtime stops first: its conversation holds the history the rewind drops.
  Unload(id, [this, id, to, done] {
    Result<SessionInfo> info = log_.GetSession(id);
    if (!info.ok()) return done(info.status());
    if (Status s = ValidateCursor(*info, to); !s.ok()) return done(s);
    turn::SessionStatus status = turn::SessionStatus::kIdle;
    Result<std::vector<NewEvent>> initial =
        BranchEvents(*info, to, SessionRewound{info->epoch, to.epoch, to.seq},
                     "the session was rewound before this turn ended", &status);
    if (!initial.ok()) return done(initial.status());
    Result<AppendResult> rewound = log_.Rewind(id, to, std::move(*initial));
    if (!rewound.ok()) return done(rewound.status());
    StatusRecord record = DecodeStatusRecord(info->meta.status_snapshot);
    record.status = status;
    Status stored = log_.UpdateSessionMeta(
        id, SessionMetaUpdate{std::nullopt, std::string(), EncodeStatusRecord(record)});
    if (!stored.ok()) return done(stored);
    Result<AgentSnapshot> snapshot = Get(id);
    if (!snapshot.ok()) return done(snapshot.status());
    Notify(AgentNotice::Kind::kStatus, *snapshot, "");
    done(std::move(snapshot));
  });
}

void AgentManager::Impl::Shutdown(std::function<void()> done) {
  shut_down_ = true;
  std::vector<SessionId> ids;
  for (const auto& [id, agent] : agents_) ids.push_back(id);
  if (ids.empty()) return done();
  auto remaining = std::make_shared<std::size_t>(ids.size());
  auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
  for (const SessionId& id : ids) {
    Unload(id, [remaining, shared_done] {
      if (--*remaining == 0) (*shared_done)();
    });
  }
}

// ---- AgentManager: every call hops to the loop thread ----

AgentManager::AgentManager(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
                           AgentManagerOptions options)
    : impl_(std::make_unique<Impl>(log, factory, loop, options)) {}

AgentManager::~AgentManager() = default;

void AgentManager::Recover(StatusCallback done) {
  impl_->Run([done = std::move(done)](Impl& impl) { impl.Recover(done); });
}

void AgentManager::Create(AgentConfig config, Callback<AgentSnapshot> done) {
  impl_->Run([config = std::move(config), done = std::move(done)](Impl& impl) {
    impl.Create(config, done);
  });
}

void AgentManager::List(bool include_closed, Callback<std::vector<AgentSnapshot>> done) {
  impl_->Run(
      [include_closed, done = std::move(done)](Impl& impl) { impl.List(include_closed, done); });
}

void AgentManager::Get(const SessionId& id, Callback<AgentSnapshot> done) {
  impl_->Run([id, done = std::move(done)](Impl& impl) { done(impl.Get(id)); });
}

void AgentManager::Close(const SessionId& id, StatusCallback done) {
  impl_->Run([id, done = std::move(done)](Impl& impl) {
    if (impl.shut_down()) return done(ShutDown());
    impl.Close(id, done);
  });
}

void AgentManager::Send(const SessionId& id, SendRequest request, Callback<SendReply> done) {
  impl_->Run([id, request = std::move(request), done = std::move(done)](Impl& impl) mutable {
    if (request.client_message_id.empty())
      return done(Error(ErrorCode::kInvalidArgument, "a prompt needs a client message id"));
    impl.WithAgent(id, [request = std::move(request),
                        done = std::move(done)](Result<std::shared_ptr<LiveAgent>> agent) mutable {
      if (!agent.ok()) return done(agent.status());
      (*agent)->Send(std::move(request), std::move(done));
    });
  });
}

void AgentManager::CancelQueued(const SessionId& id, std::string client_message_id,
                                StatusCallback done) {
  impl_->Run(
      [id, client_message_id = std::move(client_message_id), done = std::move(done)](Impl& impl) {
        if (std::shared_ptr<LiveAgent> live = impl.Live(id))
          return live->CancelQueued(client_message_id, done);
        if (Result<AgentSnapshot> s = impl.Get(id); !s.ok()) return done(s.status());
        done(Error(ErrorCode::kNotFound, "no queued prompt " + client_message_id));
      });
}

void AgentManager::Interrupt(const SessionId& id, StatusCallback done) {
  impl_->Run([id, done = std::move(done)](Impl& impl) {
    if (std::shared_ptr<LiveAgent> live = impl.Live(id)) return live->Interrupt(done);
    done(impl.Get(id).status());  // nothing runs without a runtime
  });
}

void AgentManager::ReplyPermission(const SessionId& id, turn::ReplyPermission reply,
                                   StatusCallback done) {
  impl_->Run([id, reply = std::move(reply), done = std::move(done)](Impl& impl) {
    if (std::shared_ptr<LiveAgent> live = impl.Live(id)) return live->ReplyPermission(reply, done);
    if (Result<AgentSnapshot> s = impl.Get(id); !s.ok()) return done(s.status());
    done(Error(ErrorCode::kNotFound, "no pending permission request " + reply.request_id.str()));
  });
}

void AgentManager::SetMode(const SessionId& id, std::string mode, StatusCallback done) {
  impl_->Run([id, mode = std::move(mode), done = std::move(done)](Impl& impl) {
    impl.WithAgent(id, [mode, done](Result<std::shared_ptr<LiveAgent>> agent) {
      if (!agent.ok()) return done(agent.status());
      (*agent)->SetMode(mode, done);
    });
  });
}

void AgentManager::SetModel(const SessionId& id, std::string model, StatusCallback done) {
  impl_->Run([id, model = std::move(model), done = std::move(done)](Impl& impl) {
    impl.WithAgent(id, [model, done](Result<std::shared_ptr<LiveAgent>> agent) {
      if (!agent.ok()) return done(agent.status());
      (*agent)->SetModel(model, done);
    });
  });
}

void AgentManager::AppendForeign(const SessionId& id, std::vector<NewEvent> events,
                                 ProducerStamp stamp, Callback<AppendResult> done) {
  impl_->Run([id, events = std::move(events), stamp = std::move(stamp),
              done = std::move(done)](Impl& impl) mutable {
    impl.AppendForeign(id, std::move(events), std::move(stamp), std::move(done));
  });
}

void AgentManager::Fork(const SessionId& id, Cursor at, Callback<AgentSnapshot> done) {
  impl_->Run([id, at, done = std::move(done)](Impl& impl) { impl.Fork(id, at, done); });
}

void AgentManager::Rewind(const SessionId& id, Cursor to, Callback<AgentSnapshot> done) {
  impl_->Run([id, to, done = std::move(done)](Impl& impl) { impl.Rewind(id, to, done); });
}

Subscription AgentManager::WatchNotices(NoticeWatcher watcher) {
  return impl_->Watch(std::move(watcher));
}

void AgentManager::Shutdown(std::function<void()> done) {
  impl_->Run([done = std::move(done)](Impl& impl) { impl.Shutdown(done); });
}

}  // namespace agentstream::runtime
