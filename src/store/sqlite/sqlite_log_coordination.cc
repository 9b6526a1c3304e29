// The SQLite log as the store's Coordination (coordination.h): agent ownership leases and their
// history, the daemon registry, and the shared secrets this store does not keep.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlite/db.h"
#include "store/log_state.h"
#include "store/sqlite/sqlite_log_impl.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_writer.h"
#include "system/wall_clock.h"

namespace agentstream::sqlite {

Result<OwnerGrant> SqliteEventLog::AcquireOwnership(const SessionId& session,
                                                    const std::string& owner, std::int64_t ttl_ms) {
  return RunControl<OwnerGrant>([&](Writer& w, OwnerGrant& out) -> Status {
    AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
    const TimestampMs now = system::WallClockMs();
    // Decided on a copy: a refused or failed grant leaves the cached picture as stored.
    store_internal::SessionState state = cached->state;
    AS_ASSIGN_OR_RETURN(out, store_internal::GrantOwnership(state, session, owner, now, ttl_ms));
    cached->state.owner = state.owner;
    AS_RETURN_IF_ERROR(w.StoreOwner(*cached));
    AS_ASSIGN_OR_RETURN(Stmt h,
                        w.db().Prepare("INSERT INTO owner_history(session, generation, owner, "
                                       "granted_ms, epoch, seq) VALUES(?,?,?,?,?,?)"));
    h.Bind(1, session.str()).Bind(2, sqlite::ToInt64(out.lease.generation)).Bind(3, owner);
    h.Bind(4, now).Bind(5, sqlite::ToInt64(state.current().value()));
    h.Bind(6, sqlite::ToInt64(state.epochs.back().tail.value()));
    return w.Check(h.Exec());
  });
}

Result<std::vector<SessionId>> SqliteEventLog::RenewOwnerships(
    const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
    std::int64_t ttl_ms) {
  return RunControl<std::vector<SessionId>>([&](Writer& w, std::vector<SessionId>& lost) -> Status {
    const TimestampMs now = system::WallClockMs();
    for (const auto& [session, generation] : leases) {
      auto cached = w.Load(session);
      if (!cached.ok()) {
        if (!w.io().ok()) return w.io();
        lost.push_back(session);
        continue;
      }
      if (!store_internal::RenewOwnership((*cached)->state, owner, generation, now, ttl_ms)) {
        lost.push_back(session);
        continue;
      }
      AS_RETURN_IF_ERROR(w.StoreOwner(**cached));
    }
    return Status::Ok();
  });
}

Status SqliteEventLog::ReleaseOwnership(const SessionId& session, std::uint64_t generation) {
  return RunControl<bool>([&](Writer& w, bool&) -> Status {
           AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
           store_internal::SessionState state = cached->state;
           AS_RETURN_IF_ERROR(store_internal::ReleaseOwnership(state, session, generation));
           cached->state.owner = state.owner;
           return w.StoreOwner(*cached);
         })
      .status();
}

Result<OwnerLease> SqliteEventLog::GetOwnership(const SessionId& session) {
  return readers_.GetOwnership(session, system::WallClockMs());
}

Result<std::vector<std::pair<SessionId, OwnerLease>>> SqliteEventLog::ListExpiredOwnerships(
    std::size_t limit) {
  return readers_.ListExpiredOwnerships(system::WallClockMs(), limit);
}

Result<std::vector<OwnershipRecord>> SqliteEventLog::OwnershipHistory(const SessionId& session) {
  return readers_.OwnershipHistory(session);
}

Status SqliteEventLog::Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) {
  return RunControl<bool>([&](Writer& w, bool&) -> Status {
           const TimestampMs now = system::WallClockMs();
           AS_ASSIGN_OR_RETURN(std::optional<DaemonRecord> stored,
                               sqlite::LoadDaemon(w.db(), self.id));
           AS_RETURN_IF_ERROR(store_internal::CheckDaemonIdentity(stored.value_or(DaemonRecord{}),
                                                                  self, now, ttl_ms));
           AS_ASSIGN_OR_RETURN(
               Stmt s, w.db().Prepare("INSERT OR REPLACE INTO daemons(id, url, host, data_dir, "
                                      "started_ms, heartbeat_ms) VALUES(?,?,?,?,?,?)"));
           s.Bind(1, self.id).Bind(2, self.url).Bind(3, self.host).Bind(4, self.data_dir);
           s.Bind(5, self.started_ms).Bind(6, now);
           return w.Check(s.Exec());
         })
      .status();
}

Result<std::optional<DaemonRecord>> SqliteEventLog::GetDaemon(const std::string& id) {
  return readers_.GetDaemon(id, system::WallClockMs());
}

Result<std::string> SqliteEventLog::SharedSecret(const std::string& name, const std::string&) {
  return Error(ErrorCode::kUnavailable,
               "the SQLite store keeps no shared secrets (asked for " + name + ")");
}

}  // namespace agentstream::sqlite
