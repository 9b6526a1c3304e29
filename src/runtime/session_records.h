// What the agent manager stores beside a session's history (SessionMeta's JSON texts) and the log
// reads it needs. Private to src/runtime/.
//
//   status_snapshot     {"status":"running","closed":false,"model":"m","mode":"default",
//                        "queued":true,"imported":"claude"}
//   persistence_handle  {"provider":"claude","sessionId":"...","cwd":"/w"}
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/turn/engine.h"
#include "core/turn/turn_state.h"
#include "providers/provider.h"
#include "store/event_log.h"

namespace agentstream::runtime {

// The cached lifecycle of a session (SessionMeta::status_snapshot).
struct StatusRecord {
  // nullopt when the stored text is empty or unreadable: the log must be read to know.
  std::optional<turn::SessionStatus> status;
  bool closed = false;
  std::string model;
  std::string mode;
  // Prompts wait in the log's queue (a runtime stopped with its queue held): a restart must load
  // the session to run them.
  bool queued = false;
  // The CLI whose transcript the session was imported from (docs/import.md); empty otherwise.
  std::string imported;
};
std::string EncodeStatusRecord(const StatusRecord& record);
StatusRecord DecodeStatusRecord(std::string_view text);
// True when a turn may have been open (running, permission, or unknown), or prompts wait in the
// queue: restart recovery must look at the session.
bool MayHaveOpenTurn(const StatusRecord& record);

std::string EncodeHandle(const providers::PersistenceHandle& handle);
// nullopt for an empty or unreadable text.
std::optional<providers::PersistenceHandle> DecodeHandle(std::string_view text);

// Rows per ListSessions page and events per Read page the manager asks for.
inline constexpr std::size_t kListPage = 256;
inline constexpr std::size_t kReadPage = 1000;

// Calls `fn` with every event of `epoch` of `session` with seq in [from, through] (through
// Seq(0): the tail), oldest first, decoded, reading kReadPage events at a time. Errors of
// EventLog::Read and DecodeRecord.
Status ForEachEvent(EventLog& log, const SessionId& session, Epoch epoch, Seq from, Seq through,
                    const std::function<void(Event)>& fn);

// Every event of `epoch` of `session` with seq <= `through` (Seq(0): through the tail), oldest
// first, decoded. Errors of EventLog::Read and DecodeRecord.
Result<std::vector<Event>> ReadEpoch(EventLog& log, const SessionId& session, Epoch epoch,
                                     Seq through = Seq(0));

// What a runtime needs of a session's history, folded event by event in bounded memory: the turn
// engine's state and the model, mode, thinking option and capabilities the history last named,
// through seq `through`.
struct HistoryFold {
  turn::TurnStateFold turns;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> thinking;              // the last thinking_option.changed
  std::optional<CapabilitiesChanged> capabilities;  // the last capabilities.changed
  Seq through;                                      // the last seq folded (0: none)
  std::size_t events_read = 0;   // events read from the log and folded (not the checkpoint's)
  bool from_checkpoint = false;  // started from the session's stored checkpoint

  void Apply(const Event& event);
};

// A session is checkpointed when at least this many events were folded since its last
// checkpoint: while its runtime runs, when a load read that many, and when the runtime stops
// (then for any number). So a load reads fewer than kCheckpointEvery events plus those of the
// runtime's last unfinished stretch (docs/architecture.md, "Loading a session").
inline constexpr std::size_t kCheckpointEvery = 2000;

// Folds the events of `epoch` of `session` in (fold.through, through] (Seq(0): through the tail)
// into `fold`, kReadPage events at a time. Errors of EventLog::Read and DecodeRecord.
Status FoldHistory(EventLog& log, const SessionId& session, Epoch epoch, Seq through,
                   HistoryFold& fold);

// The fold of `epoch` of `session` through `through` (Seq(0): the tail), started from the
// session's stored checkpoint when it is of `epoch`, at or before `through`, and readable; from
// the first event otherwise (a missing, stale or unreadable checkpoint costs time, never
// correctness). The turn state's provider is `provider`.
Result<HistoryFold> LoadHistory(EventLog& log, const SessionId& session, Epoch epoch, Seq through,
                                const std::string& provider);

// Stores `fold` as the checkpoint of `epoch` of `session`.
Status SaveHistoryCheckpoint(EventLog& log, const SessionId& session, Epoch epoch,
                             const HistoryFold& fold);

// The checkpoint body (docs/event-log-format.md, "Checkpoints"), and back: kCorruption or
// kUnsupportedVersion for a body this build cannot use.
std::string EncodeCheckpointBody(const HistoryFold& fold);
Result<HistoryFold> DecodeCheckpointBody(std::string_view body, const std::string& provider);

// TurnCanceled{reason} for every run `state` holds open (a fork or rewind point inside a turn),
// and PromptCanceled{reason} for every prompt it holds queued.
std::vector<NewEvent> CancelOpenTurns(const turn::TurnState& state, const std::string& reason);
// PromptCanceled{reason} for every prompt `state` holds queued.
std::vector<NewEvent> CancelQueuedPrompts(const turn::TurnState& state, const std::string& reason);

// "<prefix>_<16 hex digits>" (system/random_id.h). Thread-safe.
class RandomIds {
 public:
  std::string Next(std::string_view prefix);
};

// Turn ids "turn_<16 hex>": random, so they never repeat across restarts, rewinds and forks.
class RandomTurnIds final : public turn::TurnIdSource {
 public:
  TurnId Next() override { return TurnId(ids_.Next("turn")); }

 private:
  RandomIds ids_;
};

}  // namespace agentstream::runtime
