// The provider contract (docs/providers.md, "The provider contract"): what the daemon needs from
// an agent runtime (the real `claude` CLI, ACP agents, codex, opencode, the built-in scripted
// agent). A provider runs ONE agent session; one pump inside it owns the runtime's output and
// turns it into normalized provider events (core/turn/provider_event.h) for the turn engine.
//
// Threading and lifetime: a provider lives on one EventLoop (process/event_loop.h). Every method
// must be called on that loop's thread, and every callback (subscribers and completion callbacks)
// runs on it. Completion callbacks never run inside the call that registered them. Do not destroy
// a provider from inside one of its callbacks: Close() it and destroy it afterwards.
//
// The five guarantees every implementation keeps (tested in scripted_provider_test.cc and
// claude_integration_test.cc):
//   1. Ordering: subscribers see events in the order the runtime produced them.
//   2. Serialized delivery: no two subscriber callbacks run at once, and a callback that calls
//      back into the provider does not re-enter another callback (events are queued).
//   3. Subscribe-before-start safety: a subscription made before Start()/StartTurn() misses
//      nothing; events are never buffered for subscribers that may come later.
//   4. Subscriber error isolation: a subscriber that throws is logged and skipped; the others and
//      the provider go on.
//   5. Deterministic cleanup: after Close() completes (and after an unsubscribe) no callback of
//      that subscription runs again, and the runtime process and its process group are gone.
//
// Providers on an EventLoop build on ProviderBase (provider_base.h), and those whose runtime is one
// child process on ChildProcessProvider (child_process_provider.h), where the guarantees and the
// lifecycle are written once (docs/providers.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/turn/provider_event.h"
#include "providers/subscribers.h"

namespace agentstream::providers {

using Done = std::function<void(Status)>;

struct TurnRequest {
  TurnId turn;  // assigned by the turn engine; providers echo nothing of it into events
  std::string client_message_id;
  std::string text;
};

// The settings a runtime offers (core/event.h: the capabilities.changed event records them).
using ModeInfo = Choice;
using ModelInfo = Choice;
using ThinkingOption = Choice;
using SlashCommand = CommandInfo;

struct RuntimeInfo {
  std::string provider;    // "claude", "scripted"
  std::string session_id;  // the runtime's own session id, once known
  std::string model;       // current model, once known
  std::string mode;        // current permission mode
  std::string version;     // runtime version, once known
  int pid = 0;             // the runtime process, 0 when none
  bool connected = false;  // Start() succeeded and the runtime has not exited
};

struct PendingPermission {
  RequestId request_id;
  std::optional<ToolCallId> call_id;
  std::string tool_name;
  boost::json::value input;
};

struct PermissionReply {
  PermissionDecision decision = PermissionDecision::kDeny;
  std::optional<std::string> message;  // shown to the agent on deny
};

// Enough to reopen the same runtime session later (stored with the session in the log).
struct PersistenceHandle {
  std::string provider;
  std::string session_id;
  std::string cwd;
};

// What Run() reports: the outcome of the first turn result after the prompt was accepted.
struct RunResult {
  turn::TurnOutcome outcome = turn::TurnOutcome::kCompleted;
  std::string text;     // assistant text of the turn, concatenated
  std::string message;  // error message for kFailed
};

class AgentProvider {
 public:
  virtual ~AgentProvider() = default;

  // Every provider event, foreground and autonomous, in provider order (guarantees 1-4).
  // Drop the returned EventSubscription (or call Cancel) to unsubscribe.
  [[nodiscard]] virtual EventSubscription Subscribe(EventCallback callback) = 0;

  // Starts the runtime (spawn + handshake). `done` gets OK once prompts can be sent, else
  // kUnavailable (cannot start, handshake failed or timed out).
  virtual void Start(Done done) = 0;

  // Sends the prompt of `request.turn`. `done` gets OK when the runtime accepted it (not when the
  // turn ended); kUnavailable when not connected; kConflict while a foreground turn is active;
  // another error when the runtime rejects it. The turn's events arrive through Subscribe().
  virtual void StartTurn(const TurnRequest& request, Done done) = 0;

  // Cancels the running turn (foreground or autonomous) with escalation: the protocol's cancel,
  // then signals. `done` runs once the turn ended or the runtime is gone (then the turn engine
  // gets InterruptTeardownDone). OK at once when nothing runs.
  virtual void Interrupt(Done done) = 0;

  // The runtime's persisted history of this session, for hydration only (never live events):
  // user prompts as ProviderUserEcho, assistant messages as start/delta/stop, tool calls.
  virtual Result<std::vector<turn::ProviderEvent>> StreamHistory() = 0;

  virtual RuntimeInfo GetRuntimeInfo() const = 0;

  // Optional settings. The defaults describe a runtime without them: no choices listed, and a
  // Set* call answers kInvalidArgument (through Later(), never inside the call). A provider
  // overrides only what its runtime has.
  virtual std::vector<ModeInfo> AvailableModes() const { return {}; }
  virtual void SetMode(const std::string& mode, Done done);
  virtual std::vector<ModelInfo> AvailableModels() const { return {}; }
  virtual void SetModel(const std::string& model, Done done);
  virtual std::vector<ThinkingOption> ThinkingOptions() const { return {}; }
  virtual void SetThinkingOption(const std::string& option, Done done);
  virtual std::vector<SlashCommand> ListCommands() const { return {}; }

  virtual std::vector<PendingPermission> PendingPermissions() const = 0;
  // Answers a permission request the runtime is waiting on. kNotFound when it is not pending.
  virtual void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                   Done done) = 0;

  virtual std::optional<PersistenceHandle> DescribePersistence() const = 0;

  // Stops the runtime (graceful, then escalating signals) and every subscription (guarantee 5).
  // Idempotent; `done` runs when the process is gone.
  virtual void Close(Done done) = 0;

  // StartTurn + Subscribe: sends `request` and reports the first turn result that follows, with
  // the assistant text streamed before it. For one-shot use without the turn engine.
  void Run(const TurnRequest& request, std::function<void(Result<RunResult>)> done);

 protected:
  // Runs `done(status)` on the provider's thread after the current call has returned, unless the
  // provider is destroyed first. Does nothing for an empty `done`.
  virtual void Later(Done done, Status status) = 0;
};

// Bounds of what DescribeCapabilities keeps of a runtime's lists: the first kMaxChoices entries of
// each; an id or command name over kMaxChoiceIdBytes drops its entry (a cut id names nothing); a
// label or description is cut at kMaxChoiceTextBytes.
inline constexpr std::size_t kMaxChoices = 200;
inline constexpr std::size_t kMaxChoiceIdBytes = 256;
inline constexpr std::size_t kMaxChoiceTextBytes = 512;

// The modes, models, thinking options and slash commands `provider` offers now, bounded as above
// and sanitized (valid UTF-8): what an agent's capabilities.changed event records.
CapabilitiesChanged DescribeCapabilities(const AgentProvider& provider);

}  // namespace agentstream::providers
