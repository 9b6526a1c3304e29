#include "runtime/agent_manager.h"

#include <fmt/core.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>

#include "core/turn/engine.h"
#include "core/utf8.h"
#include "log/log.h"
#include "runtime/manager_impl.h"

namespace agentstream::runtime {

namespace {

Status ShutDown() { return Error(ErrorCode::kUnavailable, "the agent manager was shut down"); }

Status DaemonStopping() { return Error(ErrorCode::kUnavailable, "the daemon is stopping"); }

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

// Sessions whose stored status is told to watchers while they run elsewhere.
constexpr std::size_t kMaxRemoteStatuses = 10000;
// Commits of remote sessions are gathered this long before their status is read.
constexpr process::Millis kRemoteStatusDelay{50};

}  // namespace

api::AgentSnapshot StoredSnapshot(const SessionInfo& info) {
  const StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  api::AgentSnapshot s;
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
  if (info.owner.live()) s.owner = info.owner.owner;
  s.usage = info.meta.usage;
  s.imported = record.imported;
  return s;
}

AgentManager::Impl::Impl(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
                         AgentManagerOptions options, Forwarder* forwarder)
    : log_(log),
      factory_(factory),
      loop_(loop),
      options_(std::move(options)),
      forwarder_(forwarder),
      gate_(std::make_shared<LoopGate>(loop)) {
  std::weak_ptr<bool> alive = alive_;
  commits_ = log_.SubscribeCommits([gate = gate_, alive, this](const CommitNotice& notice) {
    gate->Post([alive, this, id = notice.session] {
      if (alive.lock()) WatchRemoteStatus(id);
    });
  });
  LeaseKeeper::Callbacks callbacks;
  callbacks.lost = [gate = gate_, alive, this](std::vector<SessionId> lost) {
    gate->Post([alive, this, lost = std::move(lost)] {
      if (alive.lock()) OnLeasesLost(lost);
    });
  };
  callbacks.expired = [gate = gate_, alive, this](auto expired) {
    gate->Post([alive, this, expired = std::move(expired)] {
      if (alive.lock()) OnLeasesExpired(expired);
    });
  };
  keeper_ = std::make_unique<LeaseKeeper>(log_.coordination(), timers(), options_.ownership,
                                          std::move(callbacks));
  Run([](Impl& impl) { impl.CheckOverdue(); });
}

AgentManager::Impl::~Impl() {
  keeper_.reset();  // no report arrives from here on
  gate_->Close();
  alive_.reset();  // nothing posted from here on runs
  timers_.clear();
  overdue_timer_.reset();
  agents_.clear();  // their destructors answer what still waits
}

void AgentManager::Impl::Run(std::function<void(Impl&)> fn) {
  if (!alive_) return;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive, fn = std::move(fn)] {
    if (alive.lock()) fn(*this);
  });
}

std::shared_ptr<LiveAgent> AgentManager::Impl::Live(const SessionId& id) const {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : it->second;
}

bool AgentManager::Impl::MakeRoom() {
  std::size_t running = 0;
  std::shared_ptr<LiveAgent> oldest;
  for (const auto& [id, agent] : agents_) {
    if (agent->stopping()) continue;
    ++running;
    if (agent->idle_since() && (!oldest || *agent->idle_since() < *oldest->idle_since()))
      oldest = agent;
  }
  if (running < options_.max_live_agents) return true;
  if (!oldest) return false;
  log::Info("agent.evicted", {{"agent", oldest->id().str()}, {"reason", "max_live_agents"}});
  Unload(oldest->id(), StopMode{}, false, [](auto) {});
  return true;
}

bool AgentManager::Impl::IsCurrent(const SessionId& id, const std::weak_ptr<LiveAgent>& agent) {
  std::shared_ptr<LiveAgent> live = agent.lock();
  return live != nullptr && Live(id) == live;
}

