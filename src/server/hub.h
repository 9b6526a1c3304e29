// The live fan-out hub: one EventLog commit listener for the whole server, and per session the
// set of live subscribers (SSE streams, WebSocket subscriptions, long-polls). The events of each
// commit are encoded once into an immutable, shared EventBatch that every subscriber of the
// session receives; nobody copies it. They come with the commit notice when the log has them (this
// process's appends, CommitNotice::records), else they are read from the log once.
//
// Delivery is a hint, never the source of truth: a subscriber checks each batch against the next
// seq it must deliver and reads anything it missed from the log itself (LiveReader, live_reader.h),
// so a late, early or missing batch can never cause a gap or a duplicate.
//
// Threading: the commit listener runs on the log's thread and only posts; commits are processed
// one at a time through `post` (the server's executor). Subscribe/unsubscribe may be called from
// any thread. Subscriber callbacks run on the hub's executor and must only post to their owner.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/ids.h"
#include "store/event_log.h"

namespace agentstream::server {

// A run of consecutive events of one session epoch, encoded once.
struct EventBatch {
  SessionId session;
  Epoch epoch;
  Seq first;  // first and last seq of the events; both 0 for an epoch marker (no events)
  Seq last;
  std::size_t count = 0;
  // The envelopes (core/event_codec.h) as one JSON array text: "[{...},{...}]".
  std::shared_ptr<const std::string> json;
  bool epoch_marker() const { return count == 0; }

  // The text a WebSocket "events" message puts before `json` (WsApp::SendBatch), made by the
  // first subscriber the batch is sent to and shared by the others.
  mutable std::once_flag ws_head_once;
  mutable std::string ws_head;
};

// Bounds of one encoded batch (one frame): events and payload bytes. A batch holds at least one
// event, so a single event larger than max_bytes still travels (it is at most the log's
// max_payload_bytes, 1 MiB by default).
struct BatchLimits {
  std::size_t max_events = 256;
  std::size_t max_bytes = std::size_t{256} * 1024;
};

// Reads events of `session` in `epoch` from `from` (inclusive), at most `limits`, encoded as one
// batch. `has_newer` says more events follow. A read of nothing returns a batch with count 0.
Result<std::shared_ptr<const EventBatch>> ReadBatch(EventLog& log, const SessionId& session,
                                                    Epoch epoch, Seq from,
                                                    const BatchLimits& limits, bool* has_newer);

using Poster = std::function<void(std::function<void()>)>;
using BatchCallback = std::function<void(std::shared_ptr<const EventBatch>)>;

struct HubStats {
  std::uint64_t batches = 0;     // batches built from commits
  std::uint64_t deliveries = 0;  // batch deliveries to subscribers
  std::size_t subscribers = 0;   // current subscribers
};

class Hub {
 public:
  // `log` must outlive the hub. `post` runs a function on the server's executor (thread-safe);
  // that executor must not run work posted by the hub after the hub is destroyed (stop and join
  // it first).
  Hub(EventLog& log, Poster post, BatchLimits limits = {});
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // RAII registration; destroying it unsubscribes. A delivery already under way may still call
  // the callback once, so callbacks hold only weak references to their owner.
  class Token {
   public:
    Token() = default;
    Token(Hub* hub, SessionId session, std::uint64_t id)
        : hub_(hub), session_(std::move(session)), id_(id) {}
    Token(Token&& o) noexcept { *this = std::move(o); }
    Token& operator=(Token&& o) noexcept;
    ~Token() { Reset(); }
    void Reset();

   private:
    Hub* hub_ = nullptr;
    SessionId session_;
    std::uint64_t id_ = 0;
  };

  // Registers `on_batch` for every batch of `session` committed from now on.
  [[nodiscard]] Token Subscribe(const SessionId& session, BatchCallback on_batch);

  HubStats Stats() const;

  // Stops listening to the log (before the log or the executor go away). Idempotent.
  void Stop();

 private:
  struct SessionState {
    std::map<std::uint64_t, std::shared_ptr<BatchCallback>> subscribers;
    Epoch epoch;
    Seq next;  // the first seq not yet broadcast
  };
  void OnCommit(const CommitNotice& notice);
  void Remove(const SessionId& session, std::uint64_t id);

  EventLog& log_;
  Poster post_;
  BatchLimits limits_;
  ListenerRegistration commits_;
  mutable std::mutex mu_;
  std::unordered_map<SessionId, SessionState> sessions_;  // guarded by mu_
  std::uint64_t next_id_ = 1;                             // guarded by mu_
  HubStats stats_;                                        // guarded by mu_
};

}  // namespace agentstream::server
