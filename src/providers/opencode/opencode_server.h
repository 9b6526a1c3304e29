// OpencodeServer: one `opencode serve` process shared by every opencode session of the daemon
// that uses the same program, environment and working directory (docs/providers.md, "The opencode
// provider"). Sessions hold it through Acquire()/Release(): the first Acquire starts it, the last
// Release stops it.
//
// The server listens on 127.0.0.1 only, on the port it prints ("--port 0": 4096 when free, else
// any) and requires HTTP basic auth with a random password the daemon generates per process
// (OPENCODE_SERVER_PASSWORD), so other local users cannot drive it. One `GET /global/event`
// stream carries the events of every session and directory; the server demultiplexes them by
// `properties.sessionID` to the watching sessions.
//
// Requests run on one worker thread with the synchronous client of net/http_client.h; the event
// stream is read on another. Both hand their results to the EventLoop; every callback runs on the
// loop's thread. Bounds: requests in flight (`max_pending_requests`), events received but not yet
// handled by the loop (`max_queued_events`: the reader then stops reading, so the server's socket
// pushes back), one event's size (`max_event_bytes`: larger events are dropped and reported).
//
// Threading: Acquire, Release and every method on the loop thread. The registry behind Acquire
// is shared by all loops and guarded by a mutex.
#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/http_client.h"
#include "process/child_process.h"
#include "process/event_loop.h"

namespace agentstream::providers::opencode {

struct OpencodeServerConfig {
  std::string program = "opencode";
  std::vector<std::string> env;  // exactly these "KEY=value" entries; empty: the daemon's
  std::string cwd;               // the server's own directory; sessions name theirs per request
  process::Millis start_timeout{60000};    // until it listens and the event stream is open
  process::Millis request_timeout{30000};  // each HTTP request, whole exchange
  process::KillPlan kill_plan;
  std::size_t max_event_bytes = std::size_t{8} << 20;
  std::size_t max_queued_events = 4096;
  std::size_t max_pending_requests = 64;
  std::size_t max_reply_bytes = std::size_t{8} << 20;
};

// What a session receives from the shared server.
struct SessionSink {
  // An event whose properties.sessionID is the session's: `type` ("message.part.updated", ...)
  // and `properties`.
  std::function<void(const std::string& type, const boost::json::object& properties)> on_event;
  // The server process ended (or its event stream broke and it was stopped): `message` says why.
  std::function<void(const std::string& message)> on_exit;
};

class OpencodeServer : public std::enable_shared_from_this<OpencodeServer> {
 public:
  using ReplyFn = std::function<void(Result<net::HttpReply>)>;

  // The running (or starting) server for `config` on `loop`, started when there is none. Each
  // Acquire must be balanced by one Release.
  static std::shared_ptr<OpencodeServer> Acquire(process::EventLoop& loop,
                                                 const OpencodeServerConfig& config);
  // Gives up one hold. The last one stops the process (escalating per the kill plan); `done`
  // runs once it is gone (at once when other holders remain). `done` may be null.
  void Release(std::function<void()> done);

  // Runs `done` once the server listens and its event stream is open: OK, or kUnavailable when
  // it cannot start, exited or did not come up within `start_timeout`.
  void WhenReady(std::function<void(Status)> done);
  // Sends `method target` with a JSON `body` (empty: none); `reply` runs on the loop with the
  // reply (any HTTP status) or kUnavailable (not running, too many requests, network failure).
  void Request(const std::string& method, const std::string& target, std::string body,
               ReplyFn reply);
  // Routes the events of `session_id` to `sink` until Unwatch (one sink per session).
  void Watch(const std::string& session_id, SessionSink sink);
  void Unwatch(const std::string& session_id);

  int pid() const;
  bool running() const { return child_ != nullptr && !exited_; }
  std::string StderrTail() const;
  std::size_t dropped_events() const { return dropped_events_; }

  OpencodeServer(process::EventLoop& loop, OpencodeServerConfig config, std::string key);
  ~OpencodeServer();
  OpencodeServer(const OpencodeServer&) = delete;
  OpencodeServer& operator=(const OpencodeServer&) = delete;

 private:
  struct Threads;

  void Start();
  void OnStdout(const process::Frame& frame);
  void OnExit(const process::ExitInfo& exit);
  void DrainEvents();
  void OnEvent(const std::string& data);
  void Fail(const std::string& why);
  void FinishReady(const Status& status);

  process::EventLoop& loop_;
  OpencodeServerConfig config_;
  std::string key_;
  std::string password_;
  std::string base_url_;
  int holders_ = 0;
  std::unique_ptr<process::ChildProcess> child_;
  bool exited_ = false, ready_ = false, stopping_ = false;
  std::string failure_;
  std::vector<std::function<void(Status)>> ready_waiters_;
  std::vector<std::function<void()>> stop_waiters_;
  std::map<std::string, SessionSink> sinks_;
  std::size_t dropped_events_ = 0;
  std::unique_ptr<process::TimerHandle> start_timer_;
  std::unique_ptr<Threads> threads_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentstream::providers::opencode