AgentEnv AgentManager::Impl::MakeEnv() {
  AgentEnv env;
  env.log = &log_;
  env.loop = &loop_;
  env.factory = &factory_;
  env.ids = &turn_ids_;
  env.gate = gate_;
  env.options = options_;
  env.notify = [this](AgentNotice::Kind kind, const api::AgentSnapshot& agent,
                      const std::string& m) { Notify(kind, agent, m); };
  env.unload = [this](const SessionId& id, const std::weak_ptr<LiveAgent>& agent) {
    Run([id, agent](Impl& impl) {
      if (!impl.IsCurrent(id, agent)) return;
      std::shared_ptr<LiveAgent> live = agent.lock();
      std::optional<Status> refused = live ? live->refused() : std::nullopt;
      impl.Unload(id, StopMode{}, false, [&impl, id, refused = std::move(refused)](auto) {
        if (refused) impl.RecoverRefused(id, *refused, 0);
      });
    });
  };
  env.replace = [this](const SessionId& id, const std::weak_ptr<LiveAgent>& agent) {
    Run([id, agent](Impl& impl) {
      if (impl.IsCurrent(id, agent)) impl.Replace(id);
    });
  };
  return env;
}

namespace {

// The log line of a notice: lifecycle and errors at info and warn, the chatter at debug.
void LogNotice(AgentNotice::Kind kind, const api::AgentSnapshot& agent,
               const std::string& message) {
  const std::string id = agent.id.str();
  switch (kind) {
    case AgentNotice::Kind::kCreated:
      if (agent.forked_from) {
        return log::Info("agent.forked", {{"agent", id},
                                          {"provider", agent.provider},
                                          {"from", agent.forked_from->session.str()}});
      }
      return log::Info("agent.created", {{"agent", id}, {"provider", agent.provider}});
    case AgentNotice::Kind::kDisposed:
      return log::Info("agent.closed", {{"agent", id}});
    case AgentNotice::Kind::kError:
      return log::Warn("agent.error", {{"agent", id}, {"error", message}});
    case AgentNotice::Kind::kStatus:
      return log::Debug("agent.status",
                        {{"agent", id}, {"status", turn::SessionStatusName(agent.status)}});
    case AgentNotice::Kind::kQueued:
      return log::Debug("agent.queue_changed", {{"agent", id}, {"client_message_id", message}});
  }
}

}  // namespace

void AgentManager::Impl::Notify(AgentNotice::Kind kind, const api::AgentSnapshot& agent,
                                const std::string& message) {
  LogNotice(kind, agent, message);
  std::vector<std::shared_ptr<NoticeWatcher>> watchers;
  {
    std::lock_guard lock(hub_->mu);
    for (const auto& [id, w] : hub_->watchers) watchers.push_back(w);
  }
  const AgentNotice notice{kind, agent, message};
  for (const auto& w : watchers) (*w)(notice);
}

ListenerRegistration AgentManager::Impl::Watch(NoticeWatcher watcher) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(hub_->mu);
    id = hub_->next++;
    hub_->watchers[id] = std::make_shared<NoticeWatcher>(std::move(watcher));
  }
  return ListenerRegistration([weak = std::weak_ptr<NoticeHub>(hub_), id] {
    if (std::shared_ptr<NoticeHub> hub = weak.lock()) {
      std::lock_guard lock(hub->mu);
      hub->watchers.erase(id);
    }
  });
}

void AgentManager::Impl::WatchRemoteStatus(const SessionId& id) {
  if (Live(id)) return;  // its runtime here tells its own status
  remote_dirty_.insert(id);
  if (remote_flush_scheduled_) return;
  remote_flush_scheduled_ = true;
  After(kRemoteStatusDelay, [this] { FlushRemoteStatus(); });
}

void AgentManager::Impl::FlushRemoteStatus() {
  remote_flush_scheduled_ = false;
  for (const SessionId& id : std::exchange(remote_dirty_, {})) {
    if (Live(id)) continue;
    Result<SessionInfo> info = log_.GetSession(id);
    if (!info.ok()) continue;
    const api::AgentSnapshot snapshot = StoredSnapshot(*info);
    auto it = remote_status_.find(id);
    if (it != remote_status_.end() && it->second == snapshot.status) continue;
    if (remote_status_.size() >= kMaxRemoteStatuses) remote_status_.clear();
    remote_status_[id] = snapshot.status;
    if (it != remote_status_.end() || snapshot.status != turn::SessionStatus::kIdle)
      Notify(AgentNotice::Kind::kStatus, snapshot, "");
  }
}

// ---- Loading ----

