#include "store/sqlite/wal_syncer.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace agentstream::sqlite {

WalSyncer::WalSyncer(const std::string& db_path, std::string vfs, std::size_t max_pending,
                     std::chrono::microseconds linger)
    : db_path_(db_path),
      wal_path_(db_path + "-wal"),
      vfs_(std::move(vfs)),
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
  if (file_ != nullptr) {
    file_->pMethods->xClose(file_);
    sqlite3_free(file_);
  }
  sqlite3_free_filename(vfs_name_);
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
  if (!vfs_.empty()) return SyncThroughVfs();
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

// Opens the WAL through vfs_ as SQLite itself would: by the VFS's full pathname, inside a
// filename object that lives as long as the open file.
Status WalSyncer::OpenThroughVfs() {
  sqlite3_vfs* vfs = sqlite3_vfs_find(vfs_.c_str());
  if (vfs == nullptr) return Error(ErrorCode::kIoError, "no SQLite VFS named " + vfs_);
  if (vfs_name_ == nullptr) {
    std::string full(static_cast<std::size_t>(vfs->mxPathname) + 1, '\0');
    const int rc = vfs->xFullPathname(vfs, db_path_.c_str(), vfs->mxPathname + 1, full.data());
    if (rc != SQLITE_OK) {
      return Error(ErrorCode::kIoError, "full pathname of " + db_path_ + ": " + sqlite3_errstr(rc));
    }
    full.resize(std::strlen(full.c_str()));
    vfs_name_ = sqlite3_create_filename(full.c_str(), (full + "-journal").c_str(),
                                        (full + "-wal").c_str(), 0, nullptr);
    if (vfs_name_ == nullptr) return Error(ErrorCode::kIoError, "out of memory");
  }
  auto* file = static_cast<sqlite3_file*>(sqlite3_malloc(vfs->szOsFile));
  if (file == nullptr) return Error(ErrorCode::kIoError, "out of memory");
  std::memset(file, 0, static_cast<std::size_t>(vfs->szOsFile));
  int out_flags = 0;
  const int rc = vfs->xOpen(vfs, sqlite3_filename_wal(vfs_name_), file,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_WAL, &out_flags);
  if (rc != SQLITE_OK) {
    if (file->pMethods != nullptr) file->pMethods->xClose(file);  // as SQLite does
    sqlite3_free(file);
    return Error(ErrorCode::kIoError, "open " + wal_path_ + " through the SQLite VFS " + vfs_ +
                                          ": " + sqlite3_errstr(rc));
  }
  file_ = file;
  return Status::Ok();
}

Status WalSyncer::SyncThroughVfs() {
  if (file_ == nullptr) AS_RETURN_IF_ERROR(OpenThroughVfs());
  const int rc = file_->pMethods->xSync(file_, SQLITE_SYNC_NORMAL | SQLITE_SYNC_DATAONLY);
  if (rc != SQLITE_OK) {
    return Error(ErrorCode::kIoError, "sync " + wal_path_ + " through the SQLite VFS " + vfs_ +
                                          ": " + sqlite3_errstr(rc));
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
