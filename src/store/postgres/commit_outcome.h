// Internal to the store module: how the PostgreSQL log learns whether a commit whose answer was
// lost landed (postgres_log.h, "Failures"). The log's writer has a row of its own in
// `commit_stamps`, registered when the log opens; every batch transaction stamps it with the
// batch's number, so the batch committed exactly when the stamp did. After the connection died
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
#include "store/postgres/txn.h"

namespace agentstream::pg {

// How often the writer asks again for a lost COMMIT's outcome (PostgresLogOptions::outcome_wait
// bounds how long it keeps asking).
inline constexpr std::chrono::milliseconds kOutcomePollInterval{200};
// How long one check waits for the row lock of a transaction its server has not finished.
inline constexpr int kOutcomeLockTimeoutMs = 1000;

// The stamps of one writer, identified by a random id drawn at construction. Used by the writer
// thread only.
class CommitStamps {
 public:
  CommitStamps();

  const std::string& writer() const { return writer_; }
  std::int64_t last() const { return last_; }

  // Registers this writer's row (committed at once) and deletes the rows of writers that have not
  // stamped for a day (logs closed without Forget, daemons that crashed).
  Status Register(Conn& conn) const;
  // Stamps the next batch number inside `t`'s open transaction and returns it. A failure is the
  // batch's (t.io()).
  std::int64_t Stamp(Txn& t);
  // Deletes this writer's row (when the log closes); failures are ignored.
  void Forget(Conn& conn) const;

  // Whether the transaction that stamped `batch` committed: true or false, or kUnavailable while
  // that cannot be told yet (the connection failed, or the row is still locked by it).
  Result<bool> Landed(Conn& conn, std::int64_t batch) const;

 private:
  const std::string writer_;
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