Result<std::shared_ptr<LiveAgent>> AgentManager::Impl::Load(const SessionId& id,
                                                            std::string* owner) {
  if (std::shared_ptr<LiveAgent> live = Live(id)) {
    if (live->stopping())
      return Error(ErrorCode::kUnavailable, "the session's runtime is stopping");
    return live;
  }
  if (shut_down_) return DaemonStopping();
  if (!MakeRoom()) {
    return Error(ErrorCode::kUnavailable, "too many live agents (" +
                                              std::to_string(options_.max_live_agents) +
                                              "), none of them idle");
  }
  const process::Clock::time_point sent = Now();
  Result<OwnerGrant> grant = Acquire(id);
  if (!grant.ok()) {
    if (grant.status().code() == ErrorCode::kConflict && owner != nullptr) {
      if (Result<OwnerLease> lease = coordination().GetOwnership(id); lease.ok())
        *owner = lease->owner;
    }
    return grant.status();
  }
  return Attach(id, *grant, sent);
}

Result<std::shared_ptr<LiveAgent>> AgentManager::Impl::Attach(const SessionId& id,
                                                              const OwnerGrant& grant,
                                                              process::Clock::time_point sent) {
  keeper_->Track(id, grant.lease.generation, sent);
  Result<SessionInfo> info = log_.GetSession(id);
  // A runtime of this daemon whose events the log refused left turns open (RecoverRefused).
  auto refused = refused_.find(id);
  Result<std::shared_ptr<LiveAgent>> agent =
      info.ok() ? LiveAgent::Open(MakeEnv(), *info, grant,
                                  refused != refused_.end() ? &refused->second : nullptr)
                : info.status();
  if (!agent.ok()) {
    Release(id, grant.lease.generation);
    return agent.status();
  }
  agents_[id] = *agent;
  remote_status_.erase(id);
  if ((*agent)->closed()) (void)(*agent)->SetClosed(false);  // a prompt reopens a closed session
  return agent;
}

void AgentManager::Impl::Release(const SessionId& id, std::uint64_t generation) {
  keeper_->Untrack(id, generation);
  // Refused with kFenced when another daemon took the session over meanwhile: nothing to free.
  (void)coordination().ReleaseOwnership(id, generation);
}

void AgentManager::Impl::Unload(const SessionId& id, const StopMode& mode, bool keep_lease,
                                std::function<void(std::optional<std::uint64_t>)> then) {
  std::shared_ptr<LiveAgent> agent = Live(id);
  if (!agent) return then(std::nullopt);
  agent->Stop(mode, [this, alive = std::weak_ptr<bool>(alive_), id, keep_lease,
                     weak = std::weak_ptr(agent), then = std::move(then)] {
    if (!alive.lock()) return;
    std::shared_ptr<LiveAgent> stopped = weak.lock();
    auto it = agents_.find(id);
    if (stopped && it != agents_.end() && it->second == stopped) agents_.erase(it);
    if (!stopped) return then(std::nullopt);
    const std::uint64_t generation = stopped->generation();
    if (keep_lease && !stopped->failed()) return then(generation);
    Release(id, generation);
    then(std::nullopt);
  });
}

void AgentManager::Impl::Replace(const SessionId& id) {
  std::shared_ptr<LiveAgent> agent = Live(id);
  if (!agent) return;
  const bool queued = agent->Snapshot().queue.size() > 0;
  Unload(id, StopMode{}, false, [this, id, queued](auto) {
    if (!queued || shut_down_ || Live(id)) return;
    // The prompts waiting run on a new runtime (it resumes the conversation).
    Result<std::shared_ptr<LiveAgent>> reloaded = Load(id);
    if (reloaded.ok()) return;
    Result<api::AgentSnapshot> snapshot = Get(id);
    Notify(AgentNotice::Kind::kError, snapshot.ok() ? *snapshot : api::AgentSnapshot{},
           "the queued prompts wait for the next prompt: " + reloaded.status().message());
  });
}

// ---- Sessions ----

