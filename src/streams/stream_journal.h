// The durable side of the generic stream store: one SQLite database (WAL, synchronous=FULL,
// opened exclusively) and a writer thread with group commit. Writes are queued in order; every
// AfterCommit callback runs once all writes queued before it are committed and fsynced, so many
// concurrent appends share one fsync. A failed commit is sticky: every later callback reports
// false.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "streams/stream_model.h"

namespace agentstream::streams {

class StreamJournal {
 public:
  // Opens (creating) the database at `path` (":memory:" for a test). `max_pending` bounds the
  // queued writes; Submit-side callers check Full() first.
  static Result<std::unique_ptr<StreamJournal>> Open(const std::string& path,
                                                     std::size_t max_pending);
  ~StreamJournal();
  StreamJournal(const StreamJournal&) = delete;
  StreamJournal& operator=(const StreamJournal&) = delete;

  // Every stored stream with its messages (ref counts and tails are the caller's to derive).
  // Load and LoadState read on the caller's thread: call them before FinishedLoading and before
  // any write, while the writer thread leaves the connection alone.
  Result<std::vector<Stream>> Load();

  void PutMeta(const StreamMeta& meta);
  void PutMessage(std::int64_t stream_id, const Message& message);
  void DeleteStream(std::int64_t stream_id);
  // Small named records beside the streams (subscriptions): `value` empty deletes `key`.
  void PutState(const std::string& key, const std::string& value);
  Result<std::map<std::string, std::string>> LoadState();
  // Lets the writer thread start its background work (resuming an interrupted purge). The first
  // write does too.
  void FinishedLoading();
  // `fn(ok)` runs on the writer thread after the commit that covers every earlier write.
  void AfterCommit(std::function<void(bool ok)> fn);
  // True when the queue is at its bound (the caller answers 503 instead of writing).
  bool Full() const;
  // True after a failed commit.
  bool failed() const;
  // New streams take ids from here up: ids of deleted streams whose messages are still being
  // purged are not reused.
  std::int64_t min_next_id() const { return min_next_id_; }
  // True while messages of deleted streams remain to be purged.
  bool purging() const { return purging_; }

 private:
  struct Op {
    enum Kind { kMeta, kMessage, kDelete, kState, kCallback } kind;
    std::int64_t id = 0;
    std::string text;  // meta JSON, the message offset, or the state key
    std::shared_ptr<const std::string> data;
    std::function<void(bool)> done;
  };
  // The SQLite connection and the writer's statements (stream_journal.cc).
  struct Connection;
  StreamJournal(std::unique_ptr<Connection> connection, std::size_t max_pending);
  void Push(Op op);
  void Run();
  // One transaction over `batch`; false when it failed (rolled back).
  bool Commit(const std::vector<Op>& batch);
  bool Apply(const Op& op);
  // Deletes the messages of deleted streams in one window of rows; false on a storage error.
  bool PurgeStep();

  // Used by the caller's thread while it loads, then only by the writer thread.
  const std::unique_ptr<Connection> connection_;
  const std::size_t max_pending_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Op> queue_;
  bool stop_ = false;
  bool loaded_ = false;  // the caller's reads are over: the writer may use the connection
  bool failed_ = false;
  std::int64_t min_next_id_ = 1;
  // Purging, on the writer thread only: the pass under way (its stream ids, the next window's
  // start and the last seq to examine), and the deletions committed since it began.
  std::vector<std::int64_t> purge_ids_;
  std::int64_t purge_cursor_ = 0;
  std::int64_t purge_end_ = 0;
  std::vector<std::int64_t> purge_next_;
  std::atomic<bool> purging_ = false;
  std::thread writer_;
};

// Meta <-> JSON text, for the journal and tests.
std::string EncodeMeta(const StreamMeta& meta);
Result<StreamMeta> DecodeMeta(const std::string& text);

}  // namespace agentstream::streams
