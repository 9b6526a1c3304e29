// AttachedSession (internal to src/acp_server/): one daemon agent attached to the ACP client by
// session/new, session/load or session/resume. A follower thread reads the agent's log
// (cli/client/event_follower.h: resumable, de-duplicated) from a cursor and posts each event to
// the loop thread, where it is mapped to `session/update` notifications (acp_updates.h), ends the
// client's prompts, and asks or withdraws permission requests.
//
// Prompts are sent with a fresh clientMessageId each (a retry after a lost connection is recorded
// once); the prompt is answered when the log shows its turn's end (or its cancellation while
// queued). A permission request is asked once the follower has caught up with the log (a load
// asks the ones still pending after the replay); the answer goes to the daemon; a resolution in
// the log before the client answered withdraws the ask.
//
// Threading: all methods run on the loop thread; the follower thread only reads the log and
// posts. The follower pauses while the client's output queue is over half its bound.
#pragma once

#include <atomic>
#include <boost/json/value.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "acp_server/acp_shapes.h"
#include "acp_server/acp_updates.h"
#include "api/agent_types.h"
#include "core/event.h"
#include "jsonrpc/json_rpc.h"

namespace agentstream::acp_server {

class Connection;

class AttachedSession : public std::enable_shared_from_this<AttachedSession> {
 public:
  // `connection` must outlive the session. `load_id`: for session/load, the request answered once
  // the replay is done (nullopt: none).
  AttachedSession(Connection& connection, const api::AgentSnapshot& snapshot,
                  SessionSettings settings, std::optional<jsonrpc::RpcId> load_id);
  ~AttachedSession();

  // Starts following the log after `from` ("-1": from the beginning). Permissions the snapshot
  // lists as pending (of its active turn) are asked when the follower catches up, unless the log
  // resolves them or ends that turn first.
  void Start(const std::string& from, const api::AgentSnapshot& snapshot);
  // Stops the follower and answers what is open: with `cancel_work` (session/close) the client's
  // running turns are interrupted and its prompts answered "cancelled"; without (the client went
  // away) nothing is sent and the daemon's turns run on.
  void Detach(bool cancel_work);

  void Prompt(const jsonrpc::RpcId& rpc_id, Submission submission);
  // session/cancel: interrupts the client's running turn, drops its queued prompts.
  void Cancel();
  // Whether `rpc_id` is one of this session's unanswered prompts.
  bool HasPrompt(const jsonrpc::RpcId& rpc_id) const;
  // The client's answer to the ask for `request` (already known not to be withdrawn).
  void OnPermissionAnswer(const RequestId& request, const jsonrpc::RpcMessage& answer);

  const std::string& id() const { return id_; }
  SessionSettings& settings() { return mapper_.settings(); }

 private:
  struct PendingPrompt {
    jsonrpc::RpcId rpc_id;
    std::string client_message_id;
    std::optional<std::string> turn;  // once started
    bool queued = false;              // the daemon queued it behind a running turn
    bool cancel_requested = false;
  };
  struct PendingPermission {
    PermissionRequested request;
    std::optional<std::string> turn;  // the turn that asked; its end withdraws the ask
    std::int64_t ask_id = 0;          // the open ask to the client; 0: not asked, or answered
    bool answered = false;
  };

  void Follow(std::string from);  // the follower thread
  void OnEvent(const Event& event);
  void OnCaughtUp();
  void OnFollowerEnded(const Status& why);
  void OnSendReply(const std::string& client_message_id, Result<boost::json::value> reply);
  void Ask(PendingPermission& pending);
  void CancelPrompt(PendingPrompt& prompt);
  void Answer(const std::string& client_message_id, std::string line);
  PendingPrompt* FindPrompt(const std::string& client_message_id);

  Connection& connection_;
  std::string id_;
  UpdateMapper mapper_;
  std::optional<jsonrpc::RpcId> load_id_;  // an unanswered session/load
  std::vector<PendingPrompt> prompts_;
  std::map<std::string, PendingPermission> permissions_;  // pending in the log, by request id
  // The client message ids of the prompts this client sent (their user messages are the client's
  // own and not echoed back), the last kMaxOwnPrompts.
  static constexpr std::size_t kMaxOwnPrompts = 4096;
  std::set<std::string> own_prompts_;
  std::deque<std::string> own_order_;
  bool caught_up_ = false;
  bool ended_ = false;  // the follower stopped for good
  std::string ended_why_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> in_flight_{0};  // event payload bytes posted, not yet handled
  std::thread follower_;
};

}  // namespace agentstream::acp_server