namespace {

Status CheckConfig(const api::AgentConfig& config) {
  if (config.title) AS_RETURN_IF_ERROR(CheckTitle(*config.title));
  if (config.cwd.empty())
    return Error(ErrorCode::kInvalidArgument, "an agent needs a working directory (cwd)");
  if (config.cwd.find('\0') != std::string::npos || !IsValidUtf8(config.cwd))
    return Error(ErrorCode::kInvalidArgument, "cwd must be UTF-8 text without NUL bytes");
  std::error_code ec;
  if (!std::filesystem::is_directory(config.cwd, ec)) {
    return Error(ErrorCode::kInvalidArgument,
                 "cwd " + config.cwd + " is not a directory" +
                     (ec ? ": " + ec.message() : std::string(" (it does not exist)")));
  }
  if (const std::optional<std::string>& key = config.client_request_id) {
    const bool printable =
        !key->empty() && key->size() <= 256 &&
        std::all_of(key->begin(), key->end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
    if (!printable)
      return Error(ErrorCode::kInvalidArgument,
                   "clientRequestId must be 1 to 256 printable ASCII characters");
  }
  return Status::Ok();
}

// Whether a stored session is what `config` asks for (a retry of the create that made it).
bool SameConfig(const SessionInfo& info, const api::AgentConfig& config) {
  return info.meta.provider == config.provider && info.meta.cwd == config.cwd &&
         info.meta.title == config.title.value_or("");
}

}  // namespace

Status CheckTitle(std::string_view title) {
  const bool control = std::any_of(title.begin(), title.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (title.size() > kMaxTitleBytes || control || !IsValidUtf8(title)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("a title must be UTF-8 text of at most {} bytes without control "
                             "characters",
                             kMaxTitleBytes));
  }
  return Status::Ok();
}

SessionId SessionIdForRequest(const std::string& key) {
  const std::string input = "agentstream create\n" + key;
  return SessionId(fmt::format("ses_{:016x}", XXH3_64bits(input.data(), input.size())));
}

namespace {

// session.created, then workspace.created when the agent runs in a worktree of its own.
std::vector<NewEvent> CreationEvents(const api::AgentConfig& config) {
  std::vector<NewEvent> events{MakeNewEvent(
      SessionCreated{config.provider, config.cwd, config.title, config.model, config.mode})};
  if (config.workspace) events.push_back(MakeNewEvent(*config.workspace));
  return events;
}

}  // namespace

void AgentManager::Impl::Create(const api::AgentConfig& config,
                                const Callback<api::AgentSnapshot>& done) {
  if (shut_down_) return done(DaemonStopping());
  if (Status runnable = factory_.CanRun(config.provider); !runnable.ok()) return done(runnable);
  if (Status s = CheckConfig(config); !s.ok()) return done(s);
  if (!MakeRoom()) {
    return done(Error(ErrorCode::kUnavailable, "too many live agents (" +
                                                   std::to_string(options_.max_live_agents) +
                                                   "), none of them idle"));
  }
  const SessionId id = config.session_id          ? *config.session_id
                       : config.client_request_id ? SessionIdForRequest(*config.client_request_id)
                                                  : SessionId(session_ids_.Next("ses"));
  const StatusRecord record{turn::SessionStatus::kIdle, false, config.model.value_or(""),
                            config.mode.value_or(""), false};
  SessionMeta meta{config.provider,           config.cwd, config.title.value_or(""), 0, "",
                   EncodeStatusRecord(record)};
  Result<AppendResult> created = log_.CreateSession(id, std::move(meta), CreationEvents(config));
  if (!created.ok() && created.status().code() == ErrorCode::kAlreadyExists &&
      config.client_request_id) {
    // A retry: the agent the first request made, as it is now.
    Result<SessionInfo> info = log_.GetSession(id);
    if (!info.ok()) return done(info.status());
    if (!SameConfig(*info, config)) {
      return done(Error(ErrorCode::kConflict, "clientRequestId " + *config.client_request_id +
                                                  " already made agent " + id.str() +
                                                  " with another configuration"));
    }
    return done(Get(id));
  }
  if (!created.ok()) return done(created.status());
  Result<std::shared_ptr<LiveAgent>> agent = Load(id);
  if (!agent.ok()) return done(agent.status());
  Notify(AgentNotice::Kind::kCreated, (*agent)->Snapshot(), "");
  (*agent)->WhenReady([this, alive = std::weak_ptr<bool>(alive_), id,
                       weak = std::weak_ptr<LiveAgent>(*agent), done](const Status& s) {
    std::shared_ptr<LiveAgent> live = weak.lock();
    if (s.ok() && live) return done(live->Snapshot());
    if (live && !live->stopping()) return done(s);  // its runtime did not start
    // Its runtime stopped before it was ready (this daemon lost the lease, or is stopping): the
    // agent exists all the same, and its next prompt starts a runtime wherever it is owned.
    if (!alive.lock()) return done(s);
    done(Get(id));
  });
}

void AgentManager::Impl::List(bool include_closed,
                              const Callback<std::vector<api::AgentSnapshot>>& done) {
  std::vector<api::AgentSnapshot> out;
  std::string after;
  while (true) {
    Result<std::vector<SessionInfo>> page = log_.ListSessions(after, kListPage);
    if (!page.ok()) return done(page.status());
    for (const SessionInfo& info : *page) {
      std::shared_ptr<LiveAgent> live = Live(info.id);
      api::AgentSnapshot s = live ? live->Snapshot() : StoredSnapshot(info);
      if (include_closed || !s.closed) out.push_back(std::move(s));
    }
    if (page->size() < kListPage) break;
    after = page->back().id.str();
  }
  done(std::move(out));
}

Result<api::AgentSnapshot> AgentManager::Impl::Get(const SessionId& id) {
  if (std::shared_ptr<LiveAgent> live = Live(id)) return live->Snapshot();
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  return StoredSnapshot(info);
}

void AgentManager::Impl::AppendForeign(const SessionId& id, std::vector<NewEvent> events,
                                       ProducerStamp stamp, Callback<AppendResult> done) {
  if (shut_down_) return done(ShutDown());
  std::size_t& in_flight = foreign_in_flight_[id];
  if (in_flight >= options_.max_pending_foreign) {
    return done(Error(ErrorCode::kUnavailable,
                      "too many deliveries waiting for session " + id.str() + " (" +
                          std::to_string(options_.max_pending_foreign) + ")"));
  }
  ++in_flight;
  // Whoever runs the session: the producer stamp keeps a redelivery exact, and the runtime's
  // own batches are ordered by their own stamp, so the two interleave safely.
  AppendRequest request;
  request.session = id;
  request.producer = std::move(stamp);
  request.events = std::move(events);
  log_.AppendAsync(std::move(request), [gate = gate_, alive = std::weak_ptr<bool>(alive_), this, id,
                                        done = std::move(done)](Result<AppendResult> result) {
    gate->Post([alive, this, id, done, result = std::move(result)] {
      if (!alive.lock()) return;
      if (auto it = foreign_in_flight_.find(id);
          it != foreign_in_flight_.end() && --it->second == 0)
        foreign_in_flight_.erase(it);
      done(result);
    });
  });
}

Result<api::AgentSnapshot> AgentManager::Impl::MarkClosed(const SessionId& id,
                                                          std::uint64_t generation) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  record.closed = true;
  record.queued = false;
  info.meta.status_snapshot = EncodeStatusRecord(record);
  AS_RETURN_IF_ERROR(log_.UpdateSessionMeta(
      id, SessionMetaUpdate{std::nullopt, info.meta.status_snapshot, generation}));
  return StoredSnapshot(info);
}

