// EventLog: the durable session log, the single source of truth of agentstream.
//
// One append-only log per agent session. Within an epoch of a session, seqs are dense and start
// at 1. A rewind starts a new epoch whose history is a prefix of an older epoch plus new events;
// a fork creates a new session whose history is a prefix of another session's. Neither copies
// events: the prefix is read from where it was first written. Old epochs stay readable.
//
// Durability. An append is *acknowledged* when its callback runs with an OK result (or Append()
// returns OK). With Durability::kFsync (the default) an acknowledged event has been written and
// fsynced, and survives kill -9 of the process and loss of power. With Durability::kOs it has
// been handed to the operating system, and survives kill -9 of the process but not a power loss.
// A commit or sync failure of unknown outcome is sticky: the log fails the writes in flight with
// kIoError and refuses every later write with kUnavailable until it is reopened. Reads keep
// working. The PostgreSQL log first looks the outcome up after reconnecting (postgres_log.h), so
// a lost COMMIT answer ends in an acknowledgement or a retryable kUnavailable; only an outcome it
// still cannot tell fails with kIoError, and it takes writes again once it can.
//
// Thread safety: every method may be called from any thread. Callbacks and commit listeners run on
// an internal thread of the log (listeners of a commit before its callbacks); they must return
// quickly, must not block, and must not call Append() (AppendAsync() is allowed).
//
// Implementations: MemoryEventLog (tests), SqliteEventLog (embedded default), PostgresEventLog
// (several daemons share one database). OpenEventLog() in log_factory.h is the one place that picks
// one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/event_codec.h"
#include "core/ids.h"
#include "core/status.h"
#include "store/consumer_store.h"
#include "store/coordination.h"
#include "store/device_store.h"
#include "store/item_index.h"
#include "store/schedule_store.h"
#include "store/search_index.h"

