#include "pg/commit_outcome.h"

#include <thread>
#include <utility>

#include "pg/setup.h"

namespace agentstream::pg {

namespace {

// Writes the writer's row of `table`, or touches it when it exists; returns the stamp it holds.
// Waits (up to the transaction's lock_timeout) for a transaction that holds the row or is
// inserting it.
std::string UpsertSql(const std::string& table) {
  return "INSERT INTO " + table + "(writer, batch, stamped_ms) VALUES($1, $2, " +
         std::string(kServerNowMs) +
         ") ON CONFLICT (writer) DO UPDATE SET stamped_ms = excluded.stamped_ms, batch = "
         "greatest(" +
         table + ".batch, excluded.batch) RETURNING batch";
}

}  // namespace

CommitStamps::CommitStamps(std::string table, std::string writer)
    : table_(std::move(table)), writer_(std::move(writer)), upsert_(UpsertSql(table_)) {}

Status CommitStamps::Register(Conn& conn) const {
  AS_RETURN_IF_ERROR(conn.Exec(upsert_, {writer_, Param(std::int64_t{0})}).status());
  return conn
      .Exec("DELETE FROM " + table_ + " WHERE stamped_ms < " + std::string(kServerNowMs) +
            " - 86400000")
      .status();
}

Statement CommitStamps::Stamp() {
  // An upsert, not an UPDATE: a row lost with the server that registered it (an asynchronous
  // standby promoted) is written again, so a batch never commits without its stamp.
  return Statement{upsert_, {writer_, Param(++last_)}};
}

void CommitStamps::Forget(Conn& conn) const {
  (void)conn.Exec("DELETE FROM " + table_ + " WHERE writer = $1", {writer_});
}

Result<bool> CommitStamps::Landed(Conn& conn, std::int64_t batch) const {
  auto checked = [&]() -> Result<bool> {
    AS_RETURN_IF_ERROR(conn.ExecScript("BEGIN"));
    AS_RETURN_IF_ERROR(conn.Exec("SELECT set_config('lock_timeout', $1, true)",
                                 {std::to_string(kOutcomeLockTimeoutMs)})
                           .status());
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(upsert_, {writer_, Param(std::int64_t{0})}));
    const bool landed = r.size() == 1 && r.Int(0, 0) >= batch;
    // Trusted only once committed: with a synchronous standby, this COMMIT returns once the
    // standby holds everything before it, the stamped batch included.
    AS_RETURN_IF_ERROR(conn.ExecScript("COMMIT"));
    return landed;
  };
  Result<bool> out = checked();
  if (out.ok()) return out;
  if (!conn.Broken()) (void)conn.ExecScript("ROLLBACK");
  return Error(ErrorCode::kUnavailable,
               "the outcome of a commit is not known yet: " + out.status().ToString());
}

Result<bool> ResolveOutcome(const CommitStamps& stamps, std::int64_t batch, Conn& conn,
                            const std::function<Result<Conn>()>& connect,
                            std::chrono::steady_clock::duration wait,
                            const std::function<bool()>& keep_going) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  Status last = Error(ErrorCode::kUnavailable, "the outcome of a commit is not known");
  while (true) {
    if (conn.Broken()) {
      Result<Conn> reopened = connect();
      if (reopened.ok())
        conn = std::move(*reopened);
      else
        last = reopened.status();
    }
    if (!conn.Broken()) {
      Result<bool> landed = stamps.Landed(conn, batch);
      if (landed.ok()) return landed;
      last = landed.status();
    }
    if (std::chrono::steady_clock::now() + kOutcomePollInterval > deadline || !keep_going())
      return Error(ErrorCode::kUnavailable, last.message());
    std::this_thread::sleep_for(kOutcomePollInterval);
  }
}

}  // namespace agentstream::pg
