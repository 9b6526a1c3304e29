#include "store/sqlite/sqlite_backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "sqlite/db.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream {

namespace {

namespace fs = std::filesystem;
using sqlite::Db;
using sqlite::OpenOptions;

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// A file being written beside its target, with SQLite's journal beside it; removed on
// destruction unless Keep() was called after it was renamed into place.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) { Remove(); }
  ~TempFile() {
    if (!kept_) Remove();
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void Keep() { kept_ = true; }

 private:
  void Remove() const {
    std::error_code ignored;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(path_ + suffix, ignored);
  }
  std::string path_;
  bool kept_ = false;
};

// Renames `from` over `to` and syncs their directory, so that the new entry survives a crash.
Status RenameDurably(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return Error(ErrorCode::kIoError,
                 "cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  }
  std::string dir = fs::path(to).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!synced) return Error(ErrorCode::kIoError, "cannot sync the directory " + dir);
  return Status::Ok();
}

Result<std::string> QueryText(Db& db, std::string_view sql) {
  AS_ASSIGN_OR_RETURN(sqlite::Stmt stmt, db.Prepare(sql));
  AS_ASSIGN_OR_RETURN(const bool row, stmt.Step());
  return row ? stmt.Text(0) : std::string();
}

// The number of sessions of a store (0 when it has no schema yet).
Result<std::int64_t> CountSessions(Db& db) {
  AS_ASSIGN_OR_RETURN(const std::int64_t tables,
                      db.QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'sessions'"));
  if (tables == 0) return 0;
  return db.QueryInt("SELECT count(*) FROM sessions");
}

// Copies the main database of `source` into `dest` with the online backup API, `pages` pages
// per step (-1: all in one). A read transaction open on `source` is used by every step.
// `progress`, when set, is told after each step that left pages to copy.
Status CopyPages(Db& source, Db& dest, int pages, std::int64_t* steps,
                 const std::function<void(std::int64_t, std::int64_t)>& progress = {}) {
  sqlite3_backup* backup = sqlite3_backup_init(dest.raw(), "main", source.raw(), "main");
  if (backup == nullptr)
    return sqlite::FromSqlite(sqlite3_errcode(dest.raw()), dest.raw(), "backup");
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    rc = sqlite3_backup_step(backup, pages);
    ++*steps;
    if (rc == SQLITE_OK) {
      if (progress) progress(sqlite3_backup_remaining(backup), sqlite3_backup_pagecount(backup));
      std::this_thread::yield();
    }
    // Busy: another connection holds a lock the step needs (not the daemon: its writes do not
    // lock readers out in WAL mode). Wait a moment and step again.
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int finished = sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) return sqlite::FromSqlite(rc, dest.raw(), "backup step");
  return sqlite::FromSqlite(finished, dest.raw(), "backup");
}

// A backup copies the source's header, WAL mode included; a single file is easier to keep.
Status MakeSelfContained(Db& db) {
  AS_ASSIGN_OR_RETURN(const std::string mode, QueryText(db, "PRAGMA journal_mode=DELETE"));
  if (mode != "delete") return Error(ErrorCode::kIoError, "cannot leave WAL mode: " + mode);
  return Status::Ok();
}

// The destination of a restore, held with an exclusive lock until it is replaced.
struct LockedDestination {
  Db db;
  std::int64_t sessions = 0;
};

Result<LockedDestination> LockDestination(const std::string& path) {
  OpenOptions open;
  open.uri = false;
  open.busy_timeout_ms = 0;  // in use now is in use: no waiting
  AS_ASSIGN_OR_RETURN(Db db, Db::Open(path, open));
  const auto refuse = [&](const Status& status) -> Status {
    if (db.Busy()) {
      return Error(ErrorCode::kUnavailable,
                   path +
                       " is in use by another process (a daemon, or a command reading it): "
                       "stop it before restoring");
    }
    if (status.code() == ErrorCode::kCorruption) {
      return Error(ErrorCode::kCorruption,
                   path + " is not a SQLite database; move it away to restore there");
    }
    return status;
  };
  // In exclusive locking mode the first transaction takes an exclusive lock on the file and
  // keeps it: it fails at once while any other connection has the WAL database open.
  if (Status s = db.Exec("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE"); !s.ok())
    return refuse(s);
  auto sessions = CountSessions(db);
  if (!sessions.ok()) return refuse(sessions.status());
  if (Status s = db.Exec("COMMIT"); !s.ok()) return refuse(s);
  return LockedDestination{std::move(db), *sessions};
}

// Checks the copy about to be installed: intact, an agentstream store, not newer than this
// build. `name` names the backup in the messages.
Result<std::int64_t> Verify(Db& db, const std::string& name) {
  AS_ASSIGN_OR_RETURN(const std::int64_t version, db.QueryInt("PRAGMA user_version"));
  if (version > kSqliteSchemaVersion) {
    return Error(ErrorCode::kUnsupportedVersion,
                 name + " has schema version " + std::to_string(version) +
                     ", newer than this build reads (" + std::to_string(kSqliteSchemaVersion) +
                     "): restore it with a newer agentstream");
  }
  auto integrity = QueryText(db, "PRAGMA integrity_check(20)");
  if (!integrity.ok() || *integrity != "ok") {
    return Error(ErrorCode::kCorruption,
                 name + " fails the integrity check: " +
                     (integrity.ok() ? *integrity : integrity.status().message()));
  }
  if (version == 0)
    return Error(ErrorCode::kInvalidArgument, name + " is not an agentstream store");
  return version;
}

// Errors reading the backup say which file was at fault.
Status AboutBackup(const Status& status, const std::string& path) {
  if (status.code() == ErrorCode::kCorruption)
    return Error(ErrorCode::kCorruption, path + " is not an intact SQLite database");
  if (status.code() == ErrorCode::kUnavailable)
    return Error(ErrorCode::kUnavailable, "cannot read " + path + ": " + status.message());
  return status;
}

// Copies the backup to `temp` (closed when it returns, synced by its commit) and checks the copy,
// filling in what `report` says of it.
Status CopyAndVerify(Db& backup, const std::string& backup_path, const std::string& temp,
                     SqliteRestoreReport& report) {
  OpenOptions write;
  write.create = true;
  write.uri = false;
  AS_ASSIGN_OR_RETURN(Db copy, Db::Open(temp, write));
  std::int64_t steps = 0;
  if (Status s = CopyPages(backup, copy, -1, &steps); !s.ok()) {
    if (s.code() == ErrorCode::kCorruption) return AboutBackup(s, backup_path);
    return Error(s.code(), "cannot write " + temp + ": " + s.message());
  }
  AS_RETURN_IF_ERROR(MakeSelfContained(copy));
  AS_ASSIGN_OR_RETURN(report.schema_version, Verify(copy, backup_path));
  AS_ASSIGN_OR_RETURN(report.sessions, CountSessions(copy));
  AS_ASSIGN_OR_RETURN(
      report.events,
      copy.QueryInt("SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM events"));
  return Status::Ok();
}

}  // namespace

