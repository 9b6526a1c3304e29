// Internal to the store module: copies the write-ahead log back into the database file on its
// own thread and connection, so that the writer never stalls on a checkpoint.
//
// Its connection runs with `synchronous=FULL`: a checkpoint syncs the WAL, copies the frames,
// and syncs the database file before SQLite may reuse the WAL. The writer's own connection never
// checkpoints (it commits with `synchronous=OFF`; see WalSyncer). Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "sqlite/db.h"

namespace agentstream::sqlite {

class Checkpointer {
 public:
  // Opens its own connection to `path` through `vfs`.
  static Result<std::unique_ptr<Checkpointer>> Start(const std::string& path,
                                                     const std::string& vfs);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Asks for a passive checkpoint (returns at once).
  void Poke();
  // Runs a passive checkpoint now and waits for it.
  Status RunNow();
  std::uint64_t checkpoints() const { return checkpoints_.load(); }

 private:
  explicit Checkpointer(Db db);
  void Loop();
  Status CheckpointLocked();

  std::mutex db_mu_;  // guards db_ (one checkpoint at a time)
  Db db_;
  std::mutex mu_;  // guards poked_, stopping_
  std::condition_variable cv_;
  bool poked_ = false;
  bool stopping_ = false;
  std::atomic<std::uint64_t> checkpoints_{0};
  std::thread thread_;
};

}  // namespace agentstream::sqlite
