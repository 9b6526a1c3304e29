// The PostgreSQL log's sessions, their metadata and checkpoints: creating, forking and rewinding
// a session in the writer's batch, and the reads of sessions, events and checkpoints, each on a
// reader connection in a snapshot of its own (snapshot.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pg/pg.h"
#include "store/log_state.h"
#include "store/postgres/postgres_log_impl.h"
#include "store/postgres/snapshot.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"
#include "store/snapshot_read.h"

namespace agentstream::pg {

namespace {

Status CheckMeta(const SessionId& id, const SessionMeta& meta) {
  return CheckText({{"a session id", id.str()},
                    {"a provider", meta.provider},
                    {"a cwd", meta.cwd},
                    {"a title", meta.title},
                    {"a persistence handle", meta.persistence_handle},
                    {"a status snapshot", meta.status_snapshot}});
}

}  // namespace

Result<AppendResult> PostgresEventLog::CreateSession(const SessionId& id, SessionMeta meta,
                                                     std::vector<NewEvent> initial) {
  if (id.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(CheckMeta(id, meta));
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  return RunControl<AppendResult>(
      id, [&](Txn& t, AppendResult& out) -> Status {  // a copy of meta: the batch may run again
        AS_ASSIGN_OR_RETURN(Txn::Session * s, t.InsertSession(id, meta, std::nullopt));
        return AppendInitial(t, id, *s, initial, out);
      });
}

Result<AppendResult> PostgresEventLog::Fork(const SessionId& parent, Cursor at,
                                            const SessionId& child, SessionMeta meta,
                                            std::vector<NewEvent> initial) {
  if (child.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(CheckMeta(child, meta));
  AS_RETURN_IF_ERROR(CheckText({{"a session id", parent.str()}}));
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  // On the parent's writer, after the parent's appends queued before it.
  return RunControl<AppendResult>(parent, [&](Txn& t, AppendResult& out) -> Status {
    AS_ASSIGN_OR_RETURN(Txn::Session * p, t.Load(parent));
    AS_RETURN_IF_ERROR(store_internal::CheckPrefix(p->state, parent, at));
    AS_ASSIGN_OR_RETURN(Txn::Session * s,
                        t.InsertSession(child, meta, HistoryBase{parent, at.epoch, at.seq}));
    return AppendInitial(t, child, *s, initial, out);
  });
}

Result<AppendResult> PostgresEventLog::Rewind(const SessionId& session, Cursor to,
                                              std::vector<NewEvent> initial) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", session.str()}}));
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  return RunControl<AppendResult>(session, [&](Txn& t, AppendResult& out) -> Status {
    AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
    AS_RETURN_IF_ERROR(store_internal::CheckPrefix(s->state, session, to));
    AS_RETURN_IF_ERROR(t.StartEpoch(*s, HistoryBase{session, to.epoch, to.seq}));
    return AppendInitial(t, session, *s, initial, out);
  });
}

Status PostgresEventLog::AppendInitial(Txn& t, const SessionId& id, Txn::Session& s,
                                       const std::vector<NewEvent>& initial, AppendResult& out) {
  auto& epoch = s.state.epochs.back();
  out = AppendResult{s.state.current(), epoch.tail.next(), Seq(epoch.tail.value() + initial.size()),
                     false};
  t.InsertEvents(s.key, out.epoch, out.first_seq, initial);
  if (auto meta = store_internal::MetaAfter(s.state.meta, initial))
    AS_RETURN_IF_ERROR(t.StoreMeta(s, std::move(*meta)));
  epoch.tail = out.last_seq;
  t.Touch(id, out.epoch, epoch.tail);
  return Status::Ok();
}

Result<SessionInfo> PostgresEventLog::GetSession(const SessionId& id) {
  return WithReader<SessionInfo>([&](Conn& conn) -> Result<SessionInfo> {
    Snapshot snap(conn);
    return SessionOf(snap, id);
  });
}

Result<std::vector<SessionInfo>> PostgresEventLog::ListSessions(const std::string& after,
                                                                std::size_t limit) {
  return WithReader<std::vector<SessionInfo>>([&](Conn& conn) -> Result<std::vector<SessionInfo>> {
    Snapshot snap(conn);
    AS_ASSIGN_OR_RETURN(
        Rows ids,
        snap.Exec({"SELECT id FROM sessions WHERE id > $1 ORDER BY id LIMIT $2",
                   {after, static_cast<std::int64_t>(std::min<std::size_t>(limit, 100000))}}));
    std::vector<SessionInfo> out;
    for (int i = 0; i < ids.size(); ++i) {
      AS_ASSIGN_OR_RETURN(SessionInfo info, SessionOf(snap, SessionId(ids.Text(i, 0))));
      out.push_back(std::move(info));
    }
    return out;
  });
}

Result<SessionInfo> PostgresEventLog::SessionOf(Snapshot& snap, const SessionId& id) {
  AS_ASSIGN_OR_RETURN(auto session, snap.Session(id));
  AS_ASSIGN_OR_RETURN(auto base, snap.Base(session.key, session.current));
  AS_ASSIGN_OR_RETURN(Seq tail,
                      snap.TailOf(session.key, session.current, base ? base->seq : Seq(0)));
  return SessionInfo{id,   std::move(session.meta), session.current,
                     tail, session.forked_from,     std::move(session.owner)};
}

Status PostgresEventLog::UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) {
  AS_RETURN_IF_ERROR(CheckText({{"a session id", id.str()},
                                {"a persistence handle", update.persistence_handle.value_or("")},
                                {"a status snapshot", update.status_snapshot.value_or("")}}));
  return RunControl<bool>(id,
                          [&](Txn& t, bool&) -> Status {
                            AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(id));
                            AS_RETURN_IF_ERROR(
                                store_internal::CheckOwner(s->state, id, update.owner_generation));
                            AS_RETURN_IF_ERROR(
                                t.Exec("UPDATE sessions SET persistence=coalesce($1, persistence), "
                                       "status=coalesce($2, status) WHERE key=$3",
                                       {update.persistence_handle, update.status_snapshot, s->key})
                                    .status());
                            SessionMeta& meta = s->state.meta;
                            if (update.persistence_handle)
                              meta.persistence_handle = *update.persistence_handle;
                            if (update.status_snapshot)
                              meta.status_snapshot = *update.status_snapshot;
                            // Announced like a commit, so that the other daemons see the new status
                            // at once.
                            t.Touch(id, s->state.current(), s->state.epochs.back().tail);
                            return Status::Ok();
                          })
      .status();
}

