// Internal to `store copy` (store_copy.h): one session moved between two stores' tables, and its
// digest. The session's rows are: its `sessions` row (found by id; its integer key is each
// store's own), its `epochs`, its record batches in `events`, its `producers`, its
// `checkpoints` row and its `owner_history`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "store/copy/copy_conn.h"

namespace agentstream::store_copy {

// What the destination holds of a source session.
struct SessionPlan {
  std::string id;
  bool present = false;     // the destination has the session's row
  std::int64_t events = 0;  // the source's events of the session, every epoch
  std::int64_t copied = 0;  // of which the destination holds already
  // The destination holds all of it: events, row, producers, checkpoint, history.
  bool complete = false;
};

// Compares what `to` holds of session `id` with `from`: the same session (created alike, from
// the same fork point, with the same epochs) whose batches are a prefix of the source's.
// kConflict, naming the session and the difference, otherwise; kCorruption when a source row
// fails to decode; kIoError when reading fails.
Result<SessionPlan> PlanSession(CopyConn& from, CopyConn& to, const std::string& id);

// Copies what `to` lacks of the session: its row and epochs, then its batches after the
// destination's last one of each epoch in transactions of kCopyChunkRows / kCopyChunkBytes,
// then its producers, checkpoint and ownership history. `copied(n)` runs after each committed
// chunk of n events. Returns the events written. Errors: kIoError (the chunk in flight rolled
// back).
Result<std::int64_t> CopySession(CopyConn& from, CopyConn& to, const SessionPlan& plan,
                                 const std::function<void(std::int64_t)>& copied);

// The session's digest: SHA-256 over each epoch's number and base and each of its records
// (seq, time, kind, format, turn, payload, writer), decoded and checksum-verified; and the
// number of records. kCorruption / kUnsupportedVersion for a bad record; kNotFound when the
// store has no such session.
struct Digest {
  std::int64_t events = 0;
  std::string sha256;
};
Result<Digest> DigestSession(CopyConn& conn, const std::string& id);

}  // namespace agentstream::store_copy
