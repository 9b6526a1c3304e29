#include "sqlite/db.h"

#include <limits>
#include <string>

namespace agentstream::sqlite {

Status FromSqlite(int rc, sqlite3* db, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::Ok();
  std::string message = std::string(what) + ": " + sqlite3_errstr(rc);
  if (db != nullptr && sqlite3_errmsg(db) != nullptr) {
    std::string detail = sqlite3_errmsg(db);
    if (detail != sqlite3_errstr(rc)) message += " (" + detail + ")";
  }
  const int primary = rc & 0xff;
  ErrorCode code = ErrorCode::kIoError;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    code = ErrorCode::kCorruption;
  else if (primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH)
    code = ErrorCode::kInternal;
  else if (primary == SQLITE_TOOBIG)
    code = ErrorCode::kTooLarge;
  else if (primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY || primary == SQLITE_PERM)
    code = ErrorCode::kUnavailable;
  return Error(code, message);
}

Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    bind_error_ = other.bind_error_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::Bound(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Stmt& Stmt::Bind(int index, std::int64_t value) {
  return Bound(sqlite3_bind_int64(stmt_, index, value));
}

// Sizes beyond int are SQLITE_TOOBIG, as SQLite answers for sizes beyond its own limit.
Stmt& Stmt::Bind(int index, std::string_view text, bool copy) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return Bound(SQLITE_TOOBIG);
  return Bound(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                                 copy ? SQLITE_TRANSIENT : SQLITE_STATIC));
}

Stmt& Stmt::BindBlob(int index, std::string_view bytes, bool copy) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return Bound(SQLITE_TOOBIG);
  return Bound(sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                                 copy ? SQLITE_TRANSIENT : SQLITE_STATIC));
}

Stmt& Stmt::BindNull(int index) { return Bound(sqlite3_bind_null(stmt_, index)); }

Result<bool> Stmt::Step() {
  if (bind_error_ != SQLITE_OK) {
    Status status = FromSqlite(bind_error_, nullptr, "sqlite bind");
    Reset();
    return status;
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status status = FromSqlite(rc, db_, "sqlite step");
  sqlite3_reset(stmt_);
  return status;
}

Status Stmt::Exec() {
  auto step = Step();
  Reset();
  if (!step.ok()) return step.status();
  return Status::Ok();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = SQLITE_OK;
}

std::string Stmt::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    cache_.clear();
    sqlite3_close_v2(db_);
    db_ = other.db_;
    cache_ = std::move(other.cache_);
    other.db_ = nullptr;
  }
  return *this;
}

Db::~Db() {
  cache_.clear();
  sqlite3_close_v2(db_);
}

Result<Db> Db::Open(const std::string& path, const OpenOptions& options) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.uri) flags |= SQLITE_OPEN_URI;
  flags |= options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create && !options.read_only) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags,
                                 options.vfs.empty() ? nullptr : options.vfs.c_str());
  if (rc != SQLITE_OK) {
    Status status = FromSqlite(rc, db, "open " + path);
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  return Db(db);
}

Status Db::Exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  return FromSqlite(rc, db_, "exec");
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return FromSqlite(rc, db_, "prepare");
  return Stmt(db_, stmt);
}

Result<std::int64_t> Db::QueryInt(std::string_view sql) {
  AS_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql));
  AS_ASSIGN_OR_RETURN(const bool row, stmt.Step());
  return row ? stmt.Int(0) : 0;
}

Result<Db::CachedStmt> Db::Cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    AS_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql));
    it = cache_.emplace(sql, std::make_unique<Stmt>(std::move(stmt))).first;
  }
  return CachedStmt(it->second.get());
}

std::string Db::LastError() const { return db_ ? sqlite3_errmsg(db_) : "no connection"; }

bool Db::Busy() const { return db_ != nullptr && (sqlite3_errcode(db_) & 0xff) == SQLITE_BUSY; }

}  // namespace agentstream::sqlite