// ---- Fork and rewind ----

Result<std::vector<NewEvent>> AgentManager::Impl::BranchEvents(const SessionInfo& info, Cursor at,
                                                               const Payload& first,
                                                               const std::string& reason,
                                                               turn::SessionStatus* status,
                                                               HistoryFold* prefix) {
  // A foreground turn's prompt follows its turn.started: a prefix ending between the two would
  // hold a turn without its prompt.
  ReadRequest last;
  last.session = info.id;
  last.epoch = at.epoch;
  last.from = at.seq;
  last.max_items = 1;
  AS_ASSIGN_OR_RETURN(ReadResult read, log_.Read(last));
  if (!read.events.empty()) {
    AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(read.events.front()));
    if (const auto* started = std::get_if<TurnStarted>(&event.payload);
        started && started->origin == TurnOrigin::kForeground) {
      return Error(ErrorCode::kInvalidArgument,
                   "cursor " + FormatCursor(at) +
                       " is the start of a turn, before its prompt: branch at the event before "
                       "it or at its user message");
    }
  }
  AS_ASSIGN_OR_RETURN(*prefix, LoadHistory(log_, info.id, at.epoch, at.seq, info.meta.provider));
  const turn::TurnState& state = prefix->turns.state();
  std::vector<NewEvent> events{MakeNewEvent(first)};
  for (NewEvent& e : CancelOpenTurns(state, reason)) events.push_back(std::move(e));
  *status = state.errored ? turn::SessionStatus::kError : turn::SessionStatus::kIdle;
  return events;
}

