#include "core/turn/turn_state.h"

#include <type_traits>

namespace agentstream::turn {

std::string_view SessionStatusName(SessionStatus status) {
  switch (status) {
    case SessionStatus::kIdle:
      return "idle";
    case SessionStatus::kRunning:
      return "running";
    case SessionStatus::kPermission:
      return "permission";
    case SessionStatus::kError:
      return "error";
  }
  return "unknown";
}

std::string_view RunPhaseName(RunPhase phase) {
  switch (phase) {
    case RunPhase::kQueued:
      return "queued";
    case RunPhase::kAwaitingResponse:
      return "awaiting_response";
    case RunPhase::kStreaming:
      return "streaming";
    case RunPhase::kFinalizing:
      return "finalizing";
    case RunPhase::kCompleted:
      return "completed";
    case RunPhase::kInterrupted:
      return "interrupted";
    case RunPhase::kError:
      return "error";
  }
  return "unknown";
}

bool IsOpen(RunPhase phase) {
  return phase == RunPhase::kQueued || phase == RunPhase::kAwaitingResponse ||
         phase == RunPhase::kStreaming || phase == RunPhase::kFinalizing;
}

const TurnId* KnownClientIds::Find(const std::string& id) const {
  auto it = turns_.find(id);
  return it == turns_.end() ? nullptr : &it->second.first;
}

void KnownClientIds::Set(const std::string& id, TurnId turn) {
  if (auto it = turns_.find(id); it != turns_.end()) {
    it->second.first = std::move(turn);
    return;
  }
  order_.push_back(id);
  turns_.emplace(id, std::make_pair(std::move(turn), std::prev(order_.end())));
  if (turns_.size() > kKnownClientIds) Erase(order_.front());
}

void KnownClientIds::Erase(const std::string& id) {
  auto it = turns_.find(id);
  if (it == turns_.end()) return;
  order_.erase(it->second.second);
  turns_.erase(it);
}

TurnMode ModeOf(const TurnState& state) {
  if (state.foreground) return TurnMode::kForeground;
  return state.open.empty() ? TurnMode::kIdle : TurnMode::kAutonomous;
}

SessionStatus SessionStatusOf(const TurnState& state) {
  for (const auto& [id, run] : state.open)
    if (!run.pending_permissions.empty()) return SessionStatus::kPermission;
  if (!state.open.empty()) return SessionStatus::kRunning;
  return state.errored ? SessionStatus::kError : SessionStatus::kIdle;
}

const Run* FindOpen(const TurnState& state, const TurnId& turn) {
  auto it = state.open.find(turn);
  return it == state.open.end() ? nullptr : &it->second;
}

const Run* NewestAutonomous(const TurnState& state) {
  const Run* newest = nullptr;
  for (const auto& [id, run] : state.open)
    if (run.origin == TurnOrigin::kAutonomous && (!newest || run.order > newest->order))
      newest = &run;
  return newest;
}

namespace {

template <class Map, class Key>
void EraseIfOwned(Map& map, const std::vector<Key>& keys, const TurnId& owner) {
  for (const Key& key : keys) {
    auto it = map.find(key);
    if (it != map.end() && it->second == owner) map.erase(it);
  }
}

}  // namespace

std::optional<TurnId> ResolvePermission(TurnState& state, const RequestId& request) {
  std::optional<TurnId> holder;
  for (auto& [id, run] : state.open)
    if (run.pending_permissions.erase(request) && !holder) holder = id;
  return holder;
}

void RetireRun(TurnState& state, const TurnId& turn, RunPhase phase) {
  auto it = state.open.find(turn);
  if (it == state.open.end()) return;
  Run run = std::move(it->second);
  state.open.erase(it);
  run.phase = phase;
  run.pending_permissions.clear();
  if (state.foreground == turn) state.foreground.reset();
  state.closed_ids.insert(turn);
  state.recent_closed.push_back(std::move(run));
  while (state.recent_closed.size() > kRecentClosedTurns) {
    const Run& old = state.recent_closed.front();
    EraseIfOwned(state.by_message, old.message_ids, old.id);
    EraseIfOwned(state.by_call, old.call_ids, old.id);
    EraseIfOwned(state.by_request, old.request_ids, old.id);
    if (old.task_id) {
      auto task = state.by_task.find(*old.task_id);
      if (task != state.by_task.end() && task->second == old.id) state.by_task.erase(task);
    }
    state.closed_ids.erase(old.id);
    state.recent_closed.pop_front();
  }
}

namespace {

// Replays one stored event into `state`. Mirrors what the engine records; see engine.cc.
class Restorer {
 public:
  explicit Restorer(TurnState& state) : s_(state) {}

  void Apply(const Event& e) {
    std::visit([&](const auto& p) { On(p, e.turn); }, e.payload);
  }

 private:
  Run* OpenRun(const std::optional<TurnId>& turn) {
    if (!turn) return nullptr;
    auto it = s_.open.find(*turn);
    return it == s_.open.end() ? nullptr : &it->second;
  }
  template <class Map, class Key>
  void Index(Map& map, const Key& key, const std::optional<TurnId>& turn,
             std::vector<Key> Run::*list) {
    if (!turn) return;
    map[key] = *turn;
    if (Run* r = OpenRun(turn)) (r->*list).push_back(key);
  }
  void Streaming(const std::optional<TurnId>& turn) {
    if (Run* r = OpenRun(turn); r && r->phase != RunPhase::kFinalizing)
      r->phase = RunPhase::kStreaming;
  }
  void Close(const std::optional<TurnId>& turn, RunPhase phase, bool failed) {
    s_.errored = failed;
    if (turn) RetireRun(s_, *turn, phase);
  }

