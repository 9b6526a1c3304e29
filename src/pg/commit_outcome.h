// How a writer learns whether a commit whose answer was lost landed: one mechanism for every
// PostgreSQL store of the daemon (the session log, store/postgres/postgres_log.h "Failures", in
// `commit_stamps`; the generic streams, streams/postgres_streams.h, in `ds_commit_stamps`). The
// writer has a row of its own in its store's stamp table, registered when the store opens; every
// batch transaction stamps it with the batch's number, so the batch committed exactly when the
// stamp did. After the connection died
// during COMMIT, the writer reconnects (to whichever server is the primary by then: a libpq
// multi-host conninfo finds the promoted standby) and reads the stamp under its row lock, in a
// transaction that itself commits before the answer is trusted:
//   - the row lock waits for the old transaction when its server is still up and has not yet
//     finished it (a connection broken by the network, not by the server), so a stamp read
//     while the COMMIT is still in flight is never taken for "not landed";
//   - the check writes (it touches the row) and commits under the writer's synchronous_commit, so
//     with a synchronous standby its COMMIT returns only once everything before it, the stamped
//     batch included, is on the standby: a batch found on a primary that then fails over is not
//     acknowledged and lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "pg/pg.h"

namespace agentstream::pg {

// How often the writer asks again for a lost COMMIT's outcome (the store's `outcome_wait` option
// bounds how long it keeps asking).
inline constexpr std::chrono::milliseconds kOutcomePollInterval{200};
// How long one check waits for the row lock of a transaction its server has not finished.
inline constexpr int kOutcomeLockTimeoutMs = 1000;

// The stamps of one writer in one stamp table. Used by the writer thread only.
//
// The table, made by the store's schema, has the columns (writer text PRIMARY KEY, batch bigint
// NOT NULL, stamped_ms bigint NOT NULL) and lies on the connections' search_path.
class CommitStamps {
 public:
  // `table`: the stamp table's name (an SQL identifier, used as given); `writer`: this writer's
  // id, unique among the writers of the table (a random id: system::RandomId).
  CommitStamps(std::string table, std::string writer);

  const std::string& table() const { return table_; }
  const std::string& writer() const { return writer_; }
  std::int64_t last() const { return last_; }

  // Registers this writer's row (committed at once) and deletes the rows of writers that have not
  // stamped for a day (logs closed without Forget, daemons that crashed).
  Status Register(Conn& conn) const;
  // The statement that stamps the next batch number (last() from now on) inside the batch's
  // transaction: sent before its COMMIT, in the same pipeline. A failure is the batch's: roll it
  // back (the number is not used again either way).
  Statement Stamp();
  // Deletes this writer's row (when the log closes); failures are ignored.
  void Forget(Conn& conn) const;

  // Whether the transaction that stamped `batch` committed: true or false, or kUnavailable while
  // that cannot be told yet (the connection failed, or the row is still locked by it).
  Result<bool> Landed(Conn& conn, std::int64_t batch) const;

 private:
  const std::string table_;
  const std::string writer_;
  const std::string upsert_;  // see commit_outcome.cc
  std::int64_t last_ = 0;
};

// Asks for `batch`'s outcome until it is known, reconnecting with `connect` into `conn` whenever
// the connection is broken, every kOutcomePollInterval, for at most `wait`, and no longer than
// `keep_going` returns true. kUnavailable with the last reason when it could not be told.
Result<bool> ResolveOutcome(const CommitStamps& stamps, std::int64_t batch, Conn& conn,
                            const std::function<Result<Conn>()>& connect,
                            std::chrono::steady_clock::duration wait,
                            const std::function<bool()>& keep_going);

}  // namespace agentstream::pg
