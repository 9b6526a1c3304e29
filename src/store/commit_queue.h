// Internal to the store module: the request queue and writer thread of a group-committing
// backend (SQLite, PostgreSQL). Callers queue appends and other writes; one writer thread takes
// every request queued since its last commit (up to a bound, after an optional linger) and hands
// them to the backend's batch function, which commits them together and completes each one. The
// queue also keeps the backend's sticky failure (a commit of unknown outcome: every later write
// is refused until the log is reopened) and its statistics.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "store/event_log.h"

namespace agentstream::store_internal {

// `Context` is what a write sees on the writer thread (the backend's transaction state).
template <class Context>
class CommitQueue {
 public:
  // A queued append and where its outcome goes.
  struct Append {
    AppendRequest request;
    AppendCallback done;
  };
  // Any other write: runs inside the batch transaction on the writer thread and returns its own
  // outcome; a storage failure it meets fails the whole batch (the backend's business).
  struct Control {
    std::function<Status(Context&)> run;
    std::function<void(Status)> done;
  };
  using Op = std::variant<Append, Control>;

  struct Options {
    std::size_t max_queued = 16384;  // Enqueue blocks while this many wait
    std::size_t max_batch = 4096;    // requests handed to one batch
    // When fewer requests wait than the last batch took, wait up to this long for the writers it
    // just acknowledged to come back, so that they share one commit (0: never wait).
    std::chrono::microseconds linger{0};
    // The queues whose writer threads count as one for OnWriterThread: a store with several
    // queues (PostgreSQL's writer connections) names itself, so that none of its writer threads
    // waits for another. Null: this queue alone.
    const void* family = nullptr;
  };

  explicit CommitQueue(Options options) : options_(options) {}
  ~CommitQueue() { Stop(); }
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Starts the writer thread, which calls `run_batch` with each batch (never empty).
  void Start(std::function<void(std::vector<Op>&)> run_batch) {
    run_batch_ = std::move(run_batch);
    writer_ = std::thread([this] { Loop(); });
  }

  // Refuses new requests, lets the writer finish the queued ones, and joins it.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    space_cv_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

  // Whether the calling thread is the writer thread of this queue or of its family.
  bool OnWriterThread() const { return writing_for == family(); }

  // Queues `op`, blocking while the queue is full (the writer thread is refused instead). An op
  // that cannot be queued is completed here with the reason.
  void Enqueue(Op op) {
    std::unique_lock lock(mu_);
    if (!OnWriterThread()) {
      space_cv_.wait(lock,
                     [&] { return queue_.size() < options_.max_queued || !WritableLocked().ok(); });
    }
    Status status = WritableLocked();
    if (status.ok() && queue_.size() >= options_.max_queued)
      status = Error(ErrorCode::kResourceExhausted, "the append queue is full");
    if (!status.ok()) {
      lock.unlock();
      return Complete(op, status);
    }
    queue_.push_back(std::move(op));
    lock.unlock();
    work_cv_.notify_one();
  }

  // Runs `body(context, out)` on the writer thread inside a batch and waits for its commit.
  template <class T, class Body>
  Result<T> RunControl(Body body) {
    if (OnWriterThread())
      return Error(ErrorCode::kInternal, "a log callback may not wait for the log");
    std::promise<Status> promise;
    auto future = promise.get_future();
    T out{};
    // A batch the store aborted runs again (postgres_log.cc): each run starts from a fresh `out`.
    Enqueue(Control{[&](Context& context) {
                      out = T{};
                      return body(context, out);
                    },
                    [&promise](Status s) { promise.set_value(std::move(s)); }});
    Status status = future.get();
    if (!status.ok()) return status;
    return out;
  }

  static void Complete(Op& op, const Status& status) {
    if (auto* a = std::get_if<Append>(&op))
      a->done(status);
    else
      std::get<Control>(op).done(status);
  }

