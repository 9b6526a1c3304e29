#include "store/copy/copy_conn.h"

#include <filesystem>

#include "pg/pg.h"
#include "pg/setup.h"
#include "sqlite/db.h"
#include "store/log_factory.h"
#include "store/postgres/postgres_log.h"
#include "store/postgres/postgres_schema.h"
#include "store/sqlite/sqlite_log.h"
#include "store/sqlite/sqlite_schema.h"

namespace agentstream::store_copy {

namespace {

// A daemon heartbeats its registry row every few seconds; one seen within this long is taken to
// be running (docs/operations.md, "Moving from SQLite to PostgreSQL").
constexpr std::int64_t kDaemonAliveMs = 30000;
// The advisory lock a copy holds on a PostgreSQL store: this key and the hash of the schema.
constexpr std::int64_t kCopyLockKey = 0x61676370;  // "agcp"

class SqliteConn final : public CopyConn {
 public:
  SqliteConn(sqlite::Db db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}

  Backend backend() const override { return Backend::kSqlite; }
  const std::string& name() const override { return path_; }

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params,
                                 const std::vector<ColumnKind>& columns,
                                 const std::vector<ColumnKind>& param_kinds) override {
    AS_ASSIGN_OR_RETURN(sqlite::Db::CachedStmt stmt, db_.Cached(std::string(sql)));
    Bind(*stmt, params, param_kinds);
    std::vector<Row> rows;
    while (true) {
      Result<bool> more = stmt->Step();
      if (!more.ok()) return Error(ErrorCode::kIoError, path_ + ": " + more.status().message());
      if (!*more) break;
      Row row(columns.size());
      for (std::size_t i = 0; i < columns.size(); ++i) {
        const int c = static_cast<int>(i);
        if (stmt->IsNull(c)) {
          row[i] = Value::Null();
        } else if (columns[i] == ColumnKind::kInt || columns[i] == ColumnKind::kBool) {
          row[i] = Value::Int(stmt->Int(c));
        } else {
          row[i] = Value::Text(stmt->Text(c));
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status Exec(std::string_view sql, const std::vector<Value>& params,
              const std::vector<ColumnKind>& param_kinds) override {
    AS_ASSIGN_OR_RETURN(sqlite::Db::CachedStmt stmt, db_.Cached(std::string(sql)));
    Bind(*stmt, params, param_kinds);
    Status s = stmt->Exec();
    if (!s.ok()) return Error(ErrorCode::kIoError, path_ + ": " + s.message());
    return Status::Ok();
  }

  std::string Param(int n, ColumnKind /*kind*/) const override { return "$" + std::to_string(n); }
  std::string Select(const std::string& name, ColumnKind /*kind*/) const override { return name; }

  Status Begin() override { return Wrap(db_.Exec("BEGIN IMMEDIATE")); }
  Status Commit() override { return Wrap(db_.Exec("COMMIT")); }
  void Rollback() override { (void)db_.Exec("ROLLBACK"); }

  Result<bool> HasTable(const std::string& table) override {
    AS_ASSIGN_OR_RETURN(
        auto rows, Query("SELECT count(*) FROM sqlite_master WHERE name = $1", {Value::Text(table)},
                         {ColumnKind::kInt}, {ColumnKind::kText}));
    return rows[0][0].integer > 0;
  }

  Result<std::int64_t> SchemaVersion() override { return db_.QueryInt("PRAGMA user_version"); }
  std::int64_t CurrentSchemaVersion() const override { return kSqliteSchemaVersion; }
  Status EnsureSchema() override {
    AS_RETURN_IF_ERROR(Wrap(db_.Exec("PRAGMA journal_mode=WAL")));
    return Wrap(sqlite::EnsureSchema(db_));
  }

  Status HoldExclusive() override {
    // As `store restore` does (sqlite_backup.cc): in exclusive locking mode the first
    // transaction takes an exclusive lock on the file and keeps it, and fails at once while any
    // other connection (a daemon's) has the database open.
    Status s = db_.Exec("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE");
    if (!s.ok()) {
      if (db_.Busy()) {
        return Error(ErrorCode::kUnavailable,
                     path_ +
                         " is in use by another process (a daemon serving it, or a command "
                         "reading it): stop it before copying");
      }
      return Wrap(s);
    }
    return Wrap(db_.Exec("COMMIT"));
  }

 private:
  static void Bind(sqlite::Stmt& stmt, const std::vector<Value>& params,
                   const std::vector<ColumnKind>& kinds) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::string name = "$" + std::to_string(i + 1);
      const int index = sqlite3_bind_parameter_index(stmt.raw(), name.c_str());
      if (index == 0) continue;  // not used by this statement
      const Value& v = params[i];
      if (v.null) {
        stmt.BindNull(index);
      } else if (kinds[i] == ColumnKind::kInt || kinds[i] == ColumnKind::kBool) {
        stmt.Bind(index, v.integer);
      } else if (kinds[i] == ColumnKind::kBlob) {
        stmt.BindBlob(index, v.bytes);
      } else {
        stmt.Bind(index, v.bytes);
      }
    }
  }

  Status Wrap(const Status& s) const {
    if (s.ok() || s.code() == ErrorCode::kUnsupportedVersion) return s;
    return Error(s.code() == ErrorCode::kCorruption ? s.code() : ErrorCode::kIoError,
                 path_ + ": " + s.message());
  }

  sqlite::Db db_;
  std::string path_;
};

class PostgresConn final : public CopyConn {
 public:
  PostgresConn(pg::Conn conn, std::string url, std::string name)
      : conn_(std::move(conn)), url_(std::move(url)), name_(std::move(name)) {}

  Backend backend() const override { return Backend::kPostgres; }
  const std::string& name() const override { return name_; }

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params,
                                 const std::vector<ColumnKind>& columns,
                                 const std::vector<ColumnKind>& param_kinds) override {
    auto result = conn_.Exec(sql, Params(params, param_kinds));
    if (!result.ok()) return Failed(result.status());
    std::vector<Row> rows;
    rows.reserve(static_cast<std::size_t>(result->size()));
    for (int r = 0; r < result->size(); ++r) {
      Row row(columns.size());
      for (std::size_t i = 0; i < columns.size(); ++i) {
        const int c = static_cast<int>(i);
        if (result->IsNull(r, c)) {
          row[i] = Value::Null();
        } else if (columns[i] == ColumnKind::kInt || columns[i] == ColumnKind::kBool) {
          row[i] = Value::Int(result->Int(r, c));
        } else if (columns[i] == ColumnKind::kBlob) {
          row[i] = Value::Text(result->Bytes(r, c));
        } else {
          row[i] = Value::Text(result->Text(r, c));
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status Exec(std::string_view sql, const std::vector<Value>& params,
              const std::vector<ColumnKind>& param_kinds) override {
    auto result = conn_.Exec(sql, Params(params, param_kinds));
    return result.ok() ? Status::Ok() : Failed(result.status());
  }

  std::string Param(int n, ColumnKind kind) const override {
    const std::string p = "$" + std::to_string(n);
    return kind == ColumnKind::kBool ? p + "::integer::boolean" : p;
  }
  std::string Select(const std::string& name, ColumnKind kind) const override {
    return kind == ColumnKind::kBool ? name + "::integer" : name;
  }

  Status Begin() override { return Exec("BEGIN", {}, {}); }
  Status Commit() override { return Exec("COMMIT", {}, {}); }
  void Rollback() override { (void)conn_.Exec("ROLLBACK"); }

  Result<bool> HasTable(const std::string& table) override {
    AS_ASSIGN_OR_RETURN(auto rows,
                        Query("SELECT count(*) FROM pg_catalog.pg_tables WHERE "
                              "schemaname = current_schema() AND tablename = $1",
                              {Value::Text(table)}, {ColumnKind::kInt}, {ColumnKind::kText}));
    return rows[0][0].integer > 0;
  }

  Result<std::int64_t> SchemaVersion() override {
    AS_ASSIGN_OR_RETURN(bool has, HasTable("agentstream_schema"));
    if (!has) return 0;
    AS_ASSIGN_OR_RETURN(auto rows, Query("SELECT coalesce(max(version), 0) FROM "
                                         "agentstream_schema",
                                         {}, {ColumnKind::kInt}, {}));
    return rows[0][0].integer;
  }
  std::int64_t CurrentSchemaVersion() const override { return kPostgresSchemaVersion; }
  Status EnsureSchema() override {
    Status s = pg::EnsureSchema(conn_, "", PostgresLogSchema());
    if (s.ok() || s.code() == ErrorCode::kUnsupportedVersion) return s;
    return Failed(s);
  }

  Status HoldExclusive() override {
    AS_ASSIGN_OR_RETURN(
        auto locked,
        Query("SELECT pg_try_advisory_lock($1::integer, hashtext(current_schema()))::integer",
              {Value::Int(kCopyLockKey)}, {ColumnKind::kInt}, {ColumnKind::kInt}));
    if (locked[0][0].integer != 1) {
      return Error(ErrorCode::kUnavailable,
                   name_ + " is in use by another `agentstream store copy`: wait for it to end");
    }
    AS_ASSIGN_OR_RETURN(bool has_daemons, HasTable("daemons"));
    if (has_daemons) {
      AS_ASSIGN_OR_RETURN(
          auto alive, Query("SELECT id, host FROM daemons WHERE heartbeat_ms > (extract(epoch FROM "
                            "clock_timestamp()) * 1000)::bigint - $1 ORDER BY id LIMIT 1",
                            {Value::Int(kDaemonAliveMs)}, {ColumnKind::kText, ColumnKind::kText},
                            {ColumnKind::kInt}));
      if (!alive.empty()) {
        return Error(ErrorCode::kUnavailable, name_ + " is served by daemon " + alive[0][0].bytes +
                                                  " on " + alive[0][1].bytes +
                                                  " (a heartbeat within the last " +
                                                  std::to_string(kDaemonAliveMs / 1000) +
                                                  " s): stop every daemon on it before copying");
      }
    }
    AS_ASSIGN_OR_RETURN(bool has_sessions, HasTable("sessions"));
    if (!has_sessions) return Status::Ok();
    AS_ASSIGN_OR_RETURN(auto owned,
                        Query("SELECT id, owner FROM sessions WHERE owner <> '' AND "
                              "owner_expires_ms > (extract(epoch FROM clock_timestamp()) * "
                              "1000)::bigint ORDER BY id LIMIT 1",
                              {}, {ColumnKind::kText, ColumnKind::kText}, {}));
    if (!owned.empty()) {
      return Error(ErrorCode::kUnavailable, name_ + ": agent " + owned[0][0].bytes +
                                                " is run by daemon " + owned[0][1].bytes +
                                                " (its lease is live): stop it before copying");
    }
    return Status::Ok();
  }

 private:
  static std::vector<pg::Param> Params(const std::vector<Value>& params,
                                       const std::vector<ColumnKind>& kinds) {
    std::vector<pg::Param> out;
    out.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      if (v.null) {
        out.emplace_back();
      } else if (kinds[i] == ColumnKind::kInt || kinds[i] == ColumnKind::kBool) {
        out.emplace_back(v.integer);
      } else if (kinds[i] == ColumnKind::kBlob) {
        out.push_back(pg::Param::Bytes(v.bytes));
      } else {
        out.emplace_back(v.bytes);
      }
    }
    return out;
  }

  Status Failed(const Status& s) const {
    if (s.code() == ErrorCode::kInvalidArgument) return Error(s.code(), name_ + ": " + s.message());
    return Error(ErrorCode::kIoError, name_ + ": " + s.message());
  }

  pg::Conn conn_;
  std::string url_;
  std::string name_;
};

bool IsPostgresUrl(const std::string& url) {
  return url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0;
}

}  // namespace

std::string RedactUrl(const std::string& url) {
  if (!IsPostgresUrl(url)) return url;
  const std::size_t scheme = url.find("://") + 3;
  const std::size_t at = url.find('@', scheme);
  const std::size_t colon = url.find(':', scheme);
  std::string out = url;
  if (at != std::string::npos && colon != std::string::npos && colon < at)
    out = url.substr(0, colon) + ":***" + url.substr(at);
  const std::size_t password = out.find("password=");
  if (password != std::string::npos) {
    const std::size_t end = out.find('&', password);
    out = out.substr(0, password) + "password=***" +
          (end == std::string::npos ? "" : out.substr(end));
  }
  return out;
}

Result<std::unique_ptr<CopyConn>> OpenCopyConn(const std::string& url, bool create) {
  if (IsPostgresUrl(url)) {
    const std::string name = RedactUrl(url);
    auto conn = pg::ConnectTo(url, "agentstream-copy", "");
    if (!conn.ok()) return Error(ErrorCode::kIoError, name + ": " + conn.status().message());
    return std::unique_ptr<CopyConn>(std::make_unique<PostgresConn>(std::move(*conn), url, name));
  }
  const std::optional<std::string> path = SqliteStorePath(url);
  if (!path) {
    return Error(ErrorCode::kInvalidArgument,
                 "'" + url + "' is not a store to copy: give a SQLite file or a postgresql:// URL");
  }
  std::error_code ec;
  if (!create && !std::filesystem::exists(*path, ec))
    return Error(ErrorCode::kNotFound, "no store at " + *path);
  sqlite::OpenOptions options;
  options.create = create;
  options.uri = false;
  options.busy_timeout_ms = 0;  // in use now is in use: no waiting
  auto db = sqlite::Db::Open(*path, options);
  if (!db.ok()) return Error(ErrorCode::kIoError, *path + ": " + db.status().message());
  return std::unique_ptr<CopyConn>(std::make_unique<SqliteConn>(std::move(*db), *path));
}

}  // namespace agentstream::store_copy
