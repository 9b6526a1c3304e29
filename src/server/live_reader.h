// LiveReader: the server's side of one live subscriber of one session (an SSE stream or a
// WebSocket subscription): delivers every event after its cursor exactly once, in order, from the
// shared hub batches when they fit and from the log itself when they do not (docs/protocol.md,
// "How live delivery works").
//
// The rule: the reader holds the next seq it must deliver. A hub batch that starts exactly
// there is delivered (and shared, not copied); a batch entirely before it is dropped; anything
// else (a gap, an overlap, a batch that arrived while catching up) switches the reader to
// catch-up, where Pull() reads the missing range from the log in bounded batches until it
// reaches the tail. A batch of a newer epoch means history was rewound: reset_needed().
//
// Not thread-safe: owned and called by one connection (its strand). Pure logic over EventLog
// reads; no sockets.
#pragma once

#include <memory>

#include "server/hub.h"

namespace agentstream::server {

class LiveReader {
 public:
  // Delivers events of `session` in `after.epoch` with seq > after.seq. `log` outlives it.
  LiveReader(EventLog& log, SessionId session, Cursor after, BatchLimits limits = {});

  // A hub batch arrived. Returns it when it is the next thing to deliver, else nullptr (then
  // check catching_up() and reset_needed()).
  std::shared_ptr<const EventBatch> OnLive(const std::shared_ptr<const EventBatch>& batch);

  // While catching up: the next batch read from the log, or nullptr when the reader reached
  // the tail (it is then live). The first call checks the cursor: kInvalidArgument when it is
  // past the tail, reset_needed() when its epoch is not the current one. Errors of the log are
  // returned unchanged.
  Result<std::shared_ptr<const EventBatch>> Pull();

  bool catching_up() const { return catching_up_; }
  // The session's current epoch is not the reader's: the client must reset (a rewind).
  bool reset_needed() const { return reset_needed_; }
  // The cursor of the last event delivered (or the start cursor).
  Cursor position() const { return Cursor{epoch_, Seq(next_.value() - 1)}; }
  const SessionId& session() const { return session_; }

 private:
  EventLog& log_;
  SessionId session_;
  BatchLimits limits_;
  Epoch epoch_;
  Seq next_;
  bool catching_up_ = true;
  bool reset_needed_ = false;
  bool checked_epoch_ = false;
  Seq seen_last_;  // the highest seq of a live batch not delivered while catching up
};

}  // namespace agentstream::server
