// ScriptedProvider: a built-in agent that plays a script: text deltas, tool calls, permission
// requests, background tasks that wake the agent later (an autonomous turn), errors and delays.
// For demos, tests and load generation; it keeps the same contract and guarantees as the real
// providers (provider.h) and emits the same normalized events.
//
// Time comes only from the injected Timers (ManualTimers in tests: nothing happens until time is
// advanced, so tests are exact). Completion callbacks run from a zero-delay timer, never inside
// the call. Threading: the thread that runs the timers.
#pragma once

#include <boost/json/value.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process/event_loop.h"
#include "providers/provider.h"

namespace agentstream::providers::scripted {

struct ScriptStep {
  enum class Kind {
    kText,            // an assistant message: `text` in `chunks` deltas, `delay` apart
    kTool,            // a tool call `name`(`input`) that ends with output `text`
    kPermission,      // a tool call that first asks permission; deny ends it failed
    kBackgroundTask,  // starts task `name`; `delay` later it completes and wakes the agent,
                      // which plays `wake` as an autonomous turn
    kDelay,           // waits `delay`
    kError,           // a ProviderError (`name` = code, `text` = message, `fatal`)
    kFail,            // ends the turn failed (`name` = code, `text` = message)
  };
  Kind kind = Kind::kText;
  std::string text;
  std::string name;
  boost::json::value input;
  int chunks = 1;
  process::Millis delay{0};
  bool fatal = false;
  std::vector<ScriptStep> wake;

  static ScriptStep Text(std::string text, int chunks = 1, process::Millis gap = {});
  static ScriptStep Tool(std::string name, boost::json::value input, std::string output);
  static ScriptStep Permission(std::string name, boost::json::value input, std::string output);
  static ScriptStep Background(std::string description, process::Millis after,
                               std::vector<ScriptStep> wake);
  static ScriptStep Delay(process::Millis d);
  static ScriptStep Err(std::string code, std::string message, bool fatal = false);
  static ScriptStep Fail(std::string code, std::string message);
};

// Chooses the steps of a foreground turn from its prompt.
using Responder = std::function<std::vector<ScriptStep>(const std::string& prompt)>;

// "Echo: <prompt>" as one text message.
std::vector<ScriptStep> EchoResponder(const std::string& prompt);

class ScriptedProvider final : public AgentProvider {
 public:
  // `timers` must outlive the provider.
  explicit ScriptedProvider(process::Timers& timers, Responder responder = EchoResponder);
  ~ScriptedProvider() override;

  EventSubscription Subscribe(EventCallback callback) override;
  void Start(Done done) override;
  void StartTurn(const TurnRequest& request, Done done) override;
  void Interrupt(Done done) override;
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override;
  void SetMode(const std::string& mode, Done done) override;
  std::vector<ModelInfo> AvailableModels() const override;
  void SetModel(const std::string& model, Done done) override;
  std::vector<ThinkingOption> ThinkingOptions() const override;
  void SetThinkingOption(const std::string& option, Done done) override;
  std::vector<SlashCommand> ListCommands() const override;
  std::vector<PendingPermission> PendingPermissions() const override;
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;
  void Close(Done done) override;

 private:
  struct Job {
    std::vector<ScriptStep> steps;
    bool foreground = true;
    std::string prompt;
    std::optional<std::string> task_id;  // the background task that woke the agent
  };
  void Later(Done done, Status status) override;
  void Emit(turn::ProviderEvent event);
  void MaybeRunNext();
  void Step();
  void RunStep(const ScriptStep& step);
  void RunText(const ScriptStep& step, int chunk, const MessageId& id);
  void EndTurn(turn::TurnOutcome outcome, std::string code, std::string message);
  void Wake(const std::string& task_id, std::vector<ScriptStep> steps);
  // Ids are unique per instance: a session whose runtime restarts (after a daemon restart, a
  // rewind or an idle stop) never sees an id of an earlier runtime again.
  std::string Next(const char* prefix) {
    return prefix + instance_ + "_" + std::to_string(++counter_);
  }

  process::Timers& timers_;
  Responder responder_;
  std::shared_ptr<SubscriberList> subscribers_ = std::make_shared<SubscriberList>();
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool connected_ = false, closed_ = false;
  std::deque<Job> jobs_;        // waiting turns (a foreground prompt or a wake)
  std::optional<Job> current_;  // the turn being played
  std::size_t step_index_ = 0;
  std::unique_ptr<process::TimerHandle> step_timer_;
  std::map<std::string, std::unique_ptr<process::TimerHandle>> task_timers_;
  std::vector<std::unique_ptr<process::TimerHandle>> later_;
  struct Waiting {
    PendingPermission info;
    std::string output;
  };
  std::optional<Waiting> permission_;
  std::string mode_ = "default", model_ = "scripted-1", thinking_ = "off";
  std::uint64_t counter_ = 0;
  std::string instance_;  // random hex, set at construction
  // The events played, newest last, for StreamHistory: the last kMaxHistory only, so that a
  // live agent's memory does not grow with its session.
  static constexpr std::size_t kMaxHistory = 1000;
  std::deque<turn::ProviderEvent> history_;
};

}  // namespace agentstream::providers::scripted
