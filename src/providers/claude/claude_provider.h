// ClaudeProvider: one `claude` CLI process in stream-json mode (AGENT-CLIS.md section 1) as an
// AgentProvider. Its single pump (the stdout handler) owns the CLI's output: every line goes
// through ClaudeStreamParser and out to the subscribers in order; nothing else reads it.
//
// Lifecycle: Start() spawns the CLI with --session-id (new) or --resume (existing), sends the
// initialize control request and completes on its answer. Prompts go to stdin as user messages;
// stdin stays open between turns because the CLI starts turns by itself when a background task
// finishes (those arrive as events no foreground turn owns; the turn engine makes them autonomous
// turns). A `result` ends the CLI's current turn, not the session.
//
// Faults: the CLI exiting (crash, kill) publishes ProviderExited (every open turn fails); a CLI
// that stays silent for `stall_timeout` while a turn runs and no permission is pending publishes a
// fatal ProviderError "provider_stalled" and is terminated; garbage and oversize stdout lines
// publish non-fatal ProviderErrors and the pump goes on; invalid UTF-8 is repaired by the parser.
//
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "process/child_process.h"
#include "providers/claude/claude_parser.h"
#include "providers/claude/claude_protocol.h"
#include "providers/provider.h"

namespace agentstream::providers::claude {

struct ClaudeOptions {
  LaunchOptions launch;  // program, cwd, session id (empty: a new random one), env, ...
  process::Millis handshake_timeout{60000};
  process::Millis stall_timeout{600000};
  process::Millis interrupt_timeout{5000};  // protocol interrupt, before signals
  process::KillPlan kill_plan;              // SIGINT -> SIGTERM -> SIGKILL delays
  process::Millis close_grace{3000};        // after stdin EOF, before signals
  std::size_t max_line_bytes = std::size_t{8} << 20;
  // Reads a whole file (the transcript). Empty: the real file system.
  std::function<Result<std::string>(const std::string& path)> read_file;
};

class ClaudeProvider final : public AgentProvider {
 public:
  // `loop` must outlive the provider.
  ClaudeProvider(process::EventLoop& loop, ClaudeOptions options);
  ~ClaudeProvider() override;

  Subscription Subscribe(EventCallback callback) override;
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

  // The CLI's stderr tail, for diagnostics.
  std::string StderrTail() const;

 private:
  void OnFrame(const process::Frame& frame);
  void OnParsed(ParsedLine parsed);
  void OnControlRequest(const ControlRequestIn& request);
  void OnExit(const process::ExitInfo& exit);
  void ResetTurnState();           // the CLI's turn ended: no turn, no prompt, no permission
  void ResolveInterruptWaiters();  // an interrupt under way is complete
  void SendControl(const std::string& line_for_id, std::function<void(ControlResponseIn)> reply);
  std::string NextRequestId();
  void ArmWatchdog();
  void OnStalled();
  void Later(Done done, Status status);
  void Publish(turn::ProviderEvent event) { subscribers_->Publish(std::move(event)); }

  process::EventLoop& loop_;
  ClaudeOptions options_;
  std::shared_ptr<SubscriberList> subscribers_ = std::make_shared<SubscriberList>();
  std::unique_ptr<process::ChildProcess> child_;
  ClaudeStreamParser parser_;
  std::uint64_t next_request_ = 1;
  std::map<std::string, std::function<void(ControlResponseIn)>> pending_control_;
  struct Permission {
    PendingPermission info;
    std::string tool_use_id;
  };
  std::map<RequestId, Permission> permissions_;
  bool connected_ = false, closing_ = false, exited_ = false;
  bool foreground_active_ = false;  // a prompt we sent has not reached its `result` yet
  bool turn_running_ = false;       // the CLI is in a turn (ours or one it started itself)
  // The uuid of our last prompt until the CLI replays it (takes it into its conversation).
  std::optional<std::string> outstanding_prompt_;
  std::vector<Done> interrupt_waiters_, close_waiters_;
  std::unique_ptr<process::TimerHandle> watchdog_, handshake_timer_, interrupt_timer_, close_timer_;
  InitInfo init_;
  std::vector<SlashCommand> commands_;
  std::vector<ModelInfo> models_;
  std::string mode_ = "default";
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for posted callbacks
};

}  // namespace agentstream::providers::claude
