// WsApp: the WebSocket app protocol at /ws (docs/protocol.md, "WebSocket app protocol"), one per
// connection. JSON text messages {"type", "id"?, ...} in; replies, event frames, resets and
// live-only control notices out. Subscriptions are LiveReaders (live_reader.h) fed by the hub, so a
// subscribe with a resume cursor replays from the log and continues live with no gap and no
// duplicate; a cursor of a replaced epoch gets a `reset` and a bounded tail page.
//
// Transport-free: the connection implements WsOutput. Threading: every method runs on the
// connection's strand; `post` (given by the transport) runs a function there while the
// connection lives, and never after; callbacks of the hub and of AgentManager go through it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "runtime/agent_manager.h"
#include "server/hub.h"
#include "server/live_reader.h"
#include "server/metrics.h"
#include "store/device_store.h"
#include "timeline/timeline_service.h"

namespace agentstream::server {

struct WsLimits {
  std::size_t max_message_bytes = std::size_t{1} << 20;  // one incoming message (1 MiB)
  std::size_t max_queue_bytes = std::size_t{4} << 20;    // outgoing bytes queued (4 MiB)
  std::chrono::milliseconds unsubscribe_grace{30000};    // kept delivering after an unsubscribe
  std::size_t max_subscriptions = 256;                   // per connection
  BatchLimits batch;                                     // one events frame
};

// What WsApp needs from its connection.
class WorkspaceRoutes;  // workspace_routes.h
class ScheduleRoutes;   // schedule_routes.h

class WsOutput {
 public:
  virtual ~WsOutput() = default;
  // Queues one text frame made of head + *shared + tail (the shared part is an encoded batch
  // sent to many clients without copying).
  virtual void Send(std::string head, std::shared_ptr<const std::string> shared,
                    std::string tail) = 0;
  // Bytes queued and not yet written.
  virtual std::size_t queued_bytes() const = 0;
  // Closes the connection with a close reason (after queued frames).
  virtual void Close(std::string reason) = 0;
  // Runs `fn` on the strand after `delay`, unless the connection closed first.
  virtual void After(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
};

class WsApp : public std::enable_shared_from_this<WsApp> {
 public:
  // Every reference must outlive the app; `out` lives as long as the connection.
  // `workspaces` (may be null) forks agents that have a worktree (workspace_routes.h);
  // `schedules` (may be null: the schedules.* messages are refused) answers schedules.*.
  WsApp(runtime::AgentManager& agents, EventLog& log, TimelineService& timeline, Hub& hub,
        Metrics& metrics, WsOutput& out, Poster post, WsLimits limits = {},
        WorkspaceRoutes* workspaces = nullptr, ScheduleRoutes* schedules = nullptr);

  // The paired device the connection belongs to ("" for the owner), recorded with its presence.
  // Call before Start().
  void SetPresenceDevice(std::string device_id) { presence_device_ = std::move(device_id); }
  // Starts watching agent notices. Call once after construction (needs shared_from_this).
  void Start();
  // One text message from the client.
  void OnMessage(std::string_view text);
  // A binary message, which the protocol refuses with an error (the connection stays open).
  void OnBinaryMessage();
  // The transport finished writing a frame: continue paced catch-up replays.
  void OnWritten();
  // The connection closed: drop every subscription (no grace) and the notice watcher.
  void Shutdown();

 private:
  struct Sub {
    std::unique_ptr<LiveReader> reader;
    Hub::Token token;
    std::uint64_t generation = 0;  // distinguishes a re-subscribe from a stale grace timer
    bool in_grace = false;
  };
  using Handler = void (WsApp::*)(const boost::json::object& msg, const std::string& id);

  void SendJson(const boost::json::object& msg);
  // `msg` with the request's `id` (when it had one): every reply to a request goes through here.
  void SendReply(const std::string& id, boost::json::object msg);
  void SendError(const std::string& id, const Status& status);
  void SendOk(const std::string& id);
  template <class T>
  std::function<void(Result<T>)> OnStrand(std::function<void(WsApp&, Result<T>)> fn);
  std::function<void(Status)> OkOnStrand(std::string id);
  std::function<void(Result<api::AgentSnapshot>)> AgentOnStrand(std::string id);

