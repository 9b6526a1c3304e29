// The PostgreSQL log as the store's Coordination (coordination.h): agent ownership leases and
// their history, the daemon registry and the shared secrets of the daemons on one database, each
// timed by the server's clock.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pg/pg.h"
#include "pg/setup.h"
#include "store/log_state.h"
#include "store/postgres/postgres_log_impl.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

Result<OwnerGrant> PostgresEventLog::AcquireOwnership(const SessionId& session,
                                                      const std::string& owner,
                                                      std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}, {"an owner", owner}}));
  return RunControl<OwnerGrant>(session, [&](Txn& t, OwnerGrant& out) -> Status {
    AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
    AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
    // Decided on a copy: a refused grant leaves the transaction's picture as stored.
    store_internal::SessionState state = s->state;
    AS_ASSIGN_OR_RETURN(out, store_internal::GrantOwnership(state, session, owner, now, ttl_ms));
    s->state.owner = state.owner;
    AS_RETURN_IF_ERROR(t.StoreOwner(*s));
    return t
        .Exec(
            "INSERT INTO owner_history(session, generation, owner, granted_ms, epoch, seq) "
            "VALUES($1,$2,$3,$4,$5,$6)",
            {session.str(), I64(out.lease.generation), owner, now, I64(state.current().value()),
             I64(state.epochs.back().tail.value())})
        .status();
  });
}

Result<std::vector<SessionId>> PostgresEventLog::RenewOwnerships(
    const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
    std::int64_t ttl_ms) {
  for (const auto& [session, generation] : leases)
    AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  return RunControl<std::vector<SessionId>>([&](Txn& t, std::vector<SessionId>& lost) -> Status {
    std::vector<std::string> ids;
    ids.reserve(leases.size());
    for (const auto& lease : leases) ids.push_back(lease.first.str());
    AS_RETURN_IF_ERROR(t.Prefetch(std::move(ids)));  // their rows, locked in id order
    AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
    std::vector<std::string> renewed;
    for (const auto& [session, generation] : leases) {
      auto s = t.Load(session);
      if (!t.io().ok()) return t.io();
      if (!s.ok() || !store_internal::RenewOwnership((*s)->state, owner, generation, now, ttl_ms)) {
        lost.push_back(session);
        continue;
      }
      renewed.push_back(std::to_string((*s)->key));
    }
    if (renewed.empty()) return Status::Ok();
    return t
        .Exec("UPDATE sessions SET owner_expires_ms=$1 WHERE key = ANY($2::bigint[])",
              {now + ttl_ms, "{" + Join(renewed) + "}"})
        .status();
  });
}

Status PostgresEventLog::ReleaseOwnership(const SessionId& session, std::uint64_t generation) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  return RunControl<bool>(
             session,
             [&](Txn& t, bool&) -> Status {
               AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
               store_internal::SessionState state = s->state;
               AS_RETURN_IF_ERROR(store_internal::ReleaseOwnership(state, session, generation));
               s->state.owner = state.owner;
               return t.StoreOwner(*s);
             })
      .status();
}

Result<OwnerLease> PostgresEventLog::GetOwnership(const SessionId& session) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  return WithReader<OwnerLease>([&](Conn& conn) -> Result<OwnerLease> {
    AS_ASSIGN_OR_RETURN(Rows r,
                        conn.Exec("SELECT owner, owner_generation, owner_expires_ms, " +
                                      std::string(pg::kServerNowMs) + " FROM sessions WHERE id=$1",
                                  {session.str()}));
    if (r.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
    return OwnerLease{r.Text(0, 0), static_cast<std::uint64_t>(r.Int(0, 1)), r.Int(0, 2),
                      r.Int(0, 3)};
  });
}

Result<std::vector<std::pair<SessionId, OwnerLease>>> PostgresEventLog::ListExpiredOwnerships(
    std::size_t limit) {
  using Expired = std::vector<std::pair<SessionId, OwnerLease>>;
  return WithReader<Expired>([&](Conn& conn) -> Result<Expired> {
    AS_ASSIGN_OR_RETURN(Rows now_row, conn.Exec(pg::ServerNowSql()));
    const TimestampMs now = now_row.Int(0, 0);
    AS_ASSIGN_OR_RETURN(
        Rows r,
        conn.Exec("SELECT id, owner, owner_generation, owner_expires_ms FROM sessions WHERE "
                  "owner <> '' AND owner_expires_ms <= $1 ORDER BY owner_expires_ms LIMIT $2",
                  {now, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000))}));
    Expired out;
    for (int i = 0; i < r.size(); ++i) {
      out.emplace_back(
          SessionId(r.Text(i, 0)),
          OwnerLease{r.Text(i, 1), static_cast<std::uint64_t>(r.Int(i, 2)), r.Int(i, 3), now});
    }
    return out;
  });
}

