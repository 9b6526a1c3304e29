// CodexProvider: `codex app-server` (docs/providers.md, "The codex provider") as an AgentProvider.
// Newline JSON objects on stdin/stdout: our requests {id, method, params}, the server's responses,
// its notifications {method, params}, and its own requests (approvals) whose ids count separately
// from ours (a message with both `method` and `id` is a server request).
//
// Lifecycle: Start() spawns the server, sends `initialize` and the `initialized` notification,
// then `thread/start`, or for a stored thread id `thread/resume {excludeTurns: true}` followed by
// `thread/turns/list` pages (newest first, `itemsView: "full"`) until the thread's start or
// `max_history_turns`: those turns, oldest first, are kept for StreamHistory() as hydration
// (codex_history.h) and never published, as AcpProvider keeps the replay of `session/load`.
// A history that cannot be read does not fail Start(); StreamHistory() reports why. The whole
// handshake, history included, has `handshake_timeout`. A prompt is `turn/start`; the turn ends
// with the `turn/completed` notification (completed, interrupted or failed). Interrupt() sends
// `turn/interrupt` and escalates to signals after `interrupt_timeout`.
//
// Mapping: agentMessage items become assistant messages (deltas from item/agentMessage/delta),
// reasoning deltas become reasoning, commandExecution / fileChange / other tool items become tool
// calls (output deltas, then the item's final output and status), approval requests become
// permission requests answered accept / decline, thread/tokenUsage and everything else metadata.
//
// Bounds and faults as AcpProvider: line length, requests in flight, stall watchdog, garbage
// lines as non-fatal errors, exit as ProviderExited.
// The process lifecycle is ChildProcessProvider's (child_process_provider.h).
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "jsonrpc/json_rpc.h"
#include "providers/child_process_provider.h"
#include "providers/rpc_calls.h"

namespace agentstream::providers::codex {

struct CodexOptions {
  std::string program = "codex";
  // Before `app-server`: no plugins, apps or analytics (each contacts the network).
  std::vector<std::string> global_args = {"--disable", "plugins", "--disable",
                                          "apps",      "-c",      "analytics.enabled=false"};
  std::vector<std::string> env;  // exactly these "KEY=value" entries; empty: the daemon's
  std::string cwd;
  std::string thread_id;  // resume this thread instead of a new one
  std::optional<std::string> model;
  std::string approval_policy = "untrusted";  // untrusted | on-request | never
  std::string sandbox = "workspace-write";    // read-only | workspace-write | danger-full-access
  process::Millis handshake_timeout{60000};
  process::Millis stall_timeout{600000};
  process::Millis interrupt_timeout{5000};
  process::KillPlan kill_plan;
  process::Millis close_grace{3000};
  std::size_t max_line_bytes = std::size_t{8} << 20;
  std::size_t max_pending_requests = 64;
  // On resume: at most this many of the thread's latest turns are read for StreamHistory(), in
  // pages of `history_page_turns` (each page is one stdout line, under `max_line_bytes`).
  std::size_t max_history_turns = 1000;
  std::size_t history_page_turns = 20;
};

class CodexProvider final : public ChildProcessProvider {
 public:
  CodexProvider(process::EventLoop& loop, CodexOptions options);

  void StartTurn(const TurnRequest& request, Done done) override;
  // The turns read on resume (see above), oldest first; empty for a new thread. kUnavailable
  // when the resumed thread's history could not be read.
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override;
  void SetMode(const std::string& mode, Done done) override;
  void SetModel(const std::string& model, Done done) override;
  std::vector<PendingPermission> PendingPermissions() const override { return permissions_.List(); }
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;

 private:
  using Reply = RpcCalls::Reply;
  // What answers an approval request: its id and its kind.
  struct PermissionWire {
    jsonrpc::RpcId rpc_id;
    bool legacy = false;  // execCommandApproval / applyPatchApproval: approved | denied
  };

  Result<process::SpawnOptions> Command() override;
  void Handshake() override;
  void OnFrame(const process::Frame& frame) override;
  void SendCancel() override { SendInterrupt(); }
  bool AwaitingPermission() const override { return !permissions_.empty(); }
  void DropTurn() override;
  void FailRequests(const process::ExitInfo& exit) override;

  void OnInitialized(Result<boost::json::value> result);
  void OnThread(bool resume, Result<boost::json::value> result);
  void OnMessage(jsonrpc::RpcMessage m);
  void OnNotification(const std::string& method, const boost::json::object& params);
  void OnItem(bool completed, const boost::json::object& item);
  void OnServerRequest(const jsonrpc::RpcMessage& m);
  std::int64_t Call(std::string_view method, boost::json::value params, Reply reply);
  void LoadHistory(const std::string& cursor, const Done& finish);
  void FinishHistory(Status status);
  // Sends turn/interrupt once the turn id is known (else when turn/start answers).
  void SendInterrupt();
  void EndTurn(turn::ProviderTurnResult result);

  CodexOptions options_;
  RpcCalls calls_;
  PermissionTable<PermissionWire> permissions_;
  std::string nonce_;
  bool interrupt_sent_ = false;
  std::string thread_id_, turn_id_, model_, version_;
  std::set<std::string> streamed_;                  // agent message items that had deltas
  std::set<std::string> open_tools_;                // tool items started and not completed
  std::vector<boost::json::object> history_turns_;  // resume: pages read so far, newest first
  std::vector<turn::ProviderEvent> history_;        // resume: the thread's past, oldest first
  Status history_status_ = Status::Ok();
  std::int64_t history_call_ = 0;  // the thread/turns/list request in flight, 0 when none
};

}  // namespace agentstream::providers::codex