Result<SqliteBackupReport> BackupSqliteStore(const std::string& store_path,
                                             const std::string& backup_path,
                                             const SqliteBackupOptions& options) {
  if (options.pages_per_step < 1)
    return Error(ErrorCode::kInvalidArgument, "pages per step must be at least 1");
  if (Exists(backup_path))
    return Error(ErrorCode::kAlreadyExists, backup_path + " exists; choose a new file");
  if (!Exists(store_path))
    return Error(ErrorCode::kNotFound, "there is no SQLite store at " + store_path);
  OpenOptions read;
  read.read_only = true;
  read.uri = false;
  AS_ASSIGN_OR_RETURN(Db source, Db::Open(store_path, read));
  // One read transaction for every step: the copy is the store as of this instant and never
  // restarts when the daemon commits (see the header).
  AS_RETURN_IF_ERROR(source.Exec("BEGIN"));
  auto sessions = CountSessions(source);
  if (!sessions.ok()) {
    if (sessions.status().code() == ErrorCode::kCorruption)
      return Error(ErrorCode::kCorruption, store_path + " is not a SQLite database");
    return sessions.status();
  }

  TempFile temp(backup_path + ".partial");
  OpenOptions write;
  write.create = true;
  write.uri = false;
  SqliteBackupReport report;
  report.sessions = *sessions;
  {
    AS_ASSIGN_OR_RETURN(Db dest, Db::Open(temp.path(), write));
    if (Status s = CopyPages(source, dest, options.pages_per_step, &report.steps, options.progress);
        !s.ok()) {
      return Error(s.code(),
                   "cannot copy " + store_path + " to " + temp.path() + ": " + s.message());
    }
    AS_RETURN_IF_ERROR(source.Exec("COMMIT"));
    AS_RETURN_IF_ERROR(MakeSelfContained(dest));
    AS_ASSIGN_OR_RETURN(report.pages, dest.QueryInt("PRAGMA page_count"));
    AS_ASSIGN_OR_RETURN(report.page_size, dest.QueryInt("PRAGMA page_size"));
  }  // closed: its last commit synced the file (synchronous=FULL)
  AS_RETURN_IF_ERROR(RenameDurably(temp.path(), backup_path));
  temp.Keep();
  return report;
}

