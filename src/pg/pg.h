// A thin RAII layer over libpq, the PostgreSQL client library.
// A Conn is one connection used by one thread at a time; Exec runs one statement with text
// parameters (nullopt is SQL NULL) and returns its rows as text. bytea values travel as
// parameters in binary and come back through Bytes().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

struct pg_conn;
struct pg_result;

namespace agentstream::pg {

// One statement parameter: text, SQL NULL, or binary bytes (for bytea).
struct Param {
  std::optional<std::string> value;
  bool binary = false;

  // Implicit, so that a statement's parameters read as a list of values.
  // NOLINTBEGIN(google-explicit-constructor)
  Param() = default;  // NULL
  Param(std::string text) : value(std::move(text)) {}
  Param(const char* text) : value(std::string(text)) {}
  Param(std::int64_t n) : value(std::to_string(n)) {}
  Param(std::optional<std::string> text) : value(std::move(text)) {}
  // NOLINTEND(google-explicit-constructor)
  static Param Bytes(std::string bytes) {
    Param p(std::move(bytes));
    p.binary = true;
    return p;
  }
};

// One statement of a pipeline (Conn::ExecPipeline). `reuse`: the connection prepares it the first
// time (a named statement, in the same round trip) and runs it by name from then on, so that the
// server parses and plans it once per connection rather than on every run; for the fixed
// statements a writer sends with every commit.
//
// `binary`: the answer comes in PostgreSQL's binary format, for a statement whose columns are
// integers (bigint, integer, smallint), text and bytea only: Rows reads those either way, and a
// bytea in binary is its bytes, not hex text twice their size to unescape.
struct Statement {
  std::string sql;
  std::vector<Param> params;
  bool reuse = false;
  bool binary = false;
};

class Rows {
 public:
  Rows() = default;
  explicit Rows(pg_result* result);
  Rows(Rows&&) noexcept;
  Rows& operator=(Rows&&) noexcept;
  ~Rows();

  int size() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  std::int64_t Int(int row, int column) const;
  // A bytea column, decoded (hex text) or as it came (binary).
  std::string Bytes(int row, int column) const;
  // The number of rows an INSERT, UPDATE or DELETE touched.
  std::int64_t Affected() const;

 private:
  pg_result* result_ = nullptr;
};

// The first failed answer of a pipeline (Conn::ExecPipeline), whose failure tells what happened:
// the server ran none of the statements after it. Null when every statement ran.
const Result<Rows>* FirstFailure(std::span<const Result<Rows>> answers);

// What every connection of the daemon sets unless its connection string says otherwise, so that
// a server gone silent (a partition that drops packets, a host that lost power) fails a store
// call with kUnavailable within seconds instead of leaving it to the kernel's TCP timeouts, which
// run to many minutes: a connection attempt gives up after connect_timeout; data the server has
// not acknowledged for tcp_user_timeout ms breaks the connection; an idle connection, or one
// waiting for an answer, is probed after keepalives_idle s, every keepalives_interval s, and is
// broken after keepalives_count unanswered probes. A live server's kernel acknowledges at once,
// however slow the server is, so a slow query is not cut short. Unix-socket connections ignore
// the TCP settings. docs/operations.md lists them.
inline constexpr std::pair<const char*, const char*> kConnectionDefaults[] = {
    {"connect_timeout", "10"},    {"keepalives", "1"},       {"keepalives_idle", "5"},
    {"keepalives_interval", "2"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "5000"},
};

class Conn {
 public:
  // Connects with a libpq connection string ("host=... dbname=..." or "postgres://..."), over
  // kConnectionDefaults. kUnavailable when the server cannot be reached.
  static Result<Conn> Open(const std::string& conninfo);
  Conn() = default;
  Conn(Conn&&) noexcept;
  Conn& operator=(Conn&&) noexcept;
  ~Conn();

  // Runs `sql` (with $1... placeholders). kIoError on failure; kConflict for a unique
  // violation (SQLSTATE 23505) and for a transaction the server aborted to let another go on (a
  // deadlock, 40P01; a serialization failure, 40001), which may be run again; kUnavailable when
  // the connection is gone.
  Result<Rows> Exec(std::string_view sql, const std::vector<Param>& params = {});
  // One statement, as above, answered in binary if it says so; a `reuse` one is run as a
  // pipeline of one (ExecPipeline), so that it is prepared once per connection.
  Result<Rows> Exec(const Statement& statement);
  // Sends `statements` in libpq's pipeline mode and then reads their answers: one round trip
  // for all of them instead of one each. Returns one result per statement, in order. The server
  // runs none after one it failed (even when it then ends the connection); those fail with
  // kIoError, saying so. When the connection breaks without such an answer, the statements whose
  // answers did not arrive are kUnavailable: a COMMIT among them may or may not have run. Either
  // way a connection that broke is closed (Broken). libpq sends while the server answers, so a
  // pipeline whose statements both carry and return much data could block both sides; each
  // pipeline of the daemon returns little. A `reuse` statement not yet prepared on this
  // connection is prepared just before it; a failure to prepare it is its answer.
  std::vector<Result<Rows>> ExecPipeline(std::span<const Statement> statements);
  // Runs several statements without parameters (schema scripts).
  Status ExecScript(std::string_view sql);
  bool Broken() const;
  // Whether anything arrived on this connection while it asked for nothing: for a connection
  // that does not LISTEN, the server ending it (a restart, a failover, an administrator) or
  // saying it will; open a new one. Reads nothing. Ask only between statements.
  bool SpokeWhileIdle() const;
  // Whether an idle connection can take the next statement: not Broken, and not ended by the
  // server while idle (SpokeWhileIdle). Otherwise open a new one.
  bool UsableAfterIdle() const { return !Broken() && !SpokeWhileIdle(); }
  // The value this connection uses for a libpq keyword ("tcp_user_timeout"); empty when unset.
  std::string Setting(const char* keyword) const;

  // LISTEN/NOTIFY: the server process of this connection, its socket (to wait on), and the
  // notifications received so far (reads what the socket holds without blocking; false when the
  // connection broke).
  struct Notification {
    std::string channel;
    std::string payload;
    int sender_pid = 0;
  };
  int BackendPid() const;
  int Socket() const;
  bool Receive(std::vector<Notification>& out);

 private:
  explicit Conn(pg_conn* conn) : conn_(conn) {}
  // One statement with PQexecParams, its answer in text or binary format.
  Result<Rows> ExecOnce(std::string_view sql, const std::vector<Param>& params, bool binary);
  pg_conn* conn_ = nullptr;
  std::map<std::string, std::string> prepared_;  // SQL of a `reuse` statement -> its name here
  std::uint64_t names_ = 0;                      // prepared statements named so far
};

}  // namespace agentstream::pg
