// AcpProvider: any Agent Client Protocol agent (`gemini --acp`, `opencode acp`, the Claude ACP
// adapter, ...) as an AgentProvider, configured by its command alone (acp_protocol.h presets).
// JSON-RPC 2.0, one message per line on the agent's stdin/stdout (AGENT-CLIS.md section 3).
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
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "jsonrpc/json_rpc.h"
#include "process/child_process.h"
#include "providers/acp/acp_protocol.h"
#include "providers/acp/acp_terminals.h"
#include "providers/provider.h"

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

class AcpProvider final : public AgentProvider {
 public:
  AcpProvider(process::EventLoop& loop, AcpOptions options);
  ~AcpProvider() override;

  Subscription Subscribe(EventCallback callback) override;
  void Start(Done done) override;
  void StartTurn(const TurnRequest& request, Done done) override;
  void Interrupt(Done done) override;
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override { return modes_; }
  void SetMode(const std::string& mode, Done done) override;
  std::vector<ModelInfo> AvailableModels() const override { return models_; }
  void SetModel(const std::string& model, Done done) override;
  std::vector<ThinkingOption> ThinkingOptions() const override { return {}; }
  void SetThinkingOption(const std::string& option, Done done) override;
  std::vector<SlashCommand> ListCommands() const override;
  std::vector<PendingPermission> PendingPermissions() const override;
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;
  void Close(Done done) override;

  std::string StderrTail() const;
  // The agent's initialize answer (agentCapabilities, agentInfo, ...), once started.
  const boost::json::value& agent_info() const { return init_result_; }

 private:
  using Reply = std::function<void(Result<boost::json::value>)>;

  void OnFrame(const process::Frame& frame);
  void OnMessage(jsonrpc::RpcMessage m);
  void OnAgentRequest(const jsonrpc::RpcMessage& m);
  void OnPermissionRequest(const jsonrpc::RpcMessage& m);
  void OnFsRequest(const jsonrpc::RpcMessage& m);
  void OnExit(const process::ExitInfo& exit);
  void Call(std::string_view method, boost::json::value params, Reply reply);
  void Answer(const boost::json::value& id, Result<boost::json::value> result);
  void OnSessionReady(const boost::json::value& result);
  void OnPromptDone(Result<boost::json::value> result);
  void EndTurn(turn::ProviderTurnResult result);
  void CancelPermissions();
  void ResolveInterruptWaiters();
  void ArmWatchdog();
  void Later(Done done, Status status);
  void Publish(turn::ProviderEvent event);
  void PublishAll(std::vector<turn::ProviderEvent> events);

  process::EventLoop& loop_;
  AcpOptions options_;
  std::shared_ptr<SubscriberList> subscribers_ = std::make_shared<SubscriberList>();
  std::unique_ptr<process::ChildProcess> child_;
  std::unique_ptr<AcpTerminals> terminals_;
  AcpUpdateMapper mapper_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, Reply> pending_;
  std::size_t agent_requests_ = 0;  // the agent's requests we have not answered yet
  struct Permission {
    PendingPermission info;
    boost::json::value rpc_id;
    std::vector<AcpOption> options;
  };
  std::map<RequestId, Permission> permissions_;
  std::uint64_t next_permission_ = 1;
  bool connected_ = false, closing_ = false, exited_ = false;
  bool loading_ = false;                      // session/load is replaying history
  bool turn_running_ = false;                 // a session/prompt is outstanding
  std::vector<turn::ProviderEvent> history_;  // the replay of session/load
  std::vector<Done> interrupt_waiters_, close_waiters_;
  std::unique_ptr<process::TimerHandle> watchdog_, handshake_timer_, interrupt_timer_, close_timer_;
  boost::json::value init_result_;
  std::string session_id_, model_, version_, agent_name_;
  std::vector<ModeInfo> modes_;
  std::vector<ModelInfo> models_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentstream::providers::acp