void AgentManager::Impl::CheckpointBranch(const SessionId& id, Epoch epoch, HistoryFold prefix) {
  // Saves reading only: a branch without its checkpoint loads from its history.
  if (FoldHistory(log_, id, epoch, Seq(0), prefix).ok())
    (void)SaveHistoryCheckpoint(log_, id, epoch, prefix);
}

void AgentManager::Impl::Fork(const SessionId& id, Cursor at,
                              const Callback<api::AgentSnapshot>& done,
                              const std::optional<ForkWorkspace>& workspace) {
  if (shut_down_) return done(DaemonStopping());
  Result<SessionInfo> info = log_.GetSession(id);
  if (!info.ok()) return done(info.status());
  if (Status s = ValidateCursor(*info, at); !s.ok()) return done(s);
  turn::SessionStatus status = turn::SessionStatus::kIdle;
  HistoryFold prefix;
  Result<std::vector<NewEvent>> initial =
      BranchEvents(*info, at, SessionForked{id, at.epoch, at.seq},
                   "the session was forked before this turn ended", &status, &prefix);
  if (!initial.ok()) return done(initial.status());
  StatusRecord record = DecodeStatusRecord(info->meta.status_snapshot);
  record.status = status;
  record.closed = false;
  record.queued = false;
  SessionMeta meta = info->meta;
  meta.created_ms = 0;
  meta.persistence_handle.clear();  // the runtime's own session holds the parent's whole history
  meta.status_snapshot = EncodeStatusRecord(record);
  const SessionId child = workspace ? workspace->id : SessionId(session_ids_.Next("ses"));
  if (workspace) {
    meta.cwd = workspace->workspace.path;
    initial->insert(initial->begin() + 1, MakeNewEvent(workspace->workspace));
  }
  Result<AppendResult> forked = log_.Fork(id, at, child, std::move(meta), std::move(*initial));
  if (!forked.ok()) return done(forked.status());
  CheckpointBranch(child, forked->epoch, std::move(prefix));
  Result<api::AgentSnapshot> snapshot = Get(child);
  if (!snapshot.ok()) return done(snapshot.status());
  Notify(AgentNotice::Kind::kCreated, *snapshot, "");
  done(std::move(snapshot));
}

Result<api::AgentSnapshot> AgentManager::Impl::RewindWith(const SessionId& id, Cursor to,
                                                          std::uint64_t generation) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  AS_RETURN_IF_ERROR(ValidateCursor(info, to));
  turn::SessionStatus status = turn::SessionStatus::kIdle;
  HistoryFold prefix;
  AS_ASSIGN_OR_RETURN(
      std::vector<NewEvent> initial,
      BranchEvents(info, to, SessionRewound{info.epoch, to.epoch, to.seq},
                   "the session was rewound before this turn ended", &status, &prefix));
  AS_ASSIGN_OR_RETURN(AppendResult rewound, log_.Rewind(id, to, std::move(initial)));
  CheckpointBranch(id, rewound.epoch, std::move(prefix));
  StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  record.status = status;
  record.queued = false;
  AS_RETURN_IF_ERROR(log_.UpdateSessionMeta(
      id, SessionMetaUpdate{std::string(), EncodeStatusRecord(record), generation}));
  AS_ASSIGN_OR_RETURN(api::AgentSnapshot snapshot, Get(id));
  Notify(AgentNotice::Kind::kStatus, snapshot, "");
  return snapshot;
}

