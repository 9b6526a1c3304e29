#include "store/sqlite/wal_syncer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "store/sqlite/fault_vfs.h"

namespace agentstream::sqlite {

WalSyncer::WalSyncer(std::string wal_path, bool inject_faults, std::size_t max_pending,
                     std::chrono::microseconds linger)
    : wal_path_(std::move(wal_path)),
      inject_faults_(inject_faults),
      max_pending_(max_pending),
      linger_(linger),
      thread_([this] { Loop(); }) {}

WalSyncer::~WalSyncer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
  if (fd_ >= 0) close(fd_);
}

void WalSyncer::Submit(Completion done, std::size_t appends, bool needs_sync) {
  {
    std::unique_lock lock(mu_);
    space_cv_.wait(lock, [&] { return pending_.size() < max_pending_; });
    pending_.push_back(std::move(done));
    if (needs_sync) {
      pending_appends_ += appends;
      ++pending_unsynced_;
    }
    ++submitted_;
  }
  work_cv_.notify_one();
}

void WalSyncer::Drain() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = submitted_;
  drained_cv_.wait(lock, [&] { return completed_ >= target; });
}

bool WalSyncer::Idle() const {
  std::lock_guard lock(mu_);
  return pending_.empty() && !syncing_;
}

std::uint64_t WalSyncer::sync_micros() const {
  std::lock_guard lock(mu_);
  return sync_micros_;
}

Status WalSyncer::SyncOnce() {
  if (inject_faults_ && SyncsFailing()) return Error(ErrorCode::kIoError, "injected sync failure");
  if (fd_ < 0) {
    // Any descriptor of the file flushes its dirty pages; the WAL lives as long as the writer's
    // connection, which outlives this syncer.
    fd_ = open(wal_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return Error(ErrorCode::kIoError, "open " + wal_path_ + ": " + std::strerror(errno));
    }
  }
  if (fdatasync(fd_) != 0) {
    return Error(ErrorCode::kIoError, "fdatasync " + wal_path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

void WalSyncer::Loop() {
  std::vector<Completion> batch;
  std::size_t last_appends = 0;
  while (true) {
    Status failed;
    bool needs_sync = false;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      if (pending_.empty()) return;  // stopping, and everything completed
      if (pending_unsynced_ > 0 && last_appends > 1 && pending_appends_ < last_appends &&
          linger_.count() > 0) {
        work_cv_.wait_for(lock, linger_,
                          [&] { return pending_appends_ >= last_appends || stopping_; });
      }
      last_appends = pending_appends_;
      pending_appends_ = 0;
      needs_sync = pending_unsynced_ > 0;
      pending_unsynced_ = 0;
      syncing_ = true;
      batch.assign(std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.end()));
      pending_.clear();
      failed = failed_;
    }
    space_cv_.notify_all();
    Status status = failed;
    if (status.ok() && needs_sync) {
      const auto start = std::chrono::steady_clock::now();
      status = SyncOnce();
      const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
      std::lock_guard lock(mu_);
      sync_micros_ += micros;
      if (!status.ok()) failed_ = status;
    }
    for (Completion& done : batch) done(status);
    {
      std::lock_guard lock(mu_);
      completed_ += batch.size();
      syncing_ = false;
    }
    drained_cv_.notify_all();
    batch.clear();
  }
}

}  // namespace agentstream::sqlite
