// A thin RAII layer over the SQLite C API, for every SQLite file of the daemon (the session log's
// SQLite backend, the generic streams' journal). Errors come back as Status values carrying
// SQLite's message; nothing here throws.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::sqlite {

// A prepared statement. Owned by one connection; used by one thread at a time.
class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_), bind_error_(other.bind_error_) {
    other.stmt_ = nullptr;
  }
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Binders take 1-based parameter indexes, as SQLite does. Text and blobs are copied only when
  // `copy` is set; otherwise they must outlive the next Step()/Reset(). A value SQLite refuses
  // (over its length limit, a bad index) fails the next Step() or Exec(), never stored as NULL.
  Stmt& Bind(int index, std::int64_t value);
  Stmt& Bind(int index, std::string_view text, bool copy = false);
  Stmt& BindBlob(int index, std::string_view bytes, bool copy = false);
  Stmt& BindNull(int index);

  // Runs one step: true when a row is available, false when done.
  Result<bool> Step();
  // Runs to completion, expecting no rows.
  Status Exec();
  void Reset();
  bool IsPrepared() const { return stmt_ != nullptr; }
  sqlite3_stmt* raw() const { return stmt_; }

  std::int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string Text(int column) const;

 private:
  Stmt& Bound(int rc);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_error_ = SQLITE_OK;  // the first refused binding since the last Reset()
};

// How Db::Open opens a file. The defaults suit connections that share a file (the session log's
// writer, readers and checkpointer): they wait for each other's locks.
struct OpenOptions {
  bool create = false;     // create the file when it is missing (ignored when read_only)
  bool read_only = false;  // SQLITE_OPEN_READONLY, else SQLITE_OPEN_READWRITE
  std::string vfs;         // the VFS registered under this name; empty: the default one
  // A path "file:..." is a URI whose query may carry options (SQLITE_OPEN_URI); when unset, it
  // is a file name like any other.
  bool uri = true;
  // How long a statement waits for a lock held by another connection before it fails with
  // SQLITE_BUSY (Busy()); zero fails at once.
  int busy_timeout_ms = 5000;
};

// One SQLite connection. Not thread-safe: one owner thread at a time.
class Db {
 public:
  Db() = default;
  Db(Db&& other) noexcept : db_(other.db_), cache_(std::move(other.cache_)) { other.db_ = nullptr; }
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Opens `path` as `options` say, with extended result codes. The connection has no mutex of
  // its own (SQLITE_OPEN_NOMUTEX). An error (the file cannot be opened or created) leaves nothing
  // open; its message names `path`.
  static Result<Db> Open(const std::string& path, const OpenOptions& options);

  // Runs `sql`, one statement or several separated by ';', to completion; the first failure
  // stops it (statements before it stay done: an open transaction is the caller's to roll back).
  Status Exec(const std::string& sql);
  Result<Stmt> Prepare(std::string_view sql);
  // Runs the query `sql` to its first row and returns that row's first column as an integer: 0
  // when there is no row or the value is NULL. The statement is finalized before it returns.
  Result<std::int64_t> QueryInt(std::string_view sql);
  // A statement prepared once per connection and kept; the handle resets it when it goes out of
  // scope. At most one handle per SQL text may be alive at a time.
  class CachedStmt {
   public:
    explicit CachedStmt(Stmt* stmt) : stmt_(stmt) {}
    CachedStmt(CachedStmt&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
    CachedStmt& operator=(CachedStmt&&) = delete;
    ~CachedStmt() {
      if (stmt_) stmt_->Reset();
    }
    Stmt* operator->() const { return stmt_; }
    Stmt& operator*() const { return *stmt_; }

   private:
    Stmt* stmt_;
  };
  Result<CachedStmt> Cached(const std::string& sql);
  sqlite3* raw() const { return db_; }
  // SQLite's message for the last call that failed on this connection (sqlite3_errmsg).
  std::string LastError() const;
  // True when the last call that failed on this connection failed because another connection
  // holds a lock on the file (SQLITE_BUSY, whichever extended code).
  bool Busy() const;

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
  // Declared after db_ so that statements are finalized before the connection closes.
  std::map<std::string, std::unique_ptr<Stmt>> cache_;
};

// Maps a SQLite result code to a Status; `what` says what was attempted.
Status FromSqlite(int rc, sqlite3* db, std::string_view what);

}  // namespace agentstream::sqlite
