#include "store/sqlite/sqlite_schedule_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "store/schedule_rows.h"

namespace agentstream::sqlite {

namespace {

using store_internal::ScheduleNotFound;

using store_internal::kFiringColumns;
using store_internal::kScheduleColumns;
// A LIMIT that SQLite's 64-bit integer holds.
constexpr std::size_t kMaxLimit = std::numeric_limits<std::int64_t>::max();

ScheduleRecord ScheduleOf(const Stmt& s) {
  return ScheduleRecord{s.Text(0), s.Text(1), s.Int(2) != 0, s.Int(3), s.Int(4),
                        s.Int(5),  s.Int(6),  s.Text(7),     s.Int(8)};
}

ScheduleFiring FiringOf(const Stmt& s) {
  return ScheduleFiring{s.Text(0), s.Int(1),  s.Int(2),  s.Int(3),  s.Int(4),
                        s.Text(5), s.Text(6), s.Text(7), s.Text(8), s.Text(9)};
}

// The schedules `where` selects (with `bind` binding its parameters), by id.
template <class Bind>
Result<std::vector<ScheduleRecord>> SelectSchedules(Db& db, const std::string& where, Bind bind) {
  AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kScheduleColumns +
                                         " FROM schedules " + where + " ORDER BY id"));
  bind(s);
  std::vector<ScheduleRecord> out;
  while (true) {
    AS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ScheduleOf(s));
  }
  return out;
}

// The schedule `id`, or kNotFound.
Result<ScheduleRecord> LoadSchedule(Db& db, const std::string& id) {
  AS_ASSIGN_OR_RETURN(auto found,
                      SelectSchedules(db, "WHERE id=?", [&](Stmt& s) { s.Bind(1, id); }));
  if (found.empty()) return ScheduleNotFound(id);
  return std::move(found.front());
}

// Runs a statement that changes the row of schedule `id` (its parameter 1) in the writer's batch;
// true when it changed it.
template <class Bind>
Result<bool> ChangeSchedule(Writer& w, const std::string& id, const std::string& sql, Bind bind) {
  AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare(sql));
  s.Bind(1, id);
  bind(s);
  AS_RETURN_IF_ERROR(w.Check(s.Exec()));
  return sqlite3_changes(w.db().raw()) != 0;
}

// After an UPDATE of schedule `id` changed nothing: kNotFound when there is no such schedule,
// `otherwise` when there is.
Status Unchanged(Writer& w, const std::string& id, Status otherwise) {
  AS_RETURN_IF_ERROR(LoadSchedule(w.db(), id).status());
  return otherwise;
}

Status InsertFiring(Writer& w, const ScheduleFiring& f) {
  AS_ASSIGN_OR_RETURN(Stmt s,
                      w.db().Prepare(std::string("INSERT INTO schedule_firings(") + kFiringColumns +
                                     ") VALUES(?,?,?,?,?,?,?,?,?,?) ON CONFLICT "
                                     "(schedule_id, tick_ms) DO NOTHING"));
  s.Bind(1, f.schedule_id).Bind(2, f.tick_ms).Bind(3, f.first_tick_ms).Bind(4, f.ticks);
  s.Bind(5, f.recorded_ms).Bind(6, f.outcome).Bind(7, f.agent).Bind(8, f.client_message_id);
  s.Bind(9, f.turn_id).Bind(10, f.detail);
  return w.Check(s.Exec());
}

}  // namespace

template <class Body>
Status SqliteScheduleStore::Write(Body body) {
  return queue_.RunControl<bool>([&](Writer& w, bool&) -> Status { return body(w); }).status();
}

Status SqliteScheduleStore::AddSchedule(const ScheduleRecord& schedule) {
  AS_RETURN_IF_ERROR(store_internal::CheckScheduleRow(schedule));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(Stmt s,
                        w.db().Prepare(std::string("INSERT INTO schedules(") + kScheduleColumns +
                                       ") VALUES(?,?,?,?,?,?,0,'',0) ON CONFLICT (id) DO "
                                       "NOTHING"));
    s.Bind(1, schedule.id).Bind(2, schedule.definition).Bind(3, schedule.paused ? 1 : 0);
    s.Bind(4, schedule.created_ms).Bind(5, schedule.updated_ms).Bind(6, schedule.last_tick_ms);
    AS_RETURN_IF_ERROR(w.Check(s.Exec()));
    if (sqlite3_changes(w.db().raw()) == 0) return store_internal::ScheduleExists(schedule.id);
    return Status::Ok();
  });
}

Result<std::vector<ScheduleRecord>> SqliteScheduleStore::ListSchedules() {
  using Schedules = std::vector<ScheduleRecord>;
  return readers_.Query<Schedules>([&](Db& db) { return SelectSchedules(db, "", [](Stmt&) {}); });
}

Result<ScheduleRecord> SqliteScheduleStore::GetSchedule(const std::string& id) {
  return readers_.Query<ScheduleRecord>([&](Db& db) { return LoadSchedule(db, id); });
}

