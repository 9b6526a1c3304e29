// What the agent manager stores beside a session's history (SessionMeta's JSON texts) and the log
// reads it needs. Private to src/runtime/.
//
//   status_snapshot     {"status":"running","closed":false,"model":"m","mode":"default",
//                        "queued":true}
//   persistence_handle  {"provider":"claude","sessionId":"...","cwd":"/w"}
#pragma once

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/turn/engine.h"
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

// Every event of `epoch` of `session` with seq <= `through` (Seq(0): through the tail), oldest
// first, decoded. Errors of EventLog::Read and DecodeRecord.
Result<std::vector<Event>> ReadEpoch(EventLog& log, const SessionId& session, Epoch epoch,
                                     Seq through = Seq(0));

// TurnCanceled{reason} for every run `state` holds open (a fork or rewind point inside a turn),
// and PromptCanceled{reason} for every prompt it holds queued.
std::vector<NewEvent> CancelOpenTurns(const turn::TurnState& state, const std::string& reason);
// PromptCanceled{reason} for every prompt `state` holds queued.
std::vector<NewEvent> CancelQueuedPrompts(const turn::TurnState& state, const std::string& reason);

// The model and mode a stored history last named (SessionCreated, ModelChanged, ModeChanged).
void LastModelAndMode(const std::vector<Event>& events, std::optional<std::string>* model,
                      std::optional<std::string>* mode);

// "<prefix>_<16 hex digits>" from a randomly seeded generator. Not thread-safe.
class RandomIds {
 public:
  RandomIds();
  std::string Next(std::string_view prefix);

 private:
  std::mt19937_64 rng_;
};

// Turn ids "turn_<16 hex>": random, so they never repeat across restarts, rewinds and forks.
class RandomTurnIds final : public turn::TurnIdSource {
 public:
  TurnId Next() override { return TurnId(ids_.Next("turn")); }

 private:
  RandomIds ids_;
};

}  // namespace agentstream::runtime
