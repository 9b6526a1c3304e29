// Internal to the store module: makes committed write-ahead-log frames durable off the writer
// thread, so that the next commit is written while the previous one is being synced.
//
// The writer commits with SQLite's `synchronous=OFF` (frames reach the OS, unsynced) and submits
// a completion. The syncer thread takes every completion waiting, runs one fdatasync of the WAL
// file, and then runs the completions in submission order with the sync's status. A failed sync
// is sticky: every later completion gets the same error. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace agentstream::sqlite {

class WalSyncer {
 public:
  using Completion = std::function<void(const Status&)>;

  // `wal_path`: the WAL file ("<db>-wal"), opened on first use. `inject_faults`: fail syncs while
  // SetFailSyncs(true) is in force (the fault VFS's switch). At most `max_pending` completions
  // wait; Submit() blocks beyond that. When fewer appends wait than the last sync covered, the
  // syncer waits up to `linger` for the writers it just acknowledged to come back, so that one
  // sync covers them all.
  WalSyncer(std::string wal_path, bool inject_faults, std::size_t max_pending,
            std::chrono::microseconds linger);
  // Completes everything submitted, then stops the thread.
  ~WalSyncer();
  WalSyncer(const WalSyncer&) = delete;
  WalSyncer& operator=(const WalSyncer&) = delete;

  // Queues `done`, a commit of `appends` appends, to run after a sync that starts after this call
  // (`needs_sync`), or, for a commit that was synced inside COMMIT, in its turn without one.
  void Submit(Completion done, std::size_t appends, bool needs_sync);
  // No completion waits and no sync runs.
  bool Idle() const;
  // Returns once every completion submitted before the call has run.
  void Drain();
  // Microseconds spent in fdatasync so far.
  std::uint64_t sync_micros() const;

 private:
  void Loop();
  Status SyncOnce();

  const std::string wal_path_;
  const bool inject_faults_;
  const std::size_t max_pending_;
  const std::chrono::microseconds linger_;
  mutable std::mutex mu_;  // guards everything below except fd_ (syncer thread only)
  std::condition_variable work_cv_, space_cv_, drained_cv_;
  std::deque<Completion> pending_;
  std::uint64_t submitted_ = 0, completed_ = 0, sync_micros_ = 0;
  std::size_t pending_appends_ = 0;   // appends of commits that need a sync
  std::size_t pending_unsynced_ = 0;  // commits that need a sync
  bool syncing_ = false;
  bool stopping_ = false;
  Status failed_;
  int fd_ = -1;
  std::thread thread_;
};

}  // namespace agentstream::sqlite
