// TurnState: everything the turn engine knows about one session, as a plain value. It is built
// by the engine step by step (engine.h) or restored from a stored log (RestoreTurnState), and
// the session status is a pure function of it.
//
// Memory: open runs, the queue, pending permissions and the routing keys of the last
// kRecentClosedTurns closed turns (enough to recognise late events); the set of client message
// ids ever submitted (one short string per prompt) for idempotent retries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/turn/command.h"
#include "core/turn/effect.h"

namespace agentstream::turn {

// Which kind of turn owns the session (docs/timeline.md, "Turn model").
enum class TurnMode { kIdle, kForeground, kAutonomous };

// Lifecycle of one run (turn). The first four are open, the last three terminal.
enum class RunPhase {
  kQueued,            // turn started in the log, the provider has not accepted the prompt yet
  kAwaitingResponse,  // accepted, no output yet
  kStreaming,         // output is flowing
  kFinalizing,        // an interrupt was requested; waiting for the provider to settle
  kCompleted,
  kInterrupted,
  kError,
};
std::string_view RunPhaseName(RunPhase phase);
bool IsOpen(RunPhase phase);

struct Run {
  TurnId id;
  TurnOrigin origin = TurnOrigin::kForeground;
  RunPhase phase = RunPhase::kQueued;
  std::optional<std::string> client_message_id;
  std::optional<std::string> task_id;
  std::string prompt_text;  // the foreground prompt, for echo de-duplication
  std::uint64_t order = 0;  // start order within the session (larger is newer)
  std::set<RequestId> pending_permissions;
  // Routing keys seen in this run, dropped with the run when it leaves the recent window.
  std::vector<MessageId> message_ids;
  std::vector<ToolCallId> call_ids;
  std::vector<RequestId> request_ids;
};

// Gives the engine its turn ids. Implementations must never repeat an id within a session's
// history (including across restarts and rewinds): the daemon seeds them from the log or uses
// unique ids. Not thread-safe; owned by the session's owner.
class TurnIdSource {
 public:
  virtual ~TurnIdSource() = default;
  virtual TurnId Next() = 0;
};

// "<prefix><n>", n counting up from `next`. Deterministic: for tests and for ids seeded from a
// counter stored with the session.
class SequentialTurnIds final : public TurnIdSource {
 public:
  explicit SequentialTurnIds(std::string prefix = "turn_", std::uint64_t next = 1)
      : prefix_(std::move(prefix)), next_(next) {}
  TurnId Next() override { return TurnId(prefix_ + std::to_string(next_++)); }

 private:
  std::string prefix_;
  std::uint64_t next_;
};

inline constexpr std::size_t kRecentClosedTurns = 256;
inline constexpr std::size_t kKnownClientIds = 4096;

// The client message ids a session recognises as retries, each with the turn it started (empty
// while its prompt waits in the queue): the newest kKnownClientIds, the oldest forgotten first.
// A queue holds far fewer prompts than that, so a queued prompt's id is never forgotten.
class KnownClientIds {
 public:
  // nullptr when `id` is not known.
  const TurnId* Find(const std::string& id) const;
  bool Contains(const std::string& id) const { return Find(id) != nullptr; }
  // Records `id` as the newest, or updates its turn where it stands.
  void Set(const std::string& id, TurnId turn);
  void Erase(const std::string& id);
  std::size_t size() const { return turns_.size(); }
  // Oldest first.
  template <class Fn>
  void ForEach(Fn fn) const {
    for (const std::string& id : order_) fn(id, turns_.at(id).first);
  }

 private:
  std::list<std::string> order_;  // oldest first
  std::unordered_map<std::string, std::pair<TurnId, std::list<std::string>::iterator>> turns_;
};

struct TurnState {
  std::string provider;  // stamped on provider.metadata events

  std::map<TurnId, Run> open;        // runs in an open phase
  std::optional<TurnId> foreground;  // the open foreground run, if any
  std::uint64_t next_order = 1;

  // Routing indexes over open runs and recent closed runs.
  std::unordered_map<MessageId, TurnId> by_message;
  std::unordered_map<ToolCallId, TurnId> by_call;
  std::unordered_map<RequestId, TurnId> by_request;
  std::unordered_map<std::string, TurnId> by_task;
  std::deque<Run> recent_closed;          // oldest first, at most kRecentClosedTurns
  std::unordered_set<TurnId> closed_ids;  // ids of recent_closed

  std::deque<SubmitPrompt> queue;                      // prompts waiting for the session
  std::optional<SubmitPrompt> pending_after_teardown;  // autonomous -> foreground in progress
  // Restored from the log with prompts waiting: none starts before ResumeQueue (the runtime that
  // will run them is not ready yet).
  bool queue_held = false;
  // The client message ids submitted last (KnownClientIds), with their turns.
  KnownClientIds known_client_ids;
  std::string last_prompt_text;  // of the last foreground turn

  bool errored = false;  // the last turn failed or the provider reported a fatal error
  SessionStatus reported_status = SessionStatus::kIdle;  // last status sent as StatusChanged
};

TurnMode ModeOf(const TurnState& state);

// idle / running / permission / error, derived from the runs only: permission iff a
// permission request of an open run is pending; running iff any run is open; error iff errored.
SessionStatus SessionStatusOf(const TurnState& state);

// The open run that owns `turn`, or nullptr.
const Run* FindOpen(const TurnState& state, const TurnId& turn);

// The most recently started open autonomous run, or nullptr.
const Run* NewestAutonomous(const TurnState& state);

// Moves the open run `turn` to the recent closed runs with its terminal `phase`, clears the
// foreground slot it held, and forgets the routing keys of runs that leave the recent window.
// No-op when `turn` is not open.
void RetireRun(TurnState& state, const TurnId& turn, RunPhase phase);

// Clears the pending permission `request` from every open run; request ids name one request per
// session, so a resolution answers it wherever a provider repeated it. Returns the open run that
// held it first (in turn-id order), or nullopt when none did.
std::optional<TurnId> ResolvePermission(TurnState& state, const RequestId& request);

// Folds stored events into the engine state one at a time, in log order: RestoreTurnState is a
// fold over every event, and a checkpoint of the state as of some seq (turn_state_codec.h)
// folded with the events after it gives the same state, in memory independent of the history.
class TurnStateFold {
 public:
  explicit TurnStateFold(TurnState initial = {});
  TurnStateFold(TurnStateFold&&) noexcept;
  TurnStateFold& operator=(TurnStateFold&&) noexcept;
  ~TurnStateFold();

  void Apply(const Event& event);
  // The state so far, without Finish's derived fields.
  const TurnState& state() const { return state_; }
  // The state as RestoreTurnState returns it: queue_held and reported_status derived.
  TurnState Finish() &&;

 private:
  TurnState state_;
};

// Rebuilds the engine state from a stored log (oldest first): open runs, routing keys, the queued
// prompts that neither started nor were canceled (held: queue_held), known client ids, errored.
// Events of other sessions or epochs must not be mixed in.
TurnState RestoreTurnState(std::span<const Event> events, std::string provider);

// SessionStatusOf(RestoreTurnState(events)): the status is a pure function of the log.
SessionStatus StatusFromLog(std::span<const Event> events);

}  // namespace agentstream::turn