void AgentManager::Impl::Shutdown(std::function<void()> done) {
  shut_down_ = true;
  std::vector<SessionId> ids;
  for (const auto& [id, agent] : agents_) ids.push_back(id);
  if (ids.empty()) return done();
  auto remaining = std::make_shared<std::size_t>(ids.size());
  auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
  for (const SessionId& id : ids) {
    // Queued prompts stay queued in the log: they run when the session next loads.
    Unload(id, StopMode{}, false, [remaining, shared_done](auto) {
      if (--*remaining == 0) (*shared_done)();
    });
  }
}

void AgentManager::Impl::After(process::Millis delay, std::function<void()> fn) {
  const std::uint64_t number = next_timer_++;
  timers_[number] = timers().After(delay, [this, number, fn = std::move(fn)] {
    auto it = timers_.find(number);
    if (it == timers_.end()) return;
    std::unique_ptr<process::TimerHandle> self = std::move(it->second);
    timers_.erase(it);
    fn();
  });
}

// ---- AgentManager: every call hops to the loop thread ----

namespace {

// A routed command's answer, for a caller that wants a status only.
std::function<void(Result<AgentAnswer>)> AsStatus(StatusCallback done) {
  return [done = std::move(done)](const Result<AgentAnswer>& answer) { done(answer.status()); };
}

template <class T>
std::function<void(Result<AgentAnswer>)> As(Callback<T> done) {
  return [done = std::move(done)](Result<AgentAnswer> answer) {
    if (!answer.ok()) return done(answer.status());
    if (T* value = std::get_if<T>(&*answer)) return done(std::move(*value));
    done(Error(ErrorCode::kInternal, "the agent's owner answered with an unexpected shape"));
  };
}

}  // namespace

Status ProviderFactory::CanRun(const std::string& provider) const {
  const std::vector<std::string> names = Names();
  if (std::find(names.begin(), names.end(), provider) == names.end())
    return Error(ErrorCode::kInvalidArgument, "unknown provider \"" + provider + "\"");
  return Status::Ok();
}

AgentManager::AgentManager(EventLog& log, ProviderFactory& factory, process::EventLoop& loop,
                           AgentManagerOptions options, Forwarder* forwarder)
    : impl_(std::make_unique<Impl>(log, factory, loop, std::move(options), forwarder)) {}

AgentManager::~AgentManager() = default;

void AgentManager::Recover(StatusCallback done) {
  impl_->Run([done = std::move(done)](Impl& impl) { impl.Recover(done); });
}

void AgentManager::Create(api::AgentConfig config, Callback<api::AgentSnapshot> done) {
  impl_->Run([config = std::move(config), done = std::move(done)](Impl& impl) {
    impl.Create(config, done);
  });
}

void AgentManager::List(bool include_closed, Callback<std::vector<api::AgentSnapshot>> done) {
  impl_->Run(
      [include_closed, done = std::move(done)](Impl& impl) { impl.List(include_closed, done); });
}

void AgentManager::Get(const SessionId& id, Callback<api::AgentSnapshot> done) {
  impl_->Run([id, done = std::move(done)](Impl& impl) { done(impl.Get(id)); });
}

void AgentManager::Close(const SessionId& id, StatusCallback done, Forwarding forwarding) {
  impl_->Run([id, forwarding, done = std::move(done)](Impl& impl) mutable {
    if (impl.shut_down()) return done(ShutDown());
    impl.Dispatch(id, commands::Close{}, forwarding, AsStatus(std::move(done)));
  });
}

void AgentManager::Send(const SessionId& id, api::SendRequest request,
                        Callback<api::SendReply> done, Forwarding forwarding) {
  impl_->Run(
      [id, forwarding, request = std::move(request), done = std::move(done)](Impl& impl) mutable {
        // Refused before routing, so that it neither loads a runtime nor travels to another
        // daemon; the runtime's one check of it (LiveAgent::Send relies on it).
        if (request.client_message_id.empty())
          return done(Error(ErrorCode::kInvalidArgument, "a prompt needs a client message id"));
        impl.Dispatch(id, commands::Send{std::move(request)}, forwarding,
                      As<api::SendReply>(std::move(done)));
      });
}

void AgentManager::CancelQueued(const SessionId& id, std::string client_message_id,
                                StatusCallback done, Forwarding forwarding) {
  impl_->Run([id, forwarding, client_message_id = std::move(client_message_id),
              done = std::move(done)](Impl& impl) mutable {
    impl.Dispatch(id, commands::CancelQueued{std::move(client_message_id)}, forwarding,
                  AsStatus(std::move(done)));
  });
}

