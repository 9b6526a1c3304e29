// Internal to the store module: the read side of SqliteEventLog.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlite/db.h"
#include "store/event_log.h"
#include "store/sqlite/durable_floor.h"

namespace agentstream::sqlite {

// A bounded pool of read-only connections. Each read runs in its own read transaction, so it sees
// one committed snapshot. Thread-safe; a read waits when all connections are busy.
class ReaderPool {
 public:
  // `floor` (may be null, else must outlive the pool) hides events not yet durable.
  ReaderPool(std::string path, std::string vfs, std::size_t max_connections, LogLimits limits,
             const DurableFloor* floor);
  ~ReaderPool();

  Result<ReadResult> Read(const ReadRequest& request);
  Result<Cursor> Tail(const SessionId& session);
  Result<SessionInfo> GetSession(const SessionId& id);
  Result<std::vector<SessionInfo>> ListSessions(const std::string& after, std::size_t limit);
  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session);
  // Runs `body` on a pooled connection inside one read transaction (one committed snapshot).
  Status Run(const std::function<Status(Db&)>& body);
  // Run, for a `body` that returns Result<T>.
  template <class T, class Body>
  Result<T> Query(Body body) {
    std::optional<T> out;
    AS_RETURN_IF_ERROR(Run([&](Db& db) -> Status {
      AS_ASSIGN_OR_RETURN(T value, body(db));
      out = std::move(value);
      return Status::Ok();
    }));
    return std::move(*out);
  }
  // Coordination reads (coordination.h), judged at `now_ms`.
  Result<OwnerLease> GetOwnership(const SessionId& session, TimestampMs now_ms);
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(TimestampMs now_ms,
                                                                              std::size_t limit);
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session);
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id, TimestampMs now_ms);

 private:
  class Lease;
  // The part of a committed tail that is durable, and so readable.
  Seq Visible(const SessionId& session, Epoch epoch, Seq committed) const;
  Result<Db> Acquire();
  void Release(Db db);

  const std::string path_;
  const std::string vfs_;
  const std::size_t max_connections_;
  const LogLimits limits_;
  const DurableFloor* const floor_;
  std::mutex mu_;  // guards idle_ and open_
  std::condition_variable idle_cv_;
  std::vector<Db> idle_;
  std::size_t open_ = 0;
};

// The registered daemon `id`, or nullopt.
Result<std::optional<DaemonRecord>> LoadDaemon(Db& db, const std::string& id);

}  // namespace agentstream::sqlite
