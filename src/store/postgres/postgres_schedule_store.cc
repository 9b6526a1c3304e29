#include "store/postgres/postgres_schedule_store.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "store/postgres/sql.h"
#include "store/schedule_rows.h"

namespace agentstream::pg {

namespace {

using store_internal::ScheduleNotFound;

using store_internal::kFiringColumns;
using store_internal::kScheduleColumns;

ScheduleRecord ScheduleOf(const Rows& r, int row) {
  return ScheduleRecord{r.Text(row, 0), r.Text(row, 1), r.Text(row, 2) == "t",
                        r.Int(row, 3),  r.Int(row, 4),  r.Int(row, 5),
                        r.Int(row, 6),  r.Text(row, 7), r.Int(row, 8)};
}

ScheduleFiring FiringOf(const Rows& r, int row) {
  return ScheduleFiring{r.Text(row, 0), r.Int(row, 1),  r.Int(row, 2),  r.Int(row, 3),
                        r.Int(row, 4),  r.Text(row, 5), r.Text(row, 6), r.Text(row, 7),
                        r.Text(row, 8), r.Text(row, 9)};
}

// The schedule `id`, or kNotFound; through `sql`, a reader's Conn or the writer's Txn (where a
// failure is the batch's).
template <class Sql>
Result<ScheduleRecord> LoadSchedule(Sql& sql, const std::string& id) {
  AS_ASSIGN_OR_RETURN(
      Rows r,
      sql.Exec(std::string("SELECT ") + kScheduleColumns + " FROM schedules WHERE id=$1", {id}));
  if (r.size() == 0) return ScheduleNotFound(id);
  return ScheduleOf(r, 0);
}

// After a statement on schedule `id` changed nothing: kNotFound when there is no such schedule,
// `otherwise` when there is.
Status Unchanged(Txn& t, const std::string& id, Status otherwise) {
  AS_RETURN_IF_ERROR(LoadSchedule(t, id).status());
  return otherwise;
}

}  // namespace

template <class Body>
Status PostgresScheduleStore::Write(Body body) {
  return queue_.RunControl<bool>([&](Txn& t, bool&) -> Status { return body(t); }).status();
}

Status PostgresScheduleStore::AddSchedule(const ScheduleRecord& s) {
  AS_RETURN_IF_ERROR(store_internal::CheckScheduleRow(s));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec(std::string("INSERT INTO schedules(") + kScheduleColumns +
                                           ") VALUES($1,$2,$3,$4,$5,$6,0,'',0) ON CONFLICT (id) "
                                           "DO NOTHING",
                                       {s.id, s.definition, s.paused ? "true" : "false",
                                        s.created_ms, s.updated_ms, s.last_tick_ms}));
    if (r.Affected() == 0) return store_internal::ScheduleExists(s.id);
    return Status::Ok();
  });
}

Result<std::vector<ScheduleRecord>> PostgresScheduleStore::ListSchedules() {
  using Schedules = std::vector<ScheduleRecord>;
  return WithReader<Schedules>(readers_, [&](Conn& conn) -> Result<Schedules> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(std::string("SELECT ") + kScheduleColumns +
                                          " FROM schedules ORDER BY id"));
    Schedules out;
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i) out.push_back(ScheduleOf(r, i));
    return out;
  });
}

Result<ScheduleRecord> PostgresScheduleStore::GetSchedule(const std::string& id) {
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return WithReader<ScheduleRecord>(readers_, [&](Conn& conn) { return LoadSchedule(conn, id); });
}

Status PostgresScheduleStore::SetSchedulePaused(const std::string& id, bool paused,
                                                TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("UPDATE schedules SET paused=$2, updated_ms=$3, "
                                       "last_tick_ms=CASE WHEN $2 THEN last_tick_ms ELSE "
                                       "greatest(last_tick_ms, $3) END WHERE id=$1 AND "
                                       "paused<>$2",
                                       {id, paused ? "true" : "false", now_ms}));
    return r.Affected() != 0 ? Status::Ok() : Unchanged(t, id, Status::Ok());
  });
}

Status PostgresScheduleStore::DeleteSchedule(const std::string& id) {
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("DELETE FROM schedules WHERE id=$1", {id}));
    if (r.Affected() == 0) return ScheduleNotFound(id);
    return t.Exec("DELETE FROM schedule_firings WHERE schedule_id=$1", {id}).status();
  });
}