  // Completes every op of a committed batch: an append with its result when its outcome is OK.
  static void Acknowledge(std::vector<Op>& ops, const std::vector<Status>& outcomes,
                          const std::vector<AppendResult>& results) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (auto* a = std::get_if<Append>(&ops[i])) {
        if (outcomes[i].ok())
          a->done(results[i]);
        else
          a->done(outcomes[i]);
      } else {
        std::get<Control>(ops[i]).done(outcomes[i]);
      }
    }
  }

  // The events each session gained from the appends of a committed batch, built from the requests
  // instead of read back: per session id, in seq order, stamped `time` (the commit's). The payloads
  // are moved out of the requests; call it just before Acknowledge, which needs only the results.
  // A session whose appended events are not one run of seqs (something else wrote between them)
  // gets none.
  static std::map<std::string, std::shared_ptr<std::vector<EventRecord>>> TakeRecords(
      std::vector<Op>& ops, const std::vector<Status>& outcomes,
      const std::vector<AppendResult>& results, TimestampMs time) {
    std::map<std::string, std::shared_ptr<std::vector<EventRecord>>> out;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      auto* a = std::get_if<Append>(&ops[i]);
      if (a == nullptr || !outcomes[i].ok() || results[i].duplicate) continue;
      auto& records = out[a->request.session.str()];
      if (!records) records = std::make_shared<std::vector<EventRecord>>();
      Seq seq = results[i].first_seq;
      for (NewEvent& event : a->request.events) {
        records->push_back(EventRecord{
            .session = a->request.session,
            .epoch = results[i].epoch,
            .seq = seq,
            .time = time,
            .kind = static_cast<std::uint16_t>(event.kind),
            .turn = std::move(event.turn),
            .payload = std::move(event.payload),
            .owner_generation = a->request.owner_generation.value_or(0),
        });
        seq = seq.next();
      }
    }
    for (auto& [session, records] : out) {
      for (std::size_t i = 1; records && i < records->size(); ++i) {
        const EventRecord& before = (*records)[i - 1];
        if ((*records)[i].epoch != before.epoch || (*records)[i].seq != before.seq.next())
          records.reset();
      }
    }
    return out;
  }

  // The records of TakeRecords for a session whose commit ended at (epoch, tail), when they end
  // there; null otherwise.
  static std::shared_ptr<const std::vector<EventRecord>> RecordsEndingAt(
      const std::map<std::string, std::shared_ptr<std::vector<EventRecord>>>& taken,
      const std::string& session, Epoch epoch, Seq tail) {
    auto it = taken.find(session);
    if (it == taken.end() || !it->second || it->second->empty()) return nullptr;
    const EventRecord& last = it->second->back();
    if (last.epoch != epoch || last.seq != tail) return nullptr;
    return it->second;
  }

  // How many requests wait for the writer (not those of the batch it is committing).
  std::size_t queued() const {
    std::lock_guard lock(mu_);
    return queue_.size();
  }

  // OK while writes are taken: kUnavailable after a sticky failure or once stopping.
  Status Writable() const {
    std::lock_guard lock(mu_);
    return WritableLocked();
  }

  // The commit of unknown outcome that made the log refuse writes; OK while none.
  Status sticky() const {
    std::lock_guard lock(mu_);
    return sticky_;
  }

  // Records a commit of unknown outcome: from now on every write is refused.
  void FailSticky(const Status& failed) {
    {
      std::lock_guard lock(mu_);
      if (sticky_.ok()) sticky_ = failed;
    }
    space_cv_.notify_all();
  }

  // Counts a commit and the time it took, then the appends of a batch as they are acknowledged.
  void CountCommit(std::chrono::steady_clock::duration took) {
    std::lock_guard lock(mu_);
    ++stats_.commits;
    stats_.commit_micros += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  }
  void CountAcknowledged(const std::vector<Op>& ops, const std::vector<Status>& outcomes,
                         const std::vector<AppendResult>& results) {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!outcomes[i].ok() || !std::holds_alternative<Append>(ops[i])) continue;
      ++stats_.appends;
      if (!results[i].duplicate)
        stats_.events += results[i].last_seq.value() - results[i].first_seq.value() + 1;
    }
  }
  LogStats stats() const {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  Status WritableLocked() const {
    if (!sticky_.ok())
      return Error(ErrorCode::kUnavailable,
                   "the log refuses writes until reopened, after: " + sticky_.ToString());
    if (stopping_) return Error(ErrorCode::kUnavailable, "the log is closing");
    return Status::Ok();
  }

  const void* family() const { return options_.family != nullptr ? options_.family : this; }

  void Loop() {
    writing_for = family();
    std::vector<Op> batch;
    std::size_t last_batch = 0;
    while (true) {
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty() && stopping_) return;
        // The writers acknowledged by the last commit usually come straight back: give them a
        // moment to join this commit rather than leaving them for the next one.
        if (last_batch > 1 && queue_.size() < last_batch && options_.linger.count() > 0) {
          work_cv_.wait_for(lock, options_.linger,
                            [&] { return queue_.size() >= last_batch || stopping_; });
        }
        const std::size_t n = std::min(queue_.size(), options_.max_batch);
        batch.clear();
        for (std::size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      space_cv_.notify_all();
      last_batch = batch.size();
      run_batch_(batch);
    }
  }

  const Options options_;
  std::function<void(std::vector<Op>&)> run_batch_;
  mutable std::mutex mu_;             // guards queue_, stopping_, sticky_, stats_
  std::condition_variable work_cv_;   // the writer waits for work
  std::condition_variable space_cv_;  // producers wait for queue space
  std::deque<Op> queue_;
  bool stopping_ = false;
  Status sticky_;
  LogStats stats_;
  std::thread writer_;
  // The family() of the queue whose writer thread this is; null on every other thread.
  static inline thread_local const void* writing_for = nullptr;
};

}  // namespace agentstream::store_internal
