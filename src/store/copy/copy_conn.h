// Internal to `store copy` (store_copy.h): one connection to a store's tables, SQLite or
// PostgreSQL, behind the few calls the copier needs, so that one copier moves rows between any
// two backends. Statements are written once in the SQL both understand (`$1`-style parameters,
// INSERT ... ON CONFLICT); the connection supplies what differs: how a column is read and how a
// parameter is cast, the schema version and its creation, and how a store in use is detected.
//
// Not thread-safe: one owner thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::store_copy {

// How a column is stored: a 64-bit integer, UTF-8 text, bytes, or a boolean (an integer 0/1 on
// SQLite, `boolean` on PostgreSQL; read and written as 0/1).
enum class ColumnKind { kInt, kText, kBlob, kBool };

// One value of a row: SQL NULL, an integer or text/bytes (by its column's kind).
struct Value {
  bool null = false;
  std::int64_t integer = 0;
  std::string bytes;

  static Value Null() { return Value{.null = true}; }
  static Value Int(std::int64_t n) { return Value{.integer = n}; }
  static Value Text(std::string s) { return Value{.bytes = std::move(s)}; }
  bool operator==(const Value&) const = default;
};
using Row = std::vector<Value>;

struct Column {
  const char* name;
  ColumnKind kind;
};

enum class Backend { kSqlite, kPostgres };

class CopyConn {
 public:
  virtual ~CopyConn() = default;
  virtual Backend backend() const = 0;
  // Where the store is, for messages (a PostgreSQL URL without its password).
  virtual const std::string& name() const = 0;

  // Runs `sql` with `params` (bound to $1.. as the kinds say) and returns its rows, each column
  // read as `columns[i]` says. kIoError when the statement fails.
  virtual Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params,
                                         const std::vector<ColumnKind>& columns,
                                         const std::vector<ColumnKind>& param_kinds) = 0;
  // Runs a statement that returns no rows.
  virtual Status Exec(std::string_view sql, const std::vector<Value>& params,
                      const std::vector<ColumnKind>& param_kinds) = 0;
  // The parameter `$n` as a statement writes a column of `kind` (PostgreSQL casts a boolean).
  virtual std::string Param(int n, ColumnKind kind) const = 0;
  // The column `name` of `kind` as a SELECT list reads it.
  virtual std::string Select(const std::string& name, ColumnKind kind) const = 0;

  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;

  // True when the store has table `table` (a SQLite store keeps no `secrets`).
  virtual Result<bool> HasTable(const std::string& table) = 0;

  // The store's schema version and the newest this build knows. 0 for an empty database.
  virtual Result<std::int64_t> SchemaVersion() = 0;
  virtual std::int64_t CurrentSchemaVersion() const = 0;
  // Creates the tables or migrates them to CurrentSchemaVersion() (the backend's own schema code).
  virtual Status EnsureSchema() = 0;

  // Refuses (kUnavailable, naming what it found) a store a daemon serves, and keeps any daemon
  // from starting on it until this connection closes where the backend allows: SQLite takes an
  // exclusive lock on the file; PostgreSQL looks for a daemon's heartbeat in the registry, a
  // live agent lease, and another copy (an advisory lock held until the connection closes).
  virtual Status HoldExclusive() = 0;
};

// Opens the store at `url` ("sqlite:PATH" or PATH, "postgres://..." / "postgresql://...").
// `create`: a missing SQLite file is created (the destination); else kNotFound.
// kInvalidArgument for another URL ("memory:" among them).
Result<std::unique_ptr<CopyConn>> OpenCopyConn(const std::string& url, bool create);

// The URL without a password, for messages.
std::string RedactUrl(const std::string& url);

}  // namespace agentstream::store_copy
