// LiveSource: a Durable Streams read that waits, a long-poll or an SSE stream, of any kind of
// stream. One transport (src/server/stream_http.cc) drives every source: it calls Watch once,
// then Poll (a long-poll) or Step (SSE) at each wake-up, each idle interval and each time the
// frames it was given are written, and writes what comes back. The source decides what to send;
// the transport only moves bytes.
//
// Two kinds: a generic stream (OpenStoreLiveSource below, over StreamStore and a LiveRead of the
// protocol layer) and a session log (src/server/session_live_source.h, over EventLog and the
// live hub). Both write their control events with FormatControlEvent and their SSE with
// net/sse_writer.h, so the two kinds cannot drift apart.
//
// Not thread-safe: a source is owned and called by one connection's thread. Only the `wake` it
// was given is called from other threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "streams/stream_protocol.h"

namespace agentstream::streams {

// One piece of a live response: head + *shared + tail, so bytes encoded once for many readers
// (a batch of a session's events) are written to each of them without a copy.
struct Frame {
  std::string head;
  std::shared_ptr<const std::string> shared;
  std::string tail;
  std::size_t size() const { return head.size() + (shared ? shared->size() : 0) + tail.size(); }
};

// The frames waiting for a reader's socket, in order; `bytes` counts every queued frame,
// including the one being written.
struct FrameQueue {
  std::deque<Frame> frames;
  std::size_t bytes = 0;
  bool writing = false;  // the transport's: a write is under way
  void Push(Frame f) {
    bytes += f.size();
    frames.push_back(std::move(f));
  }
  void PopFront() {
    bytes -= frames.front().size();
    frames.pop_front();
  }
};

// What one SSE step tells the transport, beside the frames it queued.
struct LiveStep {
  bool end = false;   // the stream ended: close once the queue is written
  bool more = false;  // there is more to send now: step again once some of the queue is written
  bool drop = false;  // the reader fell too far behind: close at once (it resumes from its cursor)
};

class LiveSource {
 public:
  virtual ~LiveSource() = default;

  // Registers `wake`, which the source calls (from any thread) when the stream may have changed,
  // until the source is destroyed. False when no more readers may wait (the transport answers
  // 503).
  virtual bool Watch(std::function<void()> wake) = 0;

  // True for an SSE stream, false for a long-poll.
  virtual bool sse() const = 0;

  // A long-poll: the response, or nullopt to keep waiting. `timed_out`: the transport's
  // long-poll timeout passed.
  virtual std::optional<StreamResponse> Poll(bool timed_out) = 0;

  // SSE: the response's status line and headers, ending with the empty line.
  virtual std::string SseHead() const = 0;
  // SSE: how long the stream may stay silent before Step(idle = true) sends a keep-alive.
  virtual std::chrono::milliseconds idle_interval() const = 0;
  // SSE: queues the frames to send now on `queue`, which holds what is not written yet; a
  // source reads less (or nothing) while that is large. `idle`: idle_interval() passed.
  virtual LiveStep Step(bool idle, FrameQueue& queue) = 0;
};

// The live read `read` of a generic stream of `store`. An SSE stream sends a control event as
// its keep-alive every `idle_interval`, and pauses reading while more than `pause_bytes` wait
// to be written. `store` outlives the source.
std::unique_ptr<LiveSource> OpenStoreLiveSource(StreamStore& store, LiveRead read,
                                                std::chrono::milliseconds idle_interval,
                                                std::size_t pause_bytes);

}  // namespace agentstream::streams
