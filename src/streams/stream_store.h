// The generic Durable Streams store (docs/protocol.md, "Generic streams"): named byte or JSON
// streams with idempotent creation, appends (Stream-Seq and idempotent producers), closing,
// deletion, TTL and absolute expiry, and forks that read through their source. Transport-free
// and thread-safe (one mutex). Every stream is held in memory and journaled to SQLite
// (StreamJournal); a mutating call returns at once and its caller answers the client from
// WhenDurable, after the group commit that made it durable. Watchers are woken after the commit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "streams/offset.h"
#include "streams/stream_journal.h"
#include "streams/stream_model.h"

namespace agentstream::streams {

struct StreamLimits {
  std::size_t max_streams = 100000;                    // live streams (incl. soft-deleted)
  std::size_t max_total_bytes = std::size_t{1} << 30;  // stored data of all streams
  std::size_t max_read_bytes = std::size_t{1} << 20;   // one catch-up response
  std::size_t max_producers = 1024;                    // producer states per stream
  std::size_t max_pending_writes = 65536;              // journal queue
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
  kFull,         // a limit of StreamLimits
  kUnavailable,  // the journal failed; the store refuses writes
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
  using Clock = std::function<std::int64_t()>;  // milliseconds since the Unix epoch

  // `journal` null: memory only (tests, the "memory:" store).
  StreamStore(StreamLimits limits, std::unique_ptr<StreamJournal> journal, Clock clock = {});
  ~StreamStore();
  StreamStore(const StreamStore&) = delete;
  StreamStore& operator=(const StreamStore&) = delete;

  // Opens the journal at `db_path` and loads every stream.
  static Result<std::unique_ptr<StreamStore>> Open(const std::string& db_path, StreamLimits limits);

  OpResult Create(const CreateArgs& args);
  OpResult Append(const AppendArgs& args);
  OpResult Delete(const std::string& path);
  // `touch`: counts as an access for a sliding TTL (a read does; HEAD does not).
  OpResult Head(const std::string& path, bool touch = false);
  // Messages after `after` (from the start when nullopt), at most max_read_bytes (at least one).
  ReadResult Read(const std::string& path, std::optional<Offset> after);

  // `fn(ok)` once every change made so far is durable (at once without a journal).
  void WhenDurable(std::function<void(bool ok)> fn);

  // `fn` runs (on the journal's thread) after each durable change of the stream at `path`:
  // an append, a close or a deletion. 0 when max_watchers are registered.
  std::uint64_t Watch(const std::string& path, std::function<void()> fn);
  void Unwatch(const std::string& path, std::uint64_t id);

  // Every stream's path (including soft-deleted ones).
  std::vector<std::string> Paths();
  // `hook(path)` after each durable change of any stream, like a watcher. Set before use.
  // Reset it (empty) before the hook's target goes away.
  void SetChangeHook(std::function<void(const std::string&)> hook);

  // Small named records kept beside the streams and journaled with them (the subscriptions):
  // `value` empty deletes `key`. Durable once WhenDurable says so.
  void PutState(const std::string& key, const std::string& value);
  // Every record whose key starts with `prefix`.
  std::map<std::string, std::string> State(const std::string& prefix);

  const StreamLimits& limits() const { return limits_; }

 private:
  Stream* Lookup(const std::string& path, std::int64_t now);
  bool Expired(const Stream& s, std::int64_t now) const;
  void Remove(const std::string& path);
  void Persist(const Stream& s);
  void Changed(const std::string& path);
  void Collect(const Stream& s, std::optional<Offset> after, Offset cap, ReadResult* out,
               std::size_t* bytes) const;
  OpResult Validate(Stream& s, const ProducerArgs& p, std::int64_t now) const;
  Message AppendData(Stream& s, std::string data);
  static StreamInfo Info(const Stream& s);
  std::int64_t Now() const;

  const StreamLimits limits_;
  std::unique_ptr<StreamJournal> journal_;
  Clock clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Stream> streams_;
  std::size_t total_bytes_ = 0;
  std::int64_t next_id_ = 1;
  std::mutex watch_mu_;
  std::unordered_map<std::string, std::map<std::uint64_t, std::function<void()>>> watchers_;
  std::size_t watcher_count_ = 0;
  std::uint64_t next_watch_ = 1;
  std::function<void(const std::string&)> hook_;
  std::map<std::string, std::string> state_;  // guarded by mu_
};

}  // namespace agentstream::streams
