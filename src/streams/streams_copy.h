// The generic Durable Streams' part of `agentstream store copy` (docs/operations.md, "Moving from
// SQLite to PostgreSQL"; the sessions' part is store/copy/store_copy.h, which runs this one while
// it holds both stores): every stream, its messages and producers' states, the subscriptions and
// their keys, moved between the SQLite journal of a data directory (`DATA/streams.db` with
// `DATA/subscriptions.key`) and the `ds_*` tables of a PostgreSQL database, either way and
// between two of a kind. Where each store keeps its streams is StreamsConfigFor's
// (streams_factory.h), as for the daemon.
//
// What is copied, row by row through each store's own rows (streams_copy_side.h): each stream's
// configuration (content type, TTL, Stream-Expires-At, creation time, closed and by which
// producer append, the fork it reads through with its offsets, soft deletion, the last
// Stream-Seq), its producers' states (id, epoch, last seq, last update), and its own messages
// with their offsets and bytes; each subscription's stored record (definition, followed streams
// with their acknowledged offsets, the wake in progress and its lease); and the keys that sign
// webhooks and derive callback tokens. Not copied: a stream that is deleted or expired at the
// source and that no copied fork reads through (a daemon would remove it at its next access;
// counted in `streams_left`). A sliding TTL restarts at the copy when either side is SQLite,
// which keeps no access times (as a daemon restarts it when it loads the journal).
//
// Resumable and idempotent: a stream the destination holds already must hold a prefix of the
// source's messages with the same configuration, else it is refused by name before anything is
// written (kConflict); the copy goes on after the destination's last message, in transactions
// of at most kStreamsCopyChunkMessages messages or kStreamsCopyChunkBytes bytes, and rewrites a
// stream's changing state (closed, producers, soft deletion, last Stream-Seq) only when it
// differs. Subscriptions are upserted by id. A rerun after a finished copy writes nothing.
//
// Verified: at the end each stream is digested on both sides (SHA-256 over its stored
// configuration and producers' states, its tail and each message's offset, length and bytes)
// and the digests compared, as are the subscriptions' records and the keys.
//
// Not thread-safe; one call at a time, on the calling thread. The memory held is the journal of
// each SQLite side (read whole, as a daemon loads it) and one chunk of messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "streams/streams_factory.h"

namespace agentstream::streams {

inline constexpr std::size_t kStreamsCopyChunkMessages = 512;
inline constexpr std::size_t kStreamsCopyChunkBytes = 32 << 20;
// Streams named in a refusal (the rest are counted).
inline constexpr std::size_t kStreamsNamedInError = 10;

struct StreamsCopyProgress {
  // "streams-check" (comparing what the destination holds), "streams-copy", "streams-verify".
  std::string phase;
  std::int64_t streams_done = 0;
  std::int64_t streams_total = 0;
  std::int64_t messages_done = 0;   // messages at the destination (copied before or now)
  std::int64_t messages_total = 0;  // own messages of the source's streams
};

struct StreamDigest {
  std::string path;
  std::int64_t messages = 0;  // own messages
  std::string tail;           // the stream's tail offset
  std::string sha256;         // hex
};

struct StreamsCopyReport {
  std::int64_t streams = 0;         // streams of the source to copy
  std::int64_t streams_copied = 0;  // streams this run wrote to
  std::int64_t streams_left = 0;    // deleted or expired at the source, no fork reads them
  std::int64_t messages = 0;        // own messages of the streams to copy
  std::int64_t messages_copied = 0;
  std::int64_t subscriptions = 0;
  std::int64_t subscriptions_copied = 0;
  bool keys_copied = false;
  std::vector<StreamDigest> digests;  // every copied stream's, by source id, equal on both sides
};

struct StreamsCopyOptions {
  // The stores as messages name them (a PostgreSQL URL without its password); default: the URL,
  // or the journal's path.
  std::string from_name;
  std::string to_name;
  // Called on the calling thread after each chunk and stream and once per phase; may be empty.
  std::function<void(const StreamsCopyProgress&)> progress;
};

class StreamsCopy {
 public:
  // The streams at `from` into those at `to` (StreamsConfigFor of each store; limits unused).
  StreamsCopy(StreamsConfig from, StreamsConfig to, StreamsCopyOptions options);
  ~StreamsCopy();
  StreamsCopy(const StreamsCopy&) = delete;
  StreamsCopy& operator=(const StreamsCopy&) = delete;

  // Opens both sides (the destination's journal or tables are created when missing) and holds
  // them until destroyed, then compares what the destination holds. Errors, nothing written:
  // kInvalidArgument for a store in memory or two stores with one journal; kIoError when a journal
  // cannot be opened (a daemon holds it) or read; kUnavailable when a server cannot be reached;
  // kUnsupportedVersion for PostgreSQL tables of a newer schema; kConflict naming the streams whose
  // destination content is not a prefix of the source's, or when the destination's subscriptions
  // were made with other keys.
  Status Check();
  // After Check: copies, then verifies. kIoError when a write failed (what was committed is
  // whole; a rerun goes on from there); kCorruption when the digests differ after the copy.
  Result<StreamsCopyReport> Copy();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::streams
