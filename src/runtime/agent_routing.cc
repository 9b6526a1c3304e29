// Where a command for one agent runs (agent_manager.h, "The commands below"; docs/architecture.md,
// "Agent ownership"): the runtime this daemon has; one it starts after taking the agent's lease;
// without a runtime, under the lease, for what needs none (closing, rewinding); or on the daemon
// that owns the agent, through the Forwarder. An owner that does not answer is waited for until
// its lease expires or moves; the command is then routed again, never to a second runtime.
#include <type_traits>

#include "runtime/manager_impl.h"

namespace agentstream::runtime {

namespace {

// Re-routings of one command (the owner changed while it travelled) before it fails.
constexpr int kMaxHops = 4;
// How often a silent owner's lease is looked at while a command waits for it.
constexpr process::Millis kOwnerPoll{200};

bool NeedsRuntime(const AgentCommand& command) {
  return std::holds_alternative<commands::Send>(command) ||
         std::holds_alternative<commands::CancelQueued>(command) ||
         std::holds_alternative<commands::SetMode>(command) ||
         std::holds_alternative<commands::SetModel>(command) ||
         std::holds_alternative<commands::SetThinking>(command);
}

std::function<void(Status)> StatusAnswer(std::function<void(Result<AgentAnswer>)> done) {
  return [done = std::move(done)](const Status& s) {
    if (!s.ok()) return done(s);
    done(AgentAnswer{});
  };
}

}  // namespace

void AgentManager::Impl::Dispatch(const SessionId& id, AgentCommand command, Forwarding forwarding,
                                  AnswerCallback done) {
  auto attempt = std::make_shared<Attempt>();
  attempt->id = id;
  attempt->command = std::move(command);
  attempt->forwarding = forwarding;
  attempt->done = std::move(done);
  attempt->deadline = Now() + options_.ownership.ttl + options_.ownership.renew_every;
  Route(attempt);
}

void AgentManager::Impl::Retry(const AttemptPtr& attempt) {
  if (++attempt->hops > kMaxHops) {
    return attempt->done(
        Error(ErrorCode::kUnavailable,
              "the daemon running agent " + attempt->id.str() + " kept changing; try again"));
  }
  Route(attempt);
}

void AgentManager::Impl::Route(const AttemptPtr& attempt) {
  const SessionId& id = attempt->id;
  if (shut_down_) return attempt->done(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  if (std::shared_ptr<LiveAgent> live = Live(id)) {
    if (!live->stopping()) return RunLocal(live, attempt);
    // Its Unload() waiter (registered first) drops it; this one then routes again.
    return live->Stop(StopMode{}, [this, alive = std::weak_ptr<bool>(alive_), attempt] {
      if (alive.lock()) Route(attempt);
    });
  }
  Result<SessionInfo> info = log_.GetSession(id);
  if (!info.ok()) return attempt->done(info.status());
  const OwnerLease& lease = info->owner;
  if (lease.live() && lease.owner != options_.ownership.daemon_id)
    return Forward(lease.owner, attempt);
  if (!NeedsRuntime(attempt->command)) return RunWithoutRuntime(attempt);
  std::string owner;
  Result<std::shared_ptr<LiveAgent>> agent = Load(id, &owner);
  if (agent.ok()) return RunLocal(*agent, attempt);
  if (agent.status().code() == ErrorCode::kConflict && !owner.empty())
    return Forward(owner, attempt);  // taken by another daemon meanwhile
  attempt->done(agent.status());
}

void AgentManager::Impl::RunLocal(const std::shared_ptr<LiveAgent>& agent,
                                  const AttemptPtr& attempt) {
  // A runtime may begin to stop after it took a command and before it ran it: its provider died
  // and it is being replaced, or it went idle. It refuses the command then, having recorded
  // nothing, and the command routes again, to the next runtime (the command stays in the
  // attempt, copied, not moved, for that).
  AnswerCallback done = [this, alive = std::weak_ptr<bool>(alive_), weak = std::weak_ptr(agent),
                         attempt](Result<AgentAnswer> answer) {
    std::shared_ptr<LiveAgent> stopping = weak.lock();
    if (answer.ok() || !alive.lock() || !stopping || !stopping->stopping() || shut_down_ ||
        answer.status().code() != ErrorCode::kUnavailable)
      return attempt->done(std::move(answer));
    stopping->Stop(StopMode{}, [this, alive, attempt] {
      if (alive.lock()) Retry(attempt);
    });
  };
  std::visit(
      [&](auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, commands::Send>) {
          agent->Send(c.request, [done](Result<api::SendReply> reply) {
            if (!reply.ok()) return done(reply.status());
            done(AgentAnswer{std::move(*reply)});
          });
        } else if constexpr (std::is_same_v<T, commands::CancelQueued>) {
          agent->CancelQueued(c.client_message_id, StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::Interrupt>) {
          agent->Interrupt(StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::ReplyPermission>) {
          agent->ReplyPermission(c.reply, StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::SetMode>) {
          agent->SetMode(c.mode, StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::SetModel>) {
          agent->SetModel(c.model, StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::SetThinking>) {
          agent->SetThinking(c.option, StatusAnswer(done));
        } else if constexpr (std::is_same_v<T, commands::Rename>) {
          agent->Rename(c.title, [done](Result<api::AgentSnapshot> renamed) {
            if (!renamed.ok()) return done(renamed.status());
            done(AgentAnswer{std::move(*renamed)});
          });
        } else if constexpr (std::is_same_v<T, commands::Close>) {
          CloseLive(attempt);
        } else {
          RewindLive(attempt, c.to);
        }
      },
      attempt->command);
}

void AgentManager::Impl::CloseLive(const AttemptPtr& attempt) {
  const SessionId id = attempt->id;
  Unload(id, StopMode{true, "the agent was closed"}, true,
         [this, id, attempt](std::optional<std::uint64_t> generation) {
           if (!generation) return Retry(attempt);  // it lost its lease while stopping
           Result<api::AgentSnapshot> closed = MarkClosed(id, *generation);
           Release(id, *generation);
           if (!closed.ok()) return attempt->done(closed.status());
           Notify(AgentNotice::Kind::kDisposed, *closed, "");
           attempt->done(AgentAnswer{std::move(*closed)});
         });
}

void AgentManager::Impl::RewindLive(const AttemptPtr& attempt, Cursor to) {
  const SessionId id = attempt->id;
  // The runtime stops first: its conversation holds the history the rewind drops.
  Unload(id, StopMode{true, "the session was rewound"}, true,
         [this, id, to, attempt](std::optional<std::uint64_t> generation) {
           if (!generation) return Retry(attempt);
           Result<api::AgentSnapshot> rewound = RewindWith(id, to, *generation);
           Release(id, *generation);
           if (!rewound.ok()) return attempt->done(rewound.status());
           attempt->done(AgentAnswer{std::move(*rewound)});
         });
}

void AgentManager::Impl::RunWithoutRuntime(const AttemptPtr& attempt) {
  if (std::holds_alternative<commands::Interrupt>(attempt->command))
    return attempt->done(AgentAnswer{});  // nothing runs without a runtime
  if (const auto* c = std::get_if<commands::ReplyPermission>(&attempt->command)) {
    return attempt->done(
        Error(ErrorCode::kNotFound, "no pending permission request " + c->reply.request_id.str()));
  }
  if (std::holds_alternative<commands::Close>(attempt->command)) {
    return WithLease(
        attempt,
        [this, id = attempt->id](const OwnerGrant& grant,
                                 turn::TurnState& state) -> Result<AgentAnswer> {
          // Prompts a stopped runtime left queued will not run in a closed session.
          std::vector<NewEvent> canceled = CancelQueuedPrompts(state, "the agent was closed");
          if (!canceled.empty()) {
            AppendRequest request;
            request.session = id;
            request.events = std::move(canceled);
            request.owner_generation = grant.lease.generation;
            AS_RETURN_IF_ERROR(log_.Append(std::move(request)).status());
          }
          AS_ASSIGN_OR_RETURN(api::AgentSnapshot closed, MarkClosed(id, grant.lease.generation));
          Notify(AgentNotice::Kind::kDisposed, closed, "");
          return AgentAnswer{std::move(closed)};
        });
  }
  if (const auto* c = std::get_if<commands::Rename>(&attempt->command)) {
    return WithLease(attempt,
                     [this, id = attempt->id, title = c->title](
                         const OwnerGrant& grant, turn::TurnState&) -> Result<AgentAnswer> {
                       AppendRequest request;
                       request.session = id;
                       request.events = {MakeNewEvent(SessionTitled{title})};
                       request.owner_generation = grant.lease.generation;
                       // The log takes the title from the event, in the append's transaction.
                       AS_RETURN_IF_ERROR(log_.Append(std::move(request)).status());
                       AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
                       api::AgentSnapshot renamed = StoredSnapshot(info);
                       Notify(AgentNotice::Kind::kStatus, renamed, "");
                       return AgentAnswer{std::move(renamed)};
                     });
  }
  const Cursor to = std::get<commands::Rewind>(attempt->command).to;
  WithLease(attempt,
            [this, id = attempt->id, to](const OwnerGrant& grant,
                                         turn::TurnState&) -> Result<AgentAnswer> {
              AS_ASSIGN_OR_RETURN(api::AgentSnapshot rewound,
                                  RewindWith(id, to, grant.lease.generation));
              return AgentAnswer{std::move(rewound)};
            });
}

void AgentManager::Impl::WithLease(
    const AttemptPtr& attempt,
    std::function<Result<AgentAnswer>(const OwnerGrant&, turn::TurnState&)> fn) {
  const SessionId& id = attempt->id;
  const process::Clock::time_point sent = Now();
  Result<OwnerGrant> grant = Acquire(id);
  if (!grant.ok()) {
    if (grant.status().code() == ErrorCode::kConflict) return Retry(attempt);
    return attempt->done(grant.status());
  }
  keeper_->Track(id, grant->lease.generation, sent);
  Result<AgentAnswer> answer = [&]() -> Result<AgentAnswer> {
    AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
    turn::TurnState state;
    if (MayHaveOpenTurn(DecodeStatusRecord(info.meta.status_snapshot))) {
      AS_ASSIGN_OR_RETURN(HistoryFold history,
                          LoadHistory(log_, id, info.epoch, Seq(0), info.meta.provider));
      AS_ASSIGN_OR_RETURN(state, RecoverWith(info, *grant, std::move(history)));
    }
    return fn(*grant, state);
  }();
  Release(id, grant->lease.generation);
  attempt->done(std::move(answer));
}

void AgentManager::Impl::Forward(const std::string& owner, const AttemptPtr& attempt) {
  if (attempt->forwarding == Forwarding::kRefused) {
    return attempt->done(
        Error(ErrorCode::kMisdirected, "agent " + attempt->id.str() + " runs on daemon " + owner));
  }
  if (forwarder_ == nullptr) {
    return attempt->done(
        Error(ErrorCode::kUnavailable, "agent " + attempt->id.str() + " runs on daemon " + owner +
                                           ", and this daemon forwards no commands"));
  }
  Result<std::optional<DaemonRecord>> daemon = coordination().GetDaemon(owner);
  if (!daemon.ok()) return attempt->done(daemon.status());
  if (!daemon->has_value() || (*daemon)->url.empty()) return WaitForOwner(owner, attempt);
  const Peer peer{owner, (*daemon)->url};
  forwarder_->Forward(
      peer, attempt->id, attempt->command,
      [gate = gate_, alive = std::weak_ptr<bool>(alive_), this, owner, attempt](
          Result<AgentAnswer> answer, bool reached) mutable {
        gate->Post([alive, this, owner, attempt, reached, answer = std::move(answer)]() mutable {
          if (!alive.lock()) return;
          if (!reached) return WaitForOwner(owner, attempt);
          if (!answer.ok() && answer.status().code() == ErrorCode::kMisdirected)
            return Retry(attempt);
          attempt->done(std::move(answer));
        });
      });
}

void AgentManager::Impl::WaitForOwner(const std::string& owner, const AttemptPtr& attempt) {
  if (Now() >= attempt->deadline) {
    return attempt->done(Error(ErrorCode::kUnavailable,
                               "daemon " + owner + ", which runs agent " + attempt->id.str() +
                                   ", does not answer, and its lease has not expired; try again"));
  }
  // Routed again: to the owner if it answers by then, here once its lease expired or moved.
  After(kOwnerPoll, [this, attempt] { Route(attempt); });
}

}  // namespace agentstream::runtime