Result<ReadResult> PostgresEventLog::Read(const ReadRequest& request) {
  return WithReader<ReadResult>([&](Conn& conn) -> Result<ReadResult> {
    Snapshot snap(conn);
    return store_internal::ReadThrough(snap, request, options_.limits,
                                       [](const SessionId&, Epoch, Seq committed) {
                                         return committed;  // COMMIT returns once durable
                                       });
  });
}

Result<Cursor> PostgresEventLog::Tail(const SessionId& session) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, GetSession(session));
  return Cursor{info.epoch, info.tail};
}

Status PostgresEventLog::SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) {
  AS_RETURN_IF_ERROR(
      CheckText({{"a session id", session.str()}, {"a checkpoint", checkpoint.body}}));
  return RunControl<bool>(
             session,
             [&](Txn& t, bool&) -> Status {
               AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(session));
               AS_RETURN_IF_ERROR(
                   store_internal::CheckCheckpoint(s->state, session, checkpoint, options_.limits));
               return t
                   .Exec(
                       "INSERT INTO checkpoints(session, epoch, seq, body) VALUES($1,$2,$3,$4) "
                       "ON CONFLICT (session) DO UPDATE SET epoch=excluded.epoch, "
                       "seq=excluded.seq, body=excluded.body",
                       {session.str(), static_cast<std::int64_t>(checkpoint.epoch.value()),
                        static_cast<std::int64_t>(checkpoint.seq.value()), checkpoint.body})
                   .status();
             })
      .status();
}

Result<std::optional<Checkpoint>> PostgresEventLog::LoadCheckpoint(const SessionId& session) {
  return WithReader<std::optional<Checkpoint>>(
      [&](Conn& conn) -> Result<std::optional<Checkpoint>> {
        AS_ASSIGN_OR_RETURN(Rows r,
                            conn.Exec("SELECT c.epoch, c.seq, c.body FROM sessions s LEFT JOIN "
                                      "checkpoints c ON c.session = s.id WHERE s.id = $1",
                                      {session.str()}));
        if (r.size() == 0) return Error(ErrorCode::kNotFound, "no session " + session.str());
        if (r.IsNull(0, 0)) return std::optional<Checkpoint>();
        return std::optional<Checkpoint>(Checkpoint{Epoch(static_cast<std::uint64_t>(r.Int(0, 0))),
                                                    Seq(static_cast<std::uint64_t>(r.Int(0, 1))),
                                                    r.Text(0, 2)});
      });
}

}  // namespace agentstream::pg
