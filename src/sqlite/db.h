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
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Binders take 1-based parameter indexes, as SQLite does. Text and blobs are copied only when
  // `copy` is set; otherwise they must outlive the next Step()/Reset().
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
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
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

  // Opens `path` (created when `create` is set) through the VFS named `vfs` (empty: default).
  static Result<Db> Open(const std::string& path, bool create, bool read_only,
                         const std::string& vfs);

  Status Exec(const std::string& sql);
  Result<Stmt> Prepare(std::string_view sql);
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
  std::string LastError() const;

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
  // Declared after db_ so that statements are finalized before the connection closes.
  std::map<std::string, std::unique_ptr<Stmt>> cache_;
};

// Maps a SQLite result code to a Status; `what` says what was attempted.
Status FromSqlite(int rc, sqlite3* db, std::string_view what);

}  // namespace agentstream::sqlite