  void On(const PromptQueued& p, const std::optional<TurnId>&) {
    SubmitPrompt prompt{p.client_message_id, p.text, p.attachments, WhileRunning::kQueue};
    if (p.while_running == "interrupt") prompt.while_running = WhileRunning::kInterrupt;
    if (p.while_running == "steer") prompt.while_running = WhileRunning::kSteer;
    s_.known_client_ids.Set(p.client_message_id, TurnId());
    // As the engine placed it: a preempting prompt waits for the running turn to stop, unless one
    // already does.
    if (prompt.while_running != WhileRunning::kQueue && !s_.pending_after_teardown)
      s_.pending_after_teardown = std::move(prompt);
    else
      s_.queue.push_back(std::move(prompt));
  }
  void On(const PromptCanceled& p, const std::optional<TurnId>&) {
    Unqueue(p.client_message_id);
    s_.known_client_ids.Erase(p.client_message_id);
  }
  void Unqueue(const std::string& client_message_id) {
    if (s_.pending_after_teardown &&
        s_.pending_after_teardown->client_message_id == client_message_id)
      s_.pending_after_teardown.reset();
    std::erase_if(s_.queue,
                  [&](const SubmitPrompt& q) { return q.client_message_id == client_message_id; });
  }
  void On(const TurnStarted& p, const std::optional<TurnId>& turn) {
    if (!turn) return;
    if (p.client_message_id) Unqueue(*p.client_message_id);
    Run run{*turn, p.origin, RunPhase::kAwaitingResponse, p.client_message_id, p.task_id};
    run.order = s_.next_order++;
    if (p.origin == TurnOrigin::kForeground) s_.foreground = *turn;
    if (p.task_id) s_.by_task[*p.task_id] = *turn;
    if (p.client_message_id) s_.known_client_ids.Set(*p.client_message_id, *turn);
    s_.open[*turn] = std::move(run);
    s_.errored = false;
  }
  void On(const UserMessage& p, const std::optional<TurnId>& turn) {
    s_.known_client_ids.Set(p.client_message_id, turn.value_or(TurnId()));
    if (Run* r = OpenRun(turn)) r->prompt_text = p.text;
    s_.last_prompt_text = p.text;
  }
  void On(const AssistantMessageStart& p, const std::optional<TurnId>& t) {
    Index(s_.by_message, p.message_id, t, &Run::message_ids), Streaming(t);
  }
  void On(const AssistantMessageDelta& p, const std::optional<TurnId>& t) {
    Index(s_.by_message, p.message_id, t, &Run::message_ids), Streaming(t);
  }
  void On(const AssistantMessageEnd& p, const std::optional<TurnId>& t) {
    Index(s_.by_message, p.message_id, t, &Run::message_ids);
  }
  void On(const Reasoning& p, const std::optional<TurnId>& t) {
    Index(s_.by_message, p.message_id, t, &Run::message_ids), Streaming(t);
  }
  void On(const ToolCallStart& p, const std::optional<TurnId>& t) {
    Index(s_.by_call, p.call_id, t, &Run::call_ids), Streaming(t);
  }
  void On(const PermissionRequested& p, const std::optional<TurnId>& t) {
    Index(s_.by_request, p.request_id, t, &Run::request_ids);
    if (Run* r = OpenRun(t)) r->pending_permissions.insert(p.request_id);
  }
  void On(const PermissionResolved& p, const std::optional<TurnId>&) {
    ResolvePermission(s_, p.request_id);
  }
  void On(const TurnCompleted&, const std::optional<TurnId>& t) {
    Close(t, RunPhase::kCompleted, false);
  }
  void On(const TurnCanceled&, const std::optional<TurnId>& t) {
    Close(t, RunPhase::kInterrupted, false);
  }
  void On(const TurnFailed&, const std::optional<TurnId>& t) { Close(t, RunPhase::kError, true); }
  void On(const ErrorEvent& p, const std::optional<TurnId>&) {
    if (p.fatal) s_.errored = true;
  }
  template <class P>
  void On(const P&, const std::optional<TurnId>&) {}

  TurnState& s_;
};

}  // namespace

TurnStateFold::TurnStateFold(TurnState initial) : state_(std::move(initial)) {}
TurnStateFold::TurnStateFold(TurnStateFold&&) noexcept = default;
TurnStateFold& TurnStateFold::operator=(TurnStateFold&&) noexcept = default;
TurnStateFold::~TurnStateFold() = default;

void TurnStateFold::Apply(const Event& event) { Restorer(state_).Apply(event); }

TurnState TurnStateFold::Finish() && {
  TurnState state = std::move(state_);
  state.queue_held = !state.queue.empty() || state.pending_after_teardown.has_value();
  state.reported_status = SessionStatusOf(state);
  return state;
}

TurnState RestoreTurnState(std::span<const Event> events, std::string provider) {
  TurnState initial;
  initial.provider = std::move(provider);
  TurnStateFold fold(std::move(initial));
  for (const Event& e : events) fold.Apply(e);
  return std::move(fold).Finish();
}

SessionStatus StatusFromLog(std::span<const Event> events) {
  return SessionStatusOf(RestoreTurnState(events, ""));
}

}  // namespace agentstream::turn
