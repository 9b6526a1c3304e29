// EventFollower: reads one agent's session log live from the daemon (GET
// /v1/agents/{id}/events?offset=...&live=sse) and hands every event to the caller exactly once,
// in log order, across disconnects and daemon restarts.
//
// Resumption: the follower keeps the last `streamNextOffset` the daemon sent in a control frame
// and reopens the stream from it after any failure, with back-off (first_backoff doubling up to
// max_backoff, reset after a connection that delivered data). A resumed read may replay events
// already delivered (those after the last control frame); CursorDeduper drops them, so there is
// no duplicate, and since the offset only moves to positions the daemon named after the events
// before them, there is no gap.
//
// Threading: Run blocks the calling thread; the callbacks run on it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "client/stream_frames.h"
#include "client/transport.h"
#include "core/event_codec.h"
#include "core/status.h"

namespace agentstream::client {

struct EventFollowerOptions {
  std::string from = "-1";  // the offset to start at: "-1" (the beginning) or "EPOCH:SEQ"
  std::chrono::milliseconds first_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  std::size_t max_error_body_bytes = 64u << 10;  // of an HTTP error reply kept for its message
  std::size_t max_catch_up_bytes = 64u << 20;    // of a catch-up (non-SSE) reply body
  // When given: once it is true (set from any thread), Run returns OK within about 100 ms, also
  // while it waits to reconnect. Must outlive Run.
  const std::atomic<bool>* stop = nullptr;
};

class EventFollower {
 public:
  // Returns true to keep following, false to stop (Run then returns OK).
  using EventCallback = std::function<bool(const EventRecord& record)>;
  // Told why the stream broke and how long the follower waits before reconnecting.
  using RetryCallback = std::function<void(const Status& why, std::chrono::milliseconds delay)>;
  // Told when the reader reached the log's tail (after catch-up, and again after each resume).
  using UpToDateCallback = std::function<void()>;

  // `http` must outlive the follower.
  EventFollower(Transport& http, std::string agent, EventFollowerOptions options = {});

  // Follows until `on_event` returns false or `options.stop` is set (OK), or the daemon answers
  // something that retrying cannot fix, which is returned: a 4xx reply (no such agent, a bad
  // offset, a refused token), an event newer than this build reads (kUnsupportedVersion), or a
  // frame that does not decode (kInvalidArgument, kTooLarge). Connection failures, 5xx replies and
  // read errors the daemon reports are retried forever.
  Status Run(const EventCallback& on_event, const RetryCallback& on_retry,
             const UpToDateCallback& on_up_to_date = nullptr);

  // Where the next read starts.
  const std::string& offset() const { return offset_; }

 private:
  struct Attempt {
    Status status;            // why the connection ended (OK: on_event asked to stop)
    bool permanent = false;   // retrying cannot help
    bool progressed = false;  // the daemon answered 200: the back-off restarts
    bool stopped = false;     // on_event returned false
  };
  struct Connection;  // one read's state
  Attempt ReadOnce(const EventCallback& on_event, const UpToDateCallback& on_up_to_date);
  Result<bool> Consume(Connection& connection, Attempt& attempt, std::string_view bytes,
                       const EventCallback& on_event, const UpToDateCallback& on_up_to_date);
  void Finish(Connection& connection, Attempt& attempt, const EventCallback& on_event);
  Result<bool> Deliver(const std::vector<EventRecord>& records, const EventCallback& on_event);

  Transport& http_;
  std::string agent_;
  EventFollowerOptions options_;
  std::string offset_;
  CursorDeduper seen_;
};

}  // namespace agentstream::client
