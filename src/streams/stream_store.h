// The generic Durable Streams store (docs/protocol.md, "Generic streams"): named byte or JSON
// streams with idempotent creation, appends (Stream-Seq and idempotent producers), closing,
// deletion, TTL and absolute expiry, and forks that read through their source. Transport-free.
//
// One interface, two implementations chosen by OpenStreams (streams_factory.h):
// MemoryStreamStore (memory_stream_store.h: every stream in memory, journaled to SQLite) and the
// PostgreSQL store (postgres_streams.h: PostgreSQL is the source of truth, shared by several
// daemons). The protocol's rules for one stream are stream_rules.h, shared by both.
//
// Threading: every method may be called from any thread. A mutation's `done` runs exactly once,
// either before the call returns or on the store's own writer thread; it must not block on the
// store. What "done" means for durability is each implementation's (see their headers); the
// protocol layer answers a client only after WhenDurable says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "streams/offset.h"
#include "streams/stream_model.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

struct StreamLimits {
  std::size_t max_streams = 100000;                    // live streams (incl. soft-deleted)
  std::size_t max_total_bytes = std::size_t{1} << 30;  // stored data of all streams (memory store)
  std::size_t max_read_bytes = std::size_t{1} << 20;   // one catch-up response
  std::size_t max_read_messages = 4096;                // one catch-up response (PostgreSQL store)
  std::size_t max_producers = 1024;                    // producer states per stream
  std::size_t max_pending_writes = 65536;              // queued writes
  std::size_t max_watchers = 100000;                   // waiting long-polls and SSE readers
  std::int64_t producer_state_ttl_ms = 7LL * 24 * 3600 * 1000;  // idle producer state is dropped
};

enum class Code {
  kOk,
  kCreated,
  kNotFound,
  kGone,              // soft-deleted: deleted or expired while forks still read through it
  kConfigConflict,    // exists with another configuration
  kHasForks,          // the path is soft-deleted and cannot be reused yet
  kSourceNotFound,    // fork source missing or expired
  kSourceGone,        // fork source soft-deleted
  kBadForkOffset,     // beyond the source's tail
  kBadSubOffset,      // beyond the first message after the fork offset
  kForkTypeMismatch,  // content type differs from the source's
  kInvalidJson,
  kEmptyArray,
  kTypeMismatch,  // append content type differs from the stream's
  kSeqConflict,   // Stream-Seq not above the last one
  kClosed,        // append to a closed stream
  kDuplicate,     // idempotent producer retry
  kStaleEpoch,
  kInvalidEpochSeq,  // a new epoch must start at seq 0
  kSequenceGap,
  kFull,            // a limit of StreamLimits
  kUnavailable,     // the journal failed; the store refuses writes
  kStorageDown,     // the database could not be reached or refused: nothing was written
  kOutcomeUnknown,  // the database's answer to a commit was lost: it may or may not have happened
  kInvalidText,     // a path, content type, Stream-Seq or producer id the database cannot store
  kExpiresInPast,   // a create whose Stream-Expires-At is not after the store's clock
};

struct StreamInfo {
  std::string content_type;
  Offset tail;
  bool closed = false;
  std::optional<std::int64_t> ttl_seconds;
  std::optional<std::string> expires_at;
};

struct OpResult {
  Code code = Code::kOk;
  StreamInfo info;                  // the stream after the operation, when it exists
  Offset offset;                    // an append's new tail
  std::uint64_t producer_seq = 0;   // kDuplicate: the highest accepted seq
  std::uint64_t current_epoch = 0;  // kStaleEpoch
  std::uint64_t expected_seq = 0;   // kSequenceGap
  std::uint64_t received_seq = 0;
};

// An answer that is `code` alone.
inline OpResult WithCode(Code code) {
  OpResult r;
  r.code = code;
  return r;
}

struct ReadResult {
  Code code = Code::kOk;
  std::vector<Message> messages;
  bool up_to_date = true;  // false when max_read_bytes cut the read short
  StreamInfo info;
  bool json = false;
};

struct CreateArgs {
  std::string path;
  std::string content_type;  // empty: absent
  std::optional<std::int64_t> ttl_seconds;
  std::optional<std::string> expires_at;
  std::int64_t expires_at_ms = 0;
  std::string body;
  bool closed = false;
  std::optional<std::string> forked_from;
  std::optional<Offset> fork_offset;
  std::optional<std::uint64_t> fork_sub_offset;
};

struct ProducerArgs {
  std::string id;
  std::uint64_t epoch = 0;
  std::uint64_t seq = 0;
};

struct AppendArgs {
  std::string path;
  std::string body;          // empty with `close`: close only
  std::string content_type;  // empty: absent
  std::optional<std::string> stream_seq;
  std::optional<ProducerArgs> producer;
  bool close = false;
};

// "Type/Sub; params" -> "type/sub".
std::string NormalizeContentType(std::string_view content_type);

class StreamStore {
 public:
  using Done = std::function<void(OpResult)>;
  using Clock = system::WallClock;  // milliseconds since the Unix epoch; empty: the system's

  virtual ~StreamStore() = default;

  // Mutations. `done` gets the outcome (see the class comment for when and where it runs).
  virtual void CreateAsync(CreateArgs args, Done done) = 0;
  virtual void AppendAsync(AppendArgs args, Done done) = 0;
  virtual void DeleteAsync(std::string path, Done done) = 0;

  // `touch`: counts as an access for a sliding TTL (a read does; HEAD does not).
  virtual OpResult Head(const std::string& path, bool touch = false) = 0;
  // Messages after `after` (from the start when nullopt), at most max_read_bytes (at least one).
  virtual ReadResult Read(const std::string& path, std::optional<Offset> after) = 0;
  // The tail of each of `paths` that exists and is live (others are left out).
  virtual std::map<std::string, Offset> Tails(const std::vector<std::string>& paths) = 0;
  // The paths of streams (including soft-deleted ones) starting with `prefix`, at most
  // max_streams of them.
  virtual std::vector<std::string> Paths(const std::string& prefix) = 0;

  // `fn(ok)` once every change made so far is durable.
  virtual void WhenDurable(std::function<void(bool ok)> fn) = 0;

  // `fn` runs (on a thread of the store) after each durable change of the stream at `path`: an
  // append, a close or a deletion. 0 when max_watchers are registered.
  virtual std::uint64_t Watch(const std::string& path, std::function<void()> fn) = 0;
  virtual void Unwatch(const std::string& path, std::uint64_t id) = 0;
  // `hook(path)` after each durable change of any stream, like a watcher. Set before use.
  // Reset it (empty) before the hook's target goes away.
  virtual void SetChangeHook(std::function<void(const std::string&)> hook) = 0;

  virtual const StreamLimits& limits() const = 0;

  // Blocking forms of the mutations (tests, tools): they wait for `done`. Never call them on a
  // thread the store calls back on (a watcher, the change hook, another call's `done`).
  OpResult Create(const CreateArgs& args);
  OpResult Append(const AppendArgs& args);
  OpResult Delete(const std::string& path);
};

}  // namespace agentstream::streams