Result<std::vector<OwnershipRecord>> PostgresEventLog::OwnershipHistory(const SessionId& session) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  using History = std::vector<OwnershipRecord>;
  return WithReader<History>([&](Conn& conn) -> Result<History> {
    AS_ASSIGN_OR_RETURN(Rows known,
                        conn.Exec("SELECT 1 FROM sessions WHERE id=$1", {session.str()}));
    if (known.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT generation, owner, granted_ms, epoch, seq FROM "
                                          "owner_history WHERE session=$1 ORDER BY generation",
                                          {session.str()}));
    History out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(OwnershipRecord{static_cast<std::uint64_t>(r.Int(i, 0)), r.Text(i, 1),
                                    r.Int(i, 2), Cursor{Epoch(r.Int(i, 3)), Seq(r.Int(i, 4))}});
    }
    return out;
  });
}

Status PostgresEventLog::Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(CheckText({{"a daemon id", self.id},
                                {"a daemon url", self.url},
                                {"a host", self.host},
                                {"a data directory", self.data_dir}}));
  return RunControl<bool>([&](Txn& t, bool&) -> Status {
           AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
           AS_ASSIGN_OR_RETURN(Rows r,
                               t.Exec("SELECT url, host, data_dir, started_ms, heartbeat_ms FROM "
                                      "daemons WHERE id=$1 FOR UPDATE",
                                      {self.id}));
           DaemonRecord stored;
           if (r.size() > 0)
             stored = DaemonRecord{self.id,     r.Text(0, 0), r.Text(0, 1), r.Text(0, 2),
                                   r.Int(0, 3), r.Int(0, 4),  now};
           AS_RETURN_IF_ERROR(store_internal::CheckDaemonIdentity(stored, self, now, ttl_ms));
           return t
               .Exec(
                   "INSERT INTO daemons(id, url, host, data_dir, started_ms, heartbeat_ms) "
                   "VALUES($1,$2,$3,$4,$5,$6) ON CONFLICT (id) DO UPDATE SET "
                   "url=excluded.url, host=excluded.host, data_dir=excluded.data_dir, "
                   "started_ms=excluded.started_ms, heartbeat_ms=excluded.heartbeat_ms",
                   {self.id, self.url, self.host, self.data_dir, self.started_ms, now})
               .status();
         })
      .status();
}

Result<std::optional<DaemonRecord>> PostgresEventLog::GetDaemon(const std::string& id) {
  AS_RETURN_IF_ERROR(CheckText({{"a daemon id", id}}));
  using Found = std::optional<DaemonRecord>;
  return WithReader<Found>([&](Conn& conn) -> Result<Found> {
    AS_ASSIGN_OR_RETURN(Rows r,
                        conn.Exec("SELECT url, host, data_dir, started_ms, heartbeat_ms, " +
                                      std::string(pg::kServerNowMs) + " FROM daemons WHERE id=$1",
                                  {id}));
    if (r.size() == 0) return Found();
    return Found(DaemonRecord{id, r.Text(0, 0), r.Text(0, 1), r.Text(0, 2), r.Int(0, 3),
                              r.Int(0, 4), r.Int(0, 5)});
  });
}

Result<std::string> PostgresEventLog::SharedSecret(const std::string& name,
                                                   const std::string& candidate) {
  AS_RETURN_IF_ERROR(CheckText({{"a secret's name", name}, {"a secret", candidate}}));
  return RunControl<std::string>([&](Txn& t, std::string& out) -> Status {
    AS_RETURN_IF_ERROR(
        t.Exec("INSERT INTO secrets(name, value) VALUES($1,$2) ON CONFLICT (name) DO NOTHING",
               {name, candidate})
            .status());
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("SELECT value FROM secrets WHERE name=$1", {name}));
    if (r.size() == 0) return Error(ErrorCode::kInternal, "secret " + name + " vanished");
    out = r.Text(0, 0);
    return Status::Ok();
  });
}

}  // namespace agentstream::pg
