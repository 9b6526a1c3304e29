// OpencodeProvider: one opencode session as an AgentProvider, over the HTTP API of a shared
// `opencode serve` process (opencode_server.h; docs/providers.md, "The opencode provider").
//
// Lifecycle: Start() acquires the shared server, waits until it listens, then creates a session
// (`POST /session?directory=CWD`) or checks the stored one (`GET /session/{id}`). A prompt is
// `POST /session/{id}/prompt_async` (accepted with 204); the turn ends at the first
// `session.idle` after the server recorded our prompt as a new user message, exactly once:
// completed, canceled (after an abort or a MessageAbortedError) or failed (a `session.error`).
// Interrupt() sends `POST /session/{id}/abort`; when the turn has not ended `interrupt_timeout`
// later, the provider ends it as canceled itself. It never signals the shared server: other
// sessions run in it.
//
// Mapping: text parts become assistant messages (id = part id; `message.part.delta` text deltas,
// the rest of the final text when deltas missed some), reasoning parts reasoning deltas, tool
// parts tool calls (started once running, streamed `metadata.output` as output, completed /
// error as the end), `permission.asked` permission requests answered with
// `POST /permission/{id}/reply` once / always / reject, step-finish tokens usage. The user text
// part of our prompt is the user echo. Events of messages older than the turn's prompt and
// events while no turn runs are dropped: opencode repeats message and part updates after
// `session.idle`, and they must not open turns.
//
// Faults: the server's exit fails the open turn (ProviderExited with the exit status); a turn
// without any event for `stall_timeout` is aborted and failed (provider_stalled).
// The subscribers, the interrupt's deadline and the watchdog are ProviderBase's (provider_base.h);
// it has no process of its own (the process is the shared server's, opencode_server.h).
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "providers/opencode/opencode_server.h"
#include "providers/provider_base.h"

namespace agentstream::providers::testing {
class ProviderTestPeer;  // providers/testing/provider_test_peer.h
}  // namespace agentstream::providers::testing

namespace agentstream::providers::opencode {

struct OpencodeOptions {
  OpencodeServerConfig server;
  std::string cwd;         // the session's project directory (`?directory=`); empty: the server's
  std::string session_id;  // reopen this opencode session instead of creating one
  std::optional<std::string> model;  // "providerID/modelID"; empty: opencode's configured model
  std::string mode = "build";        // the opencode agent: build | plan
  process::Millis stall_timeout{600000};
  process::Millis interrupt_timeout{5000};
};

class OpencodeProvider final : public ProviderBase {
 public:
  OpencodeProvider(process::EventLoop& loop, OpencodeOptions options);
  ~OpencodeProvider() override;

  void Start(Done done) override;
  void StartTurn(const TurnRequest& request, Done done) override;
  Result<std::vector<turn::ProviderEvent>> StreamHistory() override;
  RuntimeInfo GetRuntimeInfo() const override;
  std::vector<ModeInfo> AvailableModes() const override;
  void SetMode(const std::string& mode, Done done) override;
  void SetModel(const std::string& model, Done done) override;
  std::vector<PendingPermission> PendingPermissions() const override { return permissions_.List(); }
  void RespondToPermission(const RequestId& request, const PermissionReply& reply,
                           Done done) override;
  std::optional<PersistenceHandle> DescribePersistence() const override;
  void Close(Done done) override;

 private:
  friend class providers::testing::ProviderTestPeer;

  // The shared server's stderr tail, for a failing test's message ("" before Start()).
  std::string StderrTail() const;

  // Per-part progress within the running turn.
  struct PartState {
    std::string kind;          // text | reasoning | tool
    std::size_t streamed = 0;  // bytes of text (or tool output) already published
    bool started = false, ended = false;
  };

  void OnEvent(const std::string& type, const boost::json::object& p);
  void OnPart(const boost::json::object& part);
  void OnTextPart(const boost::json::object& part, PartState& state);
  void OnToolPart(const boost::json::object& part, PartState& state);
  void OnDelta(const boost::json::object& p);
  void OnPermission(const boost::json::object& p);
  void OnServerExit(const std::string& message);
  void EndTurn(turn::ProviderTurnResult result);
  // The shared server is never signalled: the turn is aborted over HTTP and, when that does not
  // end it in time, ended here.
  void SendCancel() override { SendAbort(); }
  void OnInterruptTimeout() override;
  void OnStalled() override;
  bool AwaitingPermission() const override { return !permissions_.empty(); }
  void SendAbort();
  std::string Target(const std::string& path) const;

  OpencodeOptions options_;
  std::shared_ptr<OpencodeServer> server_;
  std::string session_id_, version_;
  bool released_ = false;
  Done start_done_;
  // The running turn.
  bool prompt_seen_ = false, abort_sent_ = false, aborted_ = false;
  std::string prompt_message_id_;  // our prompt's user message, once seen
  std::string last_user_message_;  // opencode ids grow: older user messages compare lower
  std::optional<std::string> error_;
  std::map<std::string, PartState> parts_;
  PermissionTable<> permissions_;
};

}  // namespace agentstream::providers::opencode