namespace agentstream {

// What an acknowledged append survives (Durability, at the top of this file); every durable
// backend takes one.
enum class Durability { kFsync, kOs };

// Limits applied by every backend. Each one is checked before anything is written.
struct LogLimits {
  std::size_t max_payload_bytes = 1 << 20;     // one event's payload (1 MiB)
  std::size_t max_batch_events = 4096;         // events in one append
  std::size_t max_batch_bytes = 16 << 20;      // payload bytes in one append (16 MiB)
  std::size_t max_read_items = 10000;          // events one read may return
  std::size_t max_read_bytes = 16 << 20;       // payload bytes one read may return
  std::size_t max_checkpoint_bytes = 8 << 20;  // one session checkpoint's body (8 MiB)
};

// Idempotent producer stamp, as in the Durable Streams protocol and Kafka. Per session, a
// producer's epoch never goes back and its seq counts appends from 0 within an epoch:
// - a lower epoch than the stored one is refused with kFenced;
// - a higher epoch must start at seq 0 (else kInvalidArgument) and replaces the stored state;
// - within the epoch, seq <= the last accepted seq is a duplicate: acknowledged, nothing appended;
//   seq == last + 1 is appended; a larger seq is refused with kSequenceGap.
// The producer's state is committed in the same transaction as the events it appended.
struct ProducerStamp {
  ProducerId id;
  std::uint64_t epoch = 0;
  std::uint64_t seq = 0;
};

struct AppendRequest {
  SessionId session;
  // The epoch the writer believes is current; absent means "the current one". An epoch that a
  // rewind replaced is refused with kFenced.
  std::optional<Epoch> epoch;
  // Optimistic concurrency: the seq of the last event the writer saw. Refused with kConflict
  // when the tail differs.
  std::optional<Seq> expected_tail;
  std::optional<ProducerStamp> producer;
  std::vector<NewEvent> events;  // 1 to LogLimits::max_batch_events, each validated for its kind
  // The ownership generation of the runtime making this append (coordination.h): refused with
  // kFenced unless it is the session's current generation, checked in the transaction that
  // writes the events, which carry it (EventRecord::owner_generation). Absent: an append from
  // outside any runtime (a client's foreign events, a tool).
  std::optional<std::uint64_t> owner_generation;
};

struct AppendResult {
  Epoch epoch;
  Seq first_seq;  // the seqs the events received; for a duplicate, those of the last batch the
  Seq last_seq;   // producer appended
  bool duplicate = false;
};

using AppendCallback = std::function<void(Result<AppendResult>)>;

// Descriptive data about a session; not part of its history.
struct SessionMeta {
  std::string provider;
  std::string cwd;
  // The session's title: the one it was created with, then that of its newest session.titled
  // event, which the log sets in the transaction that appends the event.
  std::string title;
  TimestampMs created_ms = 0;      // set by the log at creation when 0
  std::string persistence_handle;  // opaque provider handle (JSON text) to resume the session
  std::string status_snapshot;     // cached lifecycle status (JSON text); recomputable from the log
  // Every usage event the session appended, in any epoch (a rewind does not take back what was
  // spent), summed by the log in the transaction that appends each; a fork starts at zero (what
  // it inherits was its parent's). nullopt for a session stored before the log kept totals.
  // Set by the log: a caller's value is ignored.
  std::optional<Usage> usage;
};

// The title and usage totals are not here: they follow the session's events (SessionMeta).
struct SessionMetaUpdate {
  std::optional<std::string> persistence_handle;
  std::optional<std::string> status_snapshot;
  // As AppendRequest::owner_generation: a runtime's update is refused with kFenced once its
  // ownership moved on.
  std::optional<std::uint64_t> owner_generation;
};

struct SessionInfo {
  SessionId id;
  SessionMeta meta;
  Epoch epoch;                             // the current epoch
  Seq tail;                                // the last seq of the current epoch (0 when empty)
  std::optional<HistoryBase> forked_from;  // set for a fork: the parent prefix it started from
  OwnerLease owner;                        // who runs it (coordination.h), as of now_ms
};

enum class ReadDirection {
  kForward,   // events with seq >= from, oldest first
  kBackward,  // the newest events with seq < from (from = 0 means "through the tail"), returned
              // oldest first
};

struct ReadRequest {
  SessionId session;
  std::optional<Epoch> epoch;  // absent: the current epoch
  ReadDirection direction = ReadDirection::kForward;
  Seq from;  // see ReadDirection
  std::size_t max_items = 100;
  // Stops before the event that would take the page over this many payload bytes; a page always
  // holds at least one event when one is available, so every read makes progress.
  std::size_t max_bytes = 1 << 20;
};

struct ReadResult {
  std::vector<EventRecord> events;  // addressed in the requested session and epoch
  Epoch epoch;                      // the epoch read
  Seq tail;                         // that epoch's tail when the read ran
  bool has_older = false;           // events exist before the first one returned
  bool has_newer = false;           // events exist after the last one returned
};

// Sent to commit listeners after a commit made events durable.
struct CommitNotice {
  SessionId session;
  Epoch epoch;
  Seq tail;
  // The events the commit added to the session, when the log has them at hand (a commit of this
  // process's own appends): one run of seqs in `epoch` ending at `tail`, as a read would return
  // them. Null otherwise (another daemon's commit, a fork, a rewind, a new session): read the log.
  std::shared_ptr<const std::vector<EventRecord>> records;
  // Another daemon's commit, heard on a shared database: that daemon indexes it (TimelineService).
  bool remote = false;
};
using CommitListener = std::function<void(const CommitNotice&)>;

// Keeps a listener registered (a commit listener here; AgentManager::WatchNotices hands out the
// same for its notice watchers); destroying it, or Reset(), unregisters (never from inside a
// listener).
class ListenerRegistration {
 public:
  ListenerRegistration() = default;
  explicit ListenerRegistration(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  ListenerRegistration(ListenerRegistration&& other) noexcept : cancel_(std::move(other.cancel_)) {
    other.cancel_ = nullptr;
  }
  ListenerRegistration& operator=(ListenerRegistration&& other) noexcept;
  ListenerRegistration(const ListenerRegistration&) = delete;
  ListenerRegistration& operator=(const ListenerRegistration&) = delete;
  ~ListenerRegistration() { Reset(); }
  void Reset();

 private:
  std::function<void()> cancel_;
};

// What a runtime derived from a session's history through (epoch, seq): the turn engine's state,
// as JSON text the log does not read (docs/event-log-format.md, "Checkpoints"). Stored beside the
// history so that loading the session reads only the events after `seq`.
struct Checkpoint {
  Epoch epoch;
  Seq seq;
  std::string body;
};

// Counters since the log was opened, for metrics and benchmarks.
struct LogStats {
  std::uint64_t commits = 0;        // transactions committed
  std::uint64_t appends = 0;        // append requests acknowledged (duplicates included)
  std::uint64_t events = 0;         // events made durable
  std::uint64_t commit_micros = 0;  // time spent writing and committing batches, of which
  std::uint64_t sync_micros = 0;    //   the final COMMIT (write-ahead log write and sync)
};

class EventLog {
 public:
  virtual ~EventLog() = default;

