#include "store/sqlite/checkpointer.h"

namespace agentstream::sqlite {

Result<std::unique_ptr<Checkpointer>> Checkpointer::Start(const std::string& path,
                                                          const std::string& vfs) {
  AS_ASSIGN_OR_RETURN(Db db, Db::Open(path, {.vfs = vfs}));
  AS_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous=FULL"));
  return std::unique_ptr<Checkpointer>(new Checkpointer(std::move(db)));
}

Checkpointer::Checkpointer(Db db) : db_(std::move(db)), thread_([this] { Loop(); }) {}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Checkpointer::Poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  cv_.notify_one();
}

Status Checkpointer::RunNow() {
  std::lock_guard lock(db_mu_);
  return CheckpointLocked();
}

Status Checkpointer::CheckpointLocked() {
  int log_frames = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db_.raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                           &log_frames, &copied);
  ++checkpoints_;
  return FromSqlite(rc, db_.raw(), "checkpoint");
}

void Checkpointer::Loop() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return poked_ || stopping_; });
      if (stopping_) return;
      poked_ = false;
    }
    std::lock_guard lock(db_mu_);
    // A failed checkpoint loses nothing (the WAL keeps the frames); the next poke retries.
    (void)CheckpointLocked();
  }
}

}  // namespace agentstream::sqlite
