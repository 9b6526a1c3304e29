// Internal to the store module: makes committed write-ahead-log frames durable off the writer
// thread, so that the next commit is written while the previous one is being synced.
//
// The writer commits with SQLite's `synchronous=OFF` (frames reach the OS, unsynced) and submits
// a completion. The syncer thread takes every completion waiting, runs one fdatasync of the WAL
// file (through the log's VFS when one is named), and then runs the completions in submission order
// with the sync's status. A failed sync is sticky: every later completion gets the same error.
// Thread-safe.
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

struct sqlite3_file;

namespace agentstream::sqlite {

class WalSyncer {
 public:
  using Completion = std::function<void(const Status&)>;

  // `db_path`: the database; its WAL file ("<db_path>-wal") is opened on first use. `vfs`: the
  // SQLite VFS the log's connections use; empty: the default one, and the syncer fdatasyncs the
  // file itself; else the syncer opens the file through that VFS and syncs it with the VFS's xSync,
  // so that the VFS sees every sync of the log. At most `max_pending` completions wait; Submit()
  // blocks beyond that. When fewer appends wait than the last sync covered, the syncer waits up to
  // `linger` for the writers it just acknowledged to come back, so that one sync covers them all.
  WalSyncer(const std::string& db_path, std::string vfs, std::size_t max_pending,
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
  Status OpenThroughVfs();
  Status SyncThroughVfs();

  const std::string db_path_, wal_path_;
  const std::string vfs_;
  const std::size_t max_pending_;
  const std::chrono::microseconds linger_;
  mutable std::mutex mu_;  // guards all below but fd_, vfs_name_, file_ (syncer thread only)
  std::condition_variable work_cv_, space_cv_, drained_cv_;
  std::deque<Completion> pending_;
  std::uint64_t submitted_ = 0, completed_ = 0, sync_micros_ = 0;
  std::size_t pending_appends_ = 0;   // appends of commits that need a sync
  std::size_t pending_unsynced_ = 0;  // commits that need a sync
  bool syncing_ = false;
  bool stopping_ = false;
  Status failed_;
  int fd_ = -1;
  // The WAL opened through vfs_, when one is named, and the name it was opened under.
  const char* vfs_name_ = nullptr;
  sqlite3_file* file_ = nullptr;
  std::thread thread_;
};

}  // namespace agentstream::sqlite