  // ---- Sessions ----
  // Creates a session at epoch 1 and appends `initial` atomically with it. kAlreadyExists.
  virtual Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                             std::vector<NewEvent> initial) = 0;
  // Creates `child` whose history is `parent`'s prefix through `at` (validated: the epoch exists
  // and at.seq <= its tail), then appends `initial` to it, atomically. Nothing is copied.
  virtual Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                                    SessionMeta meta, std::vector<NewEvent> initial) = 0;
  // Starts a new epoch of `session` whose history is the prefix through `to` (any existing epoch
  // of this session), then appends `initial` to it, atomically. The old epochs stay readable.
  virtual Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                                      std::vector<NewEvent> initial) = 0;
  virtual Result<SessionInfo> GetSession(const SessionId& id) = 0;
  // Sessions ordered by id, after `after` (exclusive), at most `limit`.
  virtual Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                        std::size_t limit) = 0;
  virtual Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) = 0;

  // ---- Appends ----
  // Queues an append; `done` runs once, after the batch is durable or has failed. Blocks while
  // the log's bounded queue is full (back-pressure). Errors as documented on AppendRequest and
  // ProducerStamp, plus kNotFound for an unknown session, kTooLarge / kInvalidArgument for
  // events that break LogLimits or their kind's schema, kIoError / kUnavailable as above.
  virtual void AppendAsync(AppendRequest request, AppendCallback done) = 0;
  // AppendAsync, waiting for the result.
  Result<AppendResult> Append(AppendRequest request);

  // ---- Reads ----
  // Reads committed events. Checks every stored record on the way out: kUnsupportedVersion for
  // a newer format, kCorruption for bytes that fail their checksum. kNotFound for an unknown
  // session or epoch.
  virtual Result<ReadResult> Read(const ReadRequest& request) = 0;
  // The current epoch and last seq of a session.
  virtual Result<Cursor> Tail(const SessionId& session) = 0;
  // Registers `listener` for every commit of any session.
  virtual ListenerRegistration SubscribeCommits(CommitListener listener) = 0;

  // ---- Checkpoints ----
  // One per session; SaveCheckpoint replaces it. A checkpoint is recomputable from the history,
  // which no write within an epoch changes, so any daemon's is correct and no owner generation
  // fences it. Errors: kNotFound (no session), kConflict (`epoch` is not the current one: the
  // session was rewound), kInvalidArgument (`seq` past the epoch's tail), kTooLarge (body over
  // LogLimits::max_checkpoint_bytes). LoadCheckpoint returns nullopt when none was saved.
  // The defaults keep none: saving is refused with kUnavailable and loading finds nothing, for
  // decorators and logs that keep no checkpoints.
  virtual Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint);
  virtual Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session);

  // ---- Consumers ----
  // The durable consumers' definitions and positions kept in the same store (consumer_store.h).
  // Lives as long as the log.
  virtual ConsumerStore& consumers() = 0;

  // ---- Coordination ----
  // The ownership leases, daemon registry and shared secrets kept in the same store
  // (coordination.h). Lives as long as the log.
  virtual Coordination& coordination() = 0;

  // ---- Devices ----
  // The paired devices, pairing codes, notification settings and presence kept in the same store
  // (device_store.h). Lives as long as the log.
  virtual DeviceStore& devices() = 0;

  // ---- Schedules ----
  // The schedules, their progress, leases and newest firings kept in the same store
  // (schedule_store.h). Lives as long as the log.
  virtual ScheduleStore& schedules() = 0;

  // ---- Timeline index ----
  // The durable rows of the timeline's projection index in the same store (item_index.h), or
  // null for a log that keeps none (the timeline then builds its index in memory). Lives as
  // long as the log.
  virtual ItemIndexStore* item_index() { return nullptr; }

  // ---- Search index ----
  // The full-text index of the sessions' text in the same store (search_index.h), or null for a
  // log that keeps none (search then answers kUnavailable). Lives as long as the log.
  virtual SearchIndexStore* search_index() { return nullptr; }

  // OK while the log accepts writes; the sticky error after a failure of unknown outcome.
  virtual Status Health() = 0;
  virtual LogStats Stats() = 0;
};

}  // namespace agentstream
