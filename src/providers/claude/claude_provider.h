// ClaudeProvider: one `claude` CLI process in stream-json mode (docs/providers.md, "The claude
// provider") as an AgentProvider. Its single pump (the stdout handler) owns the CLI's output: every
// line goes through ClaudeStreamParser and out to the subscribers in order; nothing else reads it.
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
// The process lifecycle (spawn, handshake deadline, interrupt escalation, stall watchdog, exit,
// close) is ChildProcessProvider's (child_process_provider.h); this class writes the CLI's argv,
// its control protocol and the mapping of its output.
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "providers/child_process_provider.h"
#include "providers/claude/claude_parser.h"
#include "providers/claude/claude_protocol.h"

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

class ClaudeProvider final : public ChildProcessProvider {
 public:
  // `loop` must outlive the provider.
  ClaudeProvider(process::EventLoop& loop, ClaudeOptions options);

  void StartTurn(const TurnRequest& request, Done done) override;
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override;
  void SetMode(const std::string& mode, Done done) override;
  std::vector<ModelInfo> AvailableModels() const override { return models_; }
  void SetModel(const std::string& model, Done done) override;
  std::vector<ThinkingOption> ThinkingOptions() const override;
  void SetThinkingOption(const std::string& option, Done done) override;
  std::vector<SlashCommand> ListCommands() const override;
  std::vector<PendingPermission> PendingPermissions() const override { return permissions_.List(); }
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;

 private:
  Result<process::SpawnOptions> Command() override;
  void Handshake() override;
  void OnFrame(const process::Frame& frame) override;
  void SendCancel() override;
  bool AwaitingPermission() const override { return !permissions_.empty(); }
  void DropTurn() override { ResetTurnState(); }
  void FailRequests(const process::ExitInfo& exit) override;

  void OnInitialized(const ControlResponseIn& response);
  void OnParsed(ParsedLine parsed);
  void OnControlRequest(const ControlRequestIn& request);
  void ResetTurnState();  // the CLI's turn ended: no turn, no prompt, no permission
  void SendControl(const std::string& line_for_id, std::function<void(ControlResponseIn)> reply);
  std::string NextRequestId();

  ClaudeOptions options_;
  ClaudeStreamParser parser_;
  std::uint64_t next_request_ = 1;
  std::map<std::string, std::function<void(ControlResponseIn)>> pending_control_;
  PermissionTable<> permissions_;
  bool foreground_active_ = false;  // a prompt we sent has not reached its `result` yet
  // The uuid of our last prompt until the CLI replays it (takes it into its conversation).
  std::optional<std::string> outstanding_prompt_;
  InitInfo init_;
  std::vector<SlashCommand> commands_;
  std::vector<ModelInfo> models_;
  std::string mode_ = "default";
};

}  // namespace agentstream::providers::claude
