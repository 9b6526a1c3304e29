// AcpProvider: any Agent Client Protocol agent (`gemini --acp`, `opencode acp`, the Claude ACP
// adapter, ...) as an AgentProvider, configured by its command alone (acp_protocol.h presets).
// JSON-RPC 2.0, one message per line on the agent's stdin/stdout (docs/providers.md, "The acp
// provider").
//
// Lifecycle: Start() spawns the agent, sends `initialize`, then `session/new` (or `session/load`
// for a stored session id: the history the agent replays before answering is kept for
// StreamHistory() as hydration and never published as live events) and completes once the
// session exists. A prompt is a long-running `session/prompt` request: its response (stop reason,
// usage) ends the turn. Interrupt() sends `session/cancel`, answers open permission requests
// "cancelled", and escalates to signals after `interrupt_timeout`.
//
// The agent's requests: `session/request_permission` (answered by option KIND, never by id),
// `fs/read_text_file` / `fs/write_text_file` and `terminal/*` (acp_terminals.h), all confined to
// the session's cwd: a path outside it gets a JSON-RPC error. Unknown methods get -32601.
//
// Bounds: stdout lines (`max_line_bytes`; longer lines are a non-fatal protocol_oversize error),
// our requests in flight (`max_pending_requests`), the agent's requests in flight
// (`max_agent_requests`), files read (`max_file_bytes`), terminals and their output
// (acp_terminals.h). Faults: the agent exiting publishes ProviderExited (every open turn fails);
// silence for `stall_timeout` during a turn without a pending permission is a fatal
// provider_stalled error and the agent is stopped; garbage lines are non-fatal protocol_garbage
// errors and the pump goes on.
//
// The process lifecycle is ChildProcessProvider's (child_process_provider.h); this class writes
// the JSON-RPC protocol, the agent's requests and the mapping of its updates.
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "jsonrpc/json_rpc.h"
#include "providers/acp/acp_protocol.h"
#include "providers/acp/acp_terminals.h"
#include "providers/child_process_provider.h"
#include "providers/rpc_calls.h"

namespace agentstream::providers::acp {

struct AcpOptions {
  AgentCommand command;
  std::string cwd;                  // the session's working directory (required)
  std::string session_id;           // load this agent session instead of a new one
  std::optional<std::string> mode;  // session/set_mode after the session exists
  bool client_terminal = true;      // advertise the terminal/* client methods
  process::Millis handshake_timeout{60000};
  process::Millis stall_timeout{600000};
  process::Millis interrupt_timeout{5000};  // session/cancel, before signals
  process::KillPlan kill_plan;
  process::Millis close_grace{3000};  // after stdin EOF, before signals
  std::size_t max_line_bytes = std::size_t{8} << 20;
  std::size_t max_pending_requests = 64;
  std::size_t max_agent_requests = 64;
  std::size_t max_file_bytes = std::size_t{4} << 20;
  TerminalLimits terminal_limits;
};

class AcpProvider final : public ChildProcessProvider {
 public:
  AcpProvider(process::EventLoop& loop, AcpOptions options);
  ~AcpProvider() override;

  void StartTurn(const TurnRequest& request, Done done) override;
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override { return modes_; }
  void SetMode(const std::string& mode, Done done) override;
  std::vector<ModelInfo> AvailableModels() const override { return models_; }
  void SetModel(const std::string& model, Done done) override;
  std::vector<SlashCommand> ListCommands() const override;
  std::vector<PendingPermission> PendingPermissions() const override { return permissions_.List(); }
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;

  // The agent's initialize answer (agentCapabilities, agentInfo, ...), once started.
  const boost::json::value& agent_info() const { return init_result_; }

 private:
  using Reply = RpcCalls::Reply;
  // What answers a permission request: its JSON-RPC id and the options the agent offered.
  struct PermissionWire {
    jsonrpc::RpcId rpc_id;
    std::vector<AcpOption> options;
  };

  Result<process::SpawnOptions> Command() override;
  void Handshake() override;
  void OnFrame(const process::Frame& frame) override;
  void SendCancel() override;
  bool AwaitingPermission() const override { return !permissions_.empty(); }
  void DropTurn() override;
  void FailRequests(const process::ExitInfo& exit) override;
  void OnClosing() override { terminals_.reset(); }
  process::Millis CloseDelay() const override;

  void OnInitialized(Result<boost::json::value> result);
  void OnSession(bool load, Result<boost::json::value> result);
  void OnMessage(jsonrpc::RpcMessage m);
  void OnAgentRequest(const jsonrpc::RpcMessage& m);
  void OnPermissionRequest(const jsonrpc::RpcMessage& m);
  void OnFsRequest(const jsonrpc::RpcMessage& m);
  void Call(std::string_view method, boost::json::value params, Reply reply);
  void Answer(const jsonrpc::RpcId& id, Result<boost::json::value> result);
  void OnSessionReady(const boost::json::value& result);
  // Sends the turn's session/prompt, held first while the agent settles after a failed turn
  // (AgentCommand::settle_after_failed_turn).
  void SendPrompt(boost::json::array prompt);
  void OnPromptDone(Result<boost::json::value> result);
  void EndTurn(turn::ProviderTurnResult result);
  void CancelPermissions();

  AcpOptions options_;
  std::unique_ptr<AcpTerminals> terminals_;
  AcpUpdateMapper mapper_;
  RpcCalls calls_;
  std::size_t agent_requests_ = 0;  // the agent's requests we have not answered yet
  PermissionTable<PermissionWire> permissions_;
  std::uint64_t next_permission_ = 1;
  bool loading_ = false;  // session/load is replaying history
  std::optional<process::Clock::time_point> last_turn_end_;
  std::optional<process::Clock::time_point> last_failed_prompt_;  // answered with an error
  std::unique_ptr<process::TimerHandle> held_prompt_;  // a prompt waiting for the agent to settle
  std::vector<turn::ProviderEvent> history_;           // the replay of session/load
  boost::json::value init_result_;
  std::string session_id_, model_, version_, agent_name_;
  std::vector<ModeInfo> modes_;
  std::vector<ModelInfo> models_;
};

}  // namespace agentstream::providers::acp