Status SqliteScheduleStore::SetSchedulePaused(const std::string& id, bool paused,
                                              TimestampMs now_ms) {
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(
        bool changed, ChangeSchedule(w, id,
                                     "UPDATE schedules SET paused=?2, updated_ms=?3, "
                                     "last_tick_ms=CASE WHEN ?2=0 THEN max(last_tick_ms, ?3) "
                                     "ELSE last_tick_ms END WHERE id=?1 AND paused<>?2",
                                     [&](Stmt& s) { s.Bind(2, paused ? 1 : 0).Bind(3, now_ms); }));
    return changed ? Status::Ok() : Unchanged(w, id, Status::Ok());
  });
}

Status SqliteScheduleStore::DeleteSchedule(const std::string& id) {
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(bool deleted,
                        ChangeSchedule(w, id, "DELETE FROM schedules WHERE id=?1", [](Stmt&) {}));
    if (!deleted) return ScheduleNotFound(id);
    AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("DELETE FROM schedule_firings WHERE schedule_id=?"));
    s.Bind(1, id);
    return w.Check(s.Exec());
  });
}

Result<ScheduleRecord> SqliteScheduleStore::ClaimSchedule(const std::string& id,
                                                          const std::string& owner,
                                                          TimestampMs now_ms, std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseClaim(owner, ttl_ms));
  return queue_.RunControl<ScheduleRecord>([&](Writer& w, ScheduleRecord& out) -> Status {
    AS_ASSIGN_OR_RETURN(
        Stmt s, w.db().Prepare(std::string("UPDATE schedules SET lease_owner=?2, "
                                           "lease_expires_ms=?3 WHERE id=?1 AND (lease_owner='' "
                                           "OR lease_expires_ms<=?4 OR lease_owner=?2) "
                                           "RETURNING ") +
                               kScheduleColumns));
    s.Bind(1, id).Bind(2, owner).Bind(3, now_ms + ttl_ms).Bind(4, now_ms);
    Result<bool> granted = s.Step();
    AS_RETURN_IF_ERROR(w.Check(granted.status()));
    if (*granted) {
      out = ScheduleOf(s);
      return Status::Ok();
    }
    AS_ASSIGN_OR_RETURN(ScheduleRecord held, LoadSchedule(w.db(), id));
    return store_internal::ScheduleLeasedToAnother(id, held.lease_owner, held.lease_expires_ms);
  });
}

Status SqliteScheduleStore::AdvanceSchedule(const std::string& id, const std::string& owner,
                                            TimestampMs last_tick_ms, TimestampMs pending_tick_ms,
                                            const std::vector<ScheduleFiring>& firings) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseOwner(owner));
  AS_RETURN_IF_ERROR(store_internal::CheckFirings(id, firings));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(bool held, ChangeSchedule(w, id,
                                                  "UPDATE schedules SET last_tick_ms=max("
                                                  "last_tick_ms, ?3), pending_tick_ms=?4 WHERE "
                                                  "id=?1 AND lease_owner=?2",
                                                  [&](Stmt& s) {
                                                    s.Bind(2, owner).Bind(3, last_tick_ms);
                                                    s.Bind(4, pending_tick_ms);
                                                  }));
    if (!held) return Unchanged(w, id, store_internal::ScheduleLeaseLost(id, owner));
    for (const ScheduleFiring& firing : firings) AS_RETURN_IF_ERROR(InsertFiring(w, firing));
    AS_ASSIGN_OR_RETURN(Stmt trim, w.db().Prepare("DELETE FROM schedule_firings WHERE "
                                                  "schedule_id=?1 AND tick_ms<(SELECT tick_ms "
                                                  "FROM schedule_firings WHERE schedule_id=?1 "
                                                  "ORDER BY tick_ms DESC LIMIT 1 OFFSET ?2)"));
    trim.Bind(1, id).Bind(2, static_cast<std::int64_t>(kKeptFirings) - 1);
    return w.Check(trim.Exec());
  });
}

Status SqliteScheduleStore::ReleaseSchedule(const std::string& id, const std::string& owner) {
  AS_RETURN_IF_ERROR(store_internal::CheckLeaseOwner(owner));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(bool released,
                        ChangeSchedule(w, id,
                                       "UPDATE schedules SET lease_owner='', lease_expires_ms=0 "
                                       "WHERE id=?1 AND lease_owner=?2",
                                       [&](Stmt& s) { s.Bind(2, owner); }));
    return released ? Status::Ok() : Unchanged(w, id, Status::Ok());
  });
}

Result<std::vector<ScheduleFiring>> SqliteScheduleStore::ListFirings(const std::string& id,
                                                                     std::size_t limit) {
  using Firings = std::vector<ScheduleFiring>;
  return readers_.Query<Firings>([&](Db& db) -> Result<Firings> {
    AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kFiringColumns +
                                           " FROM schedule_firings WHERE schedule_id=? ORDER BY "
                                           "tick_ms DESC LIMIT ?"));
    s.Bind(1, id).Bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, kMaxLimit)));
    Firings out;
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(FiringOf(s));
    }
    return out;
  });
}

}  // namespace agentstream::sqlite