Result<ScheduleRecord> PostgresScheduleStore::ClaimSchedule(const std::string& id,
                                                            const std::string& owner,
                                                            TimestampMs now_ms,
                                                            std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseClaim(owner, ttl_ms));
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return queue_.RunControl<ScheduleRecord>([&](Txn& t, ScheduleRecord& out) -> Status {
    // One statement: a concurrent claim waits for this row's lock, then finds the lease taken.
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec(std::string("UPDATE schedules SET lease_owner=$2, "
                                                   "lease_expires_ms=$3 WHERE id=$1 AND "
                                                   "(lease_owner='' OR lease_expires_ms<=$4 OR "
                                                   "lease_owner=$2) RETURNING ") +
                                           kScheduleColumns,
                                       {id, owner, now_ms + ttl_ms, now_ms}));
    if (r.size() != 0) {
      out = ScheduleOf(r, 0);
      return Status::Ok();
    }
    AS_ASSIGN_OR_RETURN(ScheduleRecord held, LoadSchedule(t, id));
    return store_internal::ScheduleLeasedToAnother(id, held.lease_owner, held.lease_expires_ms);
  });
}

Status PostgresScheduleStore::AdvanceSchedule(const std::string& id, const std::string& owner,
                                              TimestampMs last_tick_ms, TimestampMs pending_tick_ms,
                                              const std::vector<ScheduleFiring>& firings) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseOwner(owner));
  AS_RETURN_IF_ERROR(store_internal::CheckFirings(id, firings));
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return Write([&](Txn& t) -> Status {
    // First, so that it holds the row's lock: no claim lands between the check and the writes.
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("UPDATE schedules SET last_tick_ms=greatest(last_tick_ms, "
                                       "$3), pending_tick_ms=$4 WHERE id=$1 AND lease_owner=$2",
                                       {id, owner, last_tick_ms, pending_tick_ms}));
    if (r.Affected() == 0) return Unchanged(t, id, store_internal::ScheduleLeaseLost(id, owner));
    for (const ScheduleFiring& f : firings) {
      AS_RETURN_IF_ERROR(t.Exec(std::string("INSERT INTO schedule_firings(") + kFiringColumns +
                                    ") VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT "
                                    "(schedule_id, tick_ms) DO NOTHING",
                                {f.schedule_id, f.tick_ms, f.first_tick_ms, f.ticks, f.recorded_ms,
                                 f.outcome, f.agent, f.client_message_id, f.turn_id, f.detail})
                             .status());
    }
    return t
        .Exec(
            "DELETE FROM schedule_firings WHERE schedule_id=$1 AND tick_ms<(SELECT tick_ms FROM "
            "schedule_firings WHERE schedule_id=$1 ORDER BY tick_ms DESC LIMIT 1 OFFSET $2)",
            {id, static_cast<std::int64_t>(kKeptFirings) - 1})
        .status();
  });
}

Status PostgresScheduleStore::ReleaseSchedule(const std::string& id, const std::string& owner) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseOwner(owner));
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("UPDATE schedules SET lease_owner='', lease_expires_ms=0 "
                                       "WHERE id=$1 AND lease_owner=$2",
                                       {id, owner}));
    return r.Affected() != 0 ? Status::Ok() : Unchanged(t, id, Status::Ok());
  });
}

Result<std::vector<ScheduleFiring>> PostgresScheduleStore::ListFirings(const std::string& id,
                                                                       std::size_t limit) {
  AS_RETURN_IF_ERROR(CheckText({{"a schedule id", id}}));
  constexpr std::size_t kMaxLimit = std::numeric_limits<std::int64_t>::max();
  using Firings = std::vector<ScheduleFiring>;
  return WithReader<Firings>(readers_, [&](Conn& conn) -> Result<Firings> {
    AS_ASSIGN_OR_RETURN(
        Rows r,
        conn.Exec(std::string("SELECT ") + kFiringColumns +
                      " FROM schedule_firings WHERE schedule_id=$1 "
                      "ORDER BY tick_ms DESC LIMIT $2",
                  {id, static_cast<std::int64_t>(std::min<std::size_t>(limit, kMaxLimit))}));
    Firings out;
    for (int i = 0; i < r.size(); ++i) out.push_back(FiringOf(r, i));
    return out;
  });
}

}  // namespace agentstream::pg
