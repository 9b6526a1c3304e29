// The SQLite log's sessions, their metadata and checkpoints: creating, forking and rewinding a
// session on the writer thread, and the reads of sessions, events and checkpoints, which the
// reader pool answers (sqlite_reader.h).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlite/db.h"
#include "store/log_state.h"
#include "store/sqlite/sqlite_log_impl.h"
#include "store/sqlite/sqlite_writer.h"

namespace agentstream::sqlite {

Result<AppendResult> SqliteEventLog::CreateSession(const SessionId& id, SessionMeta meta,
                                                   std::vector<NewEvent> initial) {
  if (id.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  return RunControl<AppendResult>(
      [&, meta = std::move(meta)](Writer& w, AppendResult& out) mutable -> Status {
        auto existing = w.Load(id);
        if (existing.ok())
          return Error(ErrorCode::kAlreadyExists, "session " + id.str() + " exists");
        if (existing.status().code() != ErrorCode::kNotFound) return existing.status();
        AS_ASSIGN_OR_RETURN(Writer::Cached * cached,
                            w.InsertSession(id, std::move(meta), std::nullopt));
        return AppendInitial(w, id, *cached, initial, out);
      });
}

Result<AppendResult> SqliteEventLog::Fork(const SessionId& parent, Cursor at,
                                          const SessionId& child, SessionMeta meta,
                                          std::vector<NewEvent> initial) {
  if (child.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  return RunControl<AppendResult>(
      [&, meta = std::move(meta)](Writer& w, AppendResult& out) mutable -> Status {
        AS_ASSIGN_OR_RETURN(Writer::Cached * p, w.Load(parent));
        AS_RETURN_IF_ERROR(store_internal::CheckPrefix(p->state, parent, at));
        auto existing = w.Load(child);
        if (existing.ok())
          return Error(ErrorCode::kAlreadyExists, "session " + child.str() + " exists");
        if (existing.status().code() != ErrorCode::kNotFound) return existing.status();
        AS_ASSIGN_OR_RETURN(
            Writer::Cached * cached,
            w.InsertSession(child, std::move(meta), HistoryBase{parent, at.epoch, at.seq}));
        return AppendInitial(w, child, *cached, initial, out);
      });
}

Result<AppendResult> SqliteEventLog::Rewind(const SessionId& session, Cursor to,
                                            std::vector<NewEvent> initial) {
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, options_.limits, true));
  return RunControl<AppendResult>([&](Writer& w, AppendResult& out) -> Status {
    AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
    AS_RETURN_IF_ERROR(store_internal::CheckPrefix(cached->state, session, to));
    AS_RETURN_IF_ERROR(w.StartEpoch(*cached, HistoryBase{session, to.epoch, to.seq}));
    return AppendInitial(w, session, *cached, initial, out);
  });
}

Status SqliteEventLog::AppendInitial(Writer& w, const SessionId& id, Writer::Cached& cached,
                                     const std::vector<NewEvent>& initial, AppendResult& out) {
  auto& epoch = cached.state.epochs.back();
  out = AppendResult{cached.state.current(), epoch.tail.next(),
                     Seq(epoch.tail.value() + initial.size()), false};
  AS_RETURN_IF_ERROR(w.InsertEvents(cached.key, out.epoch, out.first_seq, initial));
  if (auto meta = store_internal::MetaAfter(cached.state.meta, initial))
    AS_RETURN_IF_ERROR(w.StoreMeta(cached, std::move(*meta)));
  epoch.tail = out.last_seq;
  w.Touch(id, out.epoch, Seq(out.first_seq.value() - 1), epoch.tail);
  return Status::Ok();
}

Result<SessionInfo> SqliteEventLog::GetSession(const SessionId& id) {
  return readers_.GetSession(id);
}

Result<std::vector<SessionInfo>> SqliteEventLog::ListSessions(const std::string& after,
                                                              std::size_t limit) {
  return readers_.ListSessions(after, limit);
}

Status SqliteEventLog::UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) {
  return RunControl<bool>([&](Writer& w, bool&) -> Status {
           AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(id));
           AS_RETURN_IF_ERROR(
               store_internal::CheckOwner(cached->state, id, update.owner_generation));
           AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("UPDATE sessions SET "
                                                      "persistence=coalesce(?, persistence), "
                                                      "status=coalesce(?, status) WHERE key=?"));
           auto bind = [&](int i, const std::optional<std::string>& v) {
             if (v)
               s.Bind(i, *v);
             else
               s.BindNull(i);
           };
           bind(1, update.persistence_handle);
           bind(2, update.status_snapshot);
           s.Bind(3, cached->key);
           AS_RETURN_IF_ERROR(w.Check(s.Exec()));
           SessionMeta& meta = cached->state.meta;
           if (update.persistence_handle) meta.persistence_handle = *update.persistence_handle;
           if (update.status_snapshot) meta.status_snapshot = *update.status_snapshot;
           return Status::Ok();
         })
      .status();
}

Result<ReadResult> SqliteEventLog::Read(const ReadRequest& request) {
  return readers_.Read(request);
}

Result<Cursor> SqliteEventLog::Tail(const SessionId& session) { return readers_.Tail(session); }

Status SqliteEventLog::SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) {
  return RunControl<bool>([&](Writer& w, bool&) -> Status {
           AS_ASSIGN_OR_RETURN(Writer::Cached * cached, w.Load(session));
           AS_RETURN_IF_ERROR(store_internal::CheckCheckpoint(cached->state, session, checkpoint,
                                                              options_.limits));
           AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("INSERT OR REPLACE INTO "
                                                      "checkpoints(session, epoch, seq, body) "
                                                      "VALUES(?,?,?,?)"));
           s.Bind(1, session.str())
               .Bind(2, static_cast<std::int64_t>(checkpoint.epoch.value()))
               .Bind(3, static_cast<std::int64_t>(checkpoint.seq.value()))
               .Bind(4, checkpoint.body);
           return w.Check(s.Exec());
         })
      .status();
}

Result<std::optional<Checkpoint>> SqliteEventLog::LoadCheckpoint(const SessionId& session) {
  return readers_.LoadCheckpoint(session);
}

}  // namespace agentstream::sqlite