Result<SqliteRestoreReport> RestoreSqliteStore(const std::string& backup_path,
                                               const std::string& store_path,
                                               const SqliteRestoreOptions& options) {
  if (!Exists(backup_path))
    return Error(ErrorCode::kNotFound, "there is no backup at " + backup_path);
  OpenOptions read;
  read.read_only = true;
  read.uri = false;
  auto opened = Db::Open(backup_path, read);
  if (!opened.ok()) return AboutBackup(opened.status(), backup_path);
  Db backup = std::move(*opened);
  // Reading the header first refuses a file that is not a database before the destination is
  // touched, and a newer schema before the copy.
  auto version = backup.QueryInt("PRAGMA user_version");
  if (!version.ok()) return AboutBackup(version.status(), backup_path);
  if (*version > kSqliteSchemaVersion) AS_RETURN_IF_ERROR(Verify(backup, backup_path).status());

  SqliteRestoreReport report;
  std::optional<LockedDestination> destination;
  if (!Exists(store_path) && Exists(store_path + "-wal")) {
    // SQLite would replay that WAL into the restored file when the daemon opens it.
    return Error(ErrorCode::kAlreadyExists, store_path + "-wal is left without its database; " +
                                                "move it away to restore there");
  }
  if (Exists(store_path)) {
    AS_ASSIGN_OR_RETURN(destination, LockDestination(store_path));
    report.replaced_sessions = destination->sessions;
    if (destination->sessions > 0 && !options.force) {
      return Error(ErrorCode::kAlreadyExists,
                   store_path + " holds " + std::to_string(destination->sessions) +
                       " sessions; restoring would replace them (--force to do so)");
    }
  }

  TempFile temp(store_path + ".restoring");
  AS_RETURN_IF_ERROR(CopyAndVerify(backup, backup_path, temp.path(), report));
  // Fold the destination's WAL into it and drop it, still under the lock, so that no stale WAL
  // lies beside the file renamed over it (SQLite would replay it into the restored file).
  if (destination) AS_RETURN_IF_ERROR(MakeSelfContained(destination->db));
  AS_RETURN_IF_ERROR(RenameDurably(temp.path(), store_path));
  temp.Keep();
  return report;  // `destination` unlocks the replaced file's inode
}

}  // namespace agentstream
