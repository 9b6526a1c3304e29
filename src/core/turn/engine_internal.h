// Internal to the turn engine: the mutable context of one Advance() call, shared by the command
// half (engine_commands.cc) and the provider half (engine_provider.cc).
#pragma once

#include <optional>
#include <string>

#include "core/turn/engine.h"

namespace agentstream::turn::internal {

class Stepper {
 public:
  Stepper(TurnState& state, Step& step, TurnIdSource& ids) : s_(state), step_(step), ids_(ids) {}

  // OK when `command` is acceptable in the current state; checked before OnCommand.
  Status Check(const Command& command) const;
  void OnCommand(const Command& command);
  void OnProvider(const ProviderEvent& event);

 private:
  // ---- shared (engine.cc) ----
  void Emit(const Payload& payload, const std::optional<TurnId>& turn);
  void Do(Effect effect) { step_.effects.push_back(std::move(effect)); }
  TurnId OpenRun(TurnOrigin origin, const std::optional<std::string>& client_id,
                 const std::optional<std::string>& task_id);
  void StartForeground(const SubmitPrompt& prompt);
  // Emits the terminal of `turn` for `outcome`, retires the run, then starts whatever waits.
  void CloseRun(const TurnId& turn, TurnOutcome outcome, const std::string& code,
                const std::string& message, const std::optional<std::string>& stop_reason);
  void StartWaitingPrompt();
  void FailAllOpen(const std::string& code, const std::string& message);
  Run* Open(const std::optional<TurnId>& turn);
  void MarkStreaming(const std::optional<TurnId>& turn);

  // ---- commands (engine_commands.cc) ----
  void Submit(const SubmitPrompt& p);
  void Accepted(const ProviderAcceptedTurn& c);
  void Rejected(const ProviderRejectedTurn& c);
  void Interrupt();
  void TeardownDone();
  void Permission(const ReplyPermission& c);
  void CancelQueued(const CancelQueuedPrompt& c);
  void Recover(const RecoverAfterRestart& c);
  void ResumeQueued();
  void Queue(const SubmitPrompt& p, const std::string& message);
  void InterruptRun(Run& run);

  // ---- provider events (engine_provider.cc) ----
  void OnMetadata(const ProviderEvent& event);
  void OnEcho(const ProviderUserEcho& echo);
  void OnExited(const ProviderExited& exited);
  void OnContent(const ProviderEvent& event, const std::optional<TurnId>& turn);
  void Metadata(const std::string& type, boost::json::object data,
                const std::optional<TurnId>& turn);
  template <class Map, class Key>
  void Remember(Map& map, const Key& key, const std::optional<TurnId>& turn,
                std::vector<Key> Run::*list);

  TurnState& s_;
  Step& step_;
  TurnIdSource& ids_;
};

}  // namespace agentstream::turn::internal
