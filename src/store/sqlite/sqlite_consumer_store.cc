#include "store/sqlite/sqlite_consumer_store.h"

#include <sqlite3.h>

#include <utility>

#include "store/log_state.h"

namespace agentstream::sqlite {

namespace {

// The stored position of (consumer, session), or nullopt.
Result<std::optional<ConsumerPosition>> LoadPosition(Db& db, const ConsumerId& consumer,
                                                     const SessionId& session) {
  AS_ASSIGN_OR_RETURN(
      Stmt s,
      db.Prepare("SELECT epoch, seq, lease_owner, generation, lease_expires_ms, adapter_state "
                 "FROM consumer_positions WHERE consumer=? AND session=?"));
  s.Bind(1, consumer.str()).Bind(2, session.str());
  AS_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return std::optional<ConsumerPosition>();
  return std::optional<ConsumerPosition>(
      ConsumerPosition{consumer, session, Cursor{Epoch(s.Int(0)), Seq(s.Int(1))}, s.Text(2),
                       static_cast<std::uint64_t>(s.Int(3)), s.Int(4), s.Text(5)});
}

// Inserts or replaces a position row.
Status StorePosition(Db& db, const ConsumerPosition& p) {
  AS_ASSIGN_OR_RETURN(
      Stmt s,
      db.Prepare(
          "INSERT OR REPLACE INTO consumer_positions(consumer, session, epoch, seq, lease_owner, "
          "generation, lease_expires_ms, adapter_state) VALUES(?,?,?,?,?,?,?,?)"));
  s.Bind(1, p.consumer.str()).Bind(2, p.session.str()).Bind(3, ToInt64(p.position.epoch.value()));
  s.Bind(4, ToInt64(p.position.seq.value())).Bind(5, p.lease_owner).Bind(6, ToInt64(p.generation));
  s.Bind(7, p.lease_expires_ms).Bind(8, p.adapter_state);
  return s.Exec();
}

Status DeletePositions(Writer& w, const ConsumerId& consumer) {
  AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("DELETE FROM consumer_positions WHERE consumer=?"));
  s.Bind(1, consumer.str());
  return w.Check(s.Exec());
}

}  // namespace

Result<ConsumerPosition> SqliteConsumerStore::AcquireLease(const ConsumerId& consumer,
                                                           const SessionId& session,
                                                           const std::string& owner,
                                                           TimestampMs now_ms,
                                                           std::int64_t ttl_ms) {
  return queue_.RunControl<ConsumerPosition>([&](Writer& w, ConsumerPosition& out) -> Status {
    AS_ASSIGN_OR_RETURN(auto row, LoadPosition(w.db(), consumer, session));
    AS_ASSIGN_OR_RETURN(out,
                        store_internal::GrantLease(row, consumer, session, owner, now_ms, ttl_ms));
    return w.Check(StorePosition(w.db(), out));
  });
}

Status SqliteConsumerStore::CommitConsumerPosition(const ConsumerId& consumer,
                                                   const SessionId& session,
                                                   std::uint64_t generation, Cursor position,
                                                   std::optional<std::string> adapter_state,
                                                   TimestampMs now_ms) {
  return queue_
      .RunControl<bool>([&](Writer& w, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(auto row, LoadPosition(w.db(), consumer, session));
        AS_ASSIGN_OR_RETURN(ConsumerPosition next,
                            store_internal::CommitPosition(std::move(row), generation, position,
                                                           adapter_state, now_ms));
        return w.Check(StorePosition(w.db(), next));
      })
      .status();
}

Status SqliteConsumerStore::ReleaseLease(const ConsumerId& consumer, const SessionId& session,
                                         std::uint64_t generation) {
  return queue_
      .RunControl<bool>([&](Writer& w, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(auto row, LoadPosition(w.db(), consumer, session));
        AS_ASSIGN_OR_RETURN(ConsumerPosition next,
                            store_internal::ReleasePosition(std::move(row), generation));
        return w.Check(StorePosition(w.db(), next));
      })
      .status();
}

Result<std::vector<ConsumerPosition>> SqliteConsumerStore::ListConsumerPositions(
    const ConsumerId& consumer) {
  using Positions = std::vector<ConsumerPosition>;
  return readers_.Query<Positions>([&](Db& db) -> Result<Positions> {
    AS_ASSIGN_OR_RETURN(
        Stmt s,
        db.Prepare("SELECT session FROM consumer_positions WHERE consumer=? ORDER BY session"));
    s.Bind(1, consumer.str());
    Positions out;
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      AS_ASSIGN_OR_RETURN(auto pos, LoadPosition(db, consumer, SessionId(s.Text(0))));
      if (pos) out.push_back(std::move(*pos));
    }
    return out;
  });
}

Status SqliteConsumerStore::DeleteConsumerPositions(const ConsumerId& consumer) {
  return queue_
      .RunControl<bool>([&](Writer& w, bool&) -> Status { return DeletePositions(w, consumer); })
      .status();
}

Status SqliteConsumerStore::SaveConsumer(const ConsumerId& consumer,
                                         const std::string& definition) {
  return queue_
      .RunControl<bool>([&](Writer& w, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(
            Stmt s, w.db().Prepare("INSERT OR REPLACE INTO consumers(id, definition) VALUES(?,?)"));
        s.Bind(1, consumer.str()).Bind(2, definition);
        return w.Check(s.Exec());
      })
      .status();
}

Result<std::vector<StoredConsumer>> SqliteConsumerStore::ListConsumers() {
  using Stored = std::vector<StoredConsumer>;
  return readers_.Query<Stored>([&](Db& db) -> Result<Stored> {
    AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, definition FROM consumers ORDER BY id"));
    Stored out;
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back({ConsumerId(s.Text(0)), s.Text(1)});
    }
    return out;
  });
}

Status SqliteConsumerStore::DeleteConsumer(const ConsumerId& consumer) {
  return queue_
      .RunControl<bool>([&](Writer& w, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("DELETE FROM consumers WHERE id=?"));
        s.Bind(1, consumer.str());
        AS_RETURN_IF_ERROR(w.Check(s.Exec()));
        if (sqlite3_changes(w.db().raw()) == 0)
          return Error(ErrorCode::kNotFound, "no consumer " + consumer.str());
        return DeletePositions(w, consumer);
      })
      .status();
}

}  // namespace agentstream::sqlite