  void Hello(const boost::json::object& msg, const std::string& id);
  void AgentsList(const boost::json::object& msg, const std::string& id);
  void AgentsCreate(const boost::json::object& msg, const std::string& id);
  void AgentsClose(const boost::json::object& msg, const std::string& id);
  void SendPrompt(const boost::json::object& msg, const std::string& id);
  void Interrupt(const boost::json::object& msg, const std::string& id);
  void PermissionReply(const boost::json::object& msg, const std::string& id);
  void ModeSet(const boost::json::object& msg, const std::string& id);
  void ModelSet(const boost::json::object& msg, const std::string& id);
  void ThinkingSet(const boost::json::object& msg, const std::string& id);
  // mode.set, model.set, thinking.set: the member `name` of `msg`, given to `set`.
  using Setter = void (runtime::AgentManager::*)(const SessionId&, std::string,
                                                 runtime::StatusCallback, runtime::Forwarding);
  void SettingSet(const boost::json::object& msg, const std::string& id, std::string_view name,
                  Setter set);
  void AgentsRename(const boost::json::object& msg, const std::string& id);
  void Search(const boost::json::object& msg, const std::string& id);
  void TimelineFetch(const boost::json::object& msg, const std::string& id);
  void Subscribe(const boost::json::object& msg, const std::string& id);
  void Unsubscribe(const boost::json::object& msg, const std::string& id);
  void Heartbeat(const boost::json::object& msg, const std::string& id);
  // Stores this connection's presence row from a heartbeat (docs/notifications.md, "Routing by
  // presence"): at once when visibility or focus changed, else at most every
  // kPresenceRewriteMs.
  void ReportPresence(const boost::json::object& msg);
  void ForkOrRewind(const boost::json::object& msg, const std::string& id);
  void GitAction(const boost::json::object& msg, const std::string& id);
  void Schedules(const boost::json::object& msg, const std::string& id);

  // Which agents' control notices this client hears of: every agent once it asked for the list,
  // else those it subscribes to. Shared with the notice watcher, which asks on the agent manager's
  // thread.
  struct NoticeInterest {
    std::atomic<bool> all{false};
    mutable std::mutex mu;
    std::set<std::string> followed;  // guarded by mu
    bool Wants(const SessionId& agent) const;
    void Follow(const SessionId& agent, bool on);
    void Clear();
  };
  // Drop one subscription, or all, with their part of the notice interest.
  void EraseSub(std::map<SessionId, Sub>::iterator it);
  void ClearSubs();
  // Starts (or restarts) following `agent` after `after`.
  void Follow(const SessionId& agent, Cursor after);
  void OnBatch(std::uint64_t generation, const std::shared_ptr<const EventBatch>& batch);
  void SendBatch(const EventBatch& batch);
  // Reads catch-up batches while the send queue has room; handles resets.
  void Pump(const SessionId& agent);
  void Reset(const SessionId& agent);
  // Closes the connection once more than limits_.max_queue_bytes wait to be sent (after a batch
  // of `agent`); true then.
  bool Overflowing(const SessionId& agent);

  runtime::AgentManager& agents_;
  EventLog& log_;
  TimelineService& timeline_;
  Hub& hub_;
  Metrics& metrics_;
  WsOutput& out_;
  Poster post_;
  WsLimits limits_;
  WorkspaceRoutes* workspaces_;  // null: forks never make worktrees
  ScheduleRoutes* schedules_;    // null: no schedules.* messages
  std::map<SessionId, Sub> subs_;
  std::shared_ptr<NoticeInterest> interest_ = std::make_shared<NoticeInterest>();
  std::uint64_t next_generation_ = 1;
  ListenerRegistration notices_;
  // Presence: notification routing only, never consulted for delivery.
  const std::string presence_client_;  // this connection's id, unique across daemons
  std::string presence_device_;        // the paired device the connection is of; "" for the owner
  PresenceRecord presence_;            // the row last stored
  bool presence_stored_ = false;
  bool closed_ = false;
};

}  // namespace agentstream::server