void AgentManager::Interrupt(const SessionId& id, StatusCallback done, Forwarding forwarding) {
  impl_->Run([id, forwarding, done = std::move(done)](Impl& impl) mutable {
    impl.Dispatch(id, commands::Interrupt{}, forwarding, AsStatus(std::move(done)));
  });
}

void AgentManager::ReplyPermission(const SessionId& id, turn::ReplyPermission reply,
                                   StatusCallback done, Forwarding forwarding) {
  impl_->Run(
      [id, forwarding, reply = std::move(reply), done = std::move(done)](Impl& impl) mutable {
        impl.Dispatch(id, commands::ReplyPermission{std::move(reply)}, forwarding,
                      AsStatus(std::move(done)));
      });
}

void AgentManager::SetMode(const SessionId& id, std::string mode, StatusCallback done,
                           Forwarding forwarding) {
  impl_->Run([id, forwarding, mode = std::move(mode), done = std::move(done)](Impl& impl) mutable {
    impl.Dispatch(id, commands::SetMode{std::move(mode)}, forwarding, AsStatus(std::move(done)));
  });
}

void AgentManager::SetModel(const SessionId& id, std::string model, StatusCallback done,
                            Forwarding forwarding) {
  impl_->Run([id, forwarding, model = std::move(model),
              done = std::move(done)](Impl& impl) mutable {
    impl.Dispatch(id, commands::SetModel{std::move(model)}, forwarding, AsStatus(std::move(done)));
  });
}

void AgentManager::SetThinking(const SessionId& id, std::string option, StatusCallback done,
                               Forwarding forwarding) {
  impl_->Run(
      [id, forwarding, option = std::move(option), done = std::move(done)](Impl& impl) mutable {
        impl.Dispatch(id, commands::SetThinking{std::move(option)}, forwarding,
                      AsStatus(std::move(done)));
      });
}

void AgentManager::Rename(const SessionId& id, std::string title, Callback<api::AgentSnapshot> done,
                          Forwarding forwarding) {
  if (Status s = CheckTitle(title); !s.ok()) return done(s);
  impl_->Run(
      [id, forwarding, title = std::move(title), done = std::move(done)](Impl& impl) mutable {
        if (impl.shut_down()) return done(ShutDown());
        impl.Dispatch(id, commands::Rename{std::move(title)}, forwarding,
                      As<api::AgentSnapshot>(std::move(done)));
      });
}

void AgentManager::AppendForeign(const SessionId& id, std::vector<NewEvent> events,
                                 ProducerStamp stamp, Callback<AppendResult> done) {
  impl_->Run([id, events = std::move(events), stamp = std::move(stamp),
              done = std::move(done)](Impl& impl) mutable {
    impl.AppendForeign(id, std::move(events), std::move(stamp), std::move(done));
  });
}

void AgentManager::Fork(const SessionId& id, Cursor at, Callback<api::AgentSnapshot> done,
                        std::optional<ForkWorkspace> workspace) {
  impl_->Run([id, at, done = std::move(done), workspace = std::move(workspace)](Impl& impl) {
    impl.Fork(id, at, done, workspace);
  });
}

void AgentManager::Rewind(const SessionId& id, Cursor to, Callback<api::AgentSnapshot> done,
                          Forwarding forwarding) {
  impl_->Run([id, to, forwarding, done = std::move(done)](Impl& impl) mutable {
    if (impl.shut_down()) return done(DaemonStopping());
    impl.Dispatch(id, commands::Rewind{to}, forwarding, As<api::AgentSnapshot>(std::move(done)));
  });
}

void AgentManager::SetAdvertisedUrl(std::string url) { impl_->keeper().SetUrl(std::move(url)); }

ListenerRegistration AgentManager::WatchNotices(NoticeWatcher watcher) {
  return impl_->Watch(std::move(watcher));
}

void AgentManager::Shutdown(std::function<void()> done) {
  impl_->Run([done = std::move(done)](Impl& impl) { impl.Shutdown(done); });
}

}  // namespace agentstream::runtime
