#include "store/postgres/postgres_consumer_store.h"

#include <utility>

#include "store/log_state.h"
#include "store/postgres/sql.h"

namespace agentstream::pg {

namespace {

// The stored position of (consumer, session), or nullopt; through `sql`, a reader's Conn or the
// writer's Txn (where a failure is the batch's).
template <class Sql>
Result<std::optional<ConsumerPosition>> LoadPosition(Sql& sql, const ConsumerId& consumer,
                                                     const SessionId& session) {
  AS_ASSIGN_OR_RETURN(
      Rows r, sql.Exec("SELECT epoch, seq, lease_owner, generation, lease_expires_ms, "
                       "adapter_state FROM consumer_positions WHERE consumer=$1 AND session=$2",
                       {consumer.str(), session.str()}));
  if (r.size() == 0) return std::optional<ConsumerPosition>();
  return std::optional<ConsumerPosition>(ConsumerPosition{
      consumer, session, Cursor{Epoch(r.Int(0, 0)), Seq(r.Int(0, 1))}, r.Text(0, 2),
      static_cast<std::uint64_t>(r.Int(0, 3)), r.Int(0, 4), r.Text(0, 5)});
}

// Locks the lease of (consumer, session) until the commit, then reads its row.
Result<std::optional<ConsumerPosition>> LockPosition(Txn& t, const ConsumerId& consumer,
                                                     const SessionId& session) {
  AS_RETURN_IF_ERROR(t.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                            {consumer.str() + '\x1f' + session.str()})
                         .status());
  return LoadPosition(t, consumer, session);
}

Status StorePosition(Txn& t, const ConsumerPosition& p) {
  return t
      .Exec(
          "INSERT INTO consumer_positions(consumer, session, epoch, seq, lease_owner, "
          "generation, lease_expires_ms, adapter_state) VALUES($1,$2,$3,$4,$5,$6,$7,$8) "
          "ON CONFLICT (consumer, session) DO UPDATE SET epoch=excluded.epoch, "
          "seq=excluded.seq, lease_owner=excluded.lease_owner, "
          "generation=excluded.generation, lease_expires_ms=excluded.lease_expires_ms, "
          "adapter_state=excluded.adapter_state",
          {p.consumer.str(), p.session.str(), I64(p.position.epoch.value()),
           I64(p.position.seq.value()), p.lease_owner, I64(p.generation), p.lease_expires_ms,
           p.adapter_state})
      .status();
}

Status DeletePositions(Txn& t, const ConsumerId& consumer) {
  return t.Exec("DELETE FROM consumer_positions WHERE consumer=$1", {consumer.str()}).status();
}

}  // namespace

Result<ConsumerPosition> PostgresConsumerStore::AcquireLease(const ConsumerId& consumer,
                                                             const SessionId& session,
                                                             const std::string& owner,
                                                             TimestampMs /*now_ms*/,
                                                             std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(CheckText(
      {{"a consumer id", consumer.str()}, {"a session id", session.str()}, {"an owner", owner}}));
  return queue_.RunControl<ConsumerPosition>([&](Txn& t, ConsumerPosition& out) -> Status {
    AS_ASSIGN_OR_RETURN(auto row, LockPosition(t, consumer, session));
    AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
    AS_ASSIGN_OR_RETURN(out,
                        store_internal::GrantLease(row, consumer, session, owner, now, ttl_ms));
    return StorePosition(t, out);
  });
}

Status PostgresConsumerStore::CommitConsumerPosition(const ConsumerId& consumer,
                                                     const SessionId& session,
                                                     std::uint64_t generation, Cursor position,
                                                     std::optional<std::string> adapter_state,
                                                     TimestampMs /*now_ms*/) {
  AS_RETURN_IF_ERROR(CheckText({{"a consumer id", consumer.str()},
                                {"a session id", session.str()},
                                {"an adapter state", adapter_state.value_or("")}}));
  return queue_
      .RunControl<bool>([&](Txn& t, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(auto row, LockPosition(t, consumer, session));
        AS_ASSIGN_OR_RETURN(TimestampMs now, t.ServerNow());
        AS_ASSIGN_OR_RETURN(ConsumerPosition next,
                            store_internal::CommitPosition(std::move(row), generation, position,
                                                           adapter_state, now));
        return StorePosition(t, next);
      })
      .status();
}

Status PostgresConsumerStore::ReleaseLease(const ConsumerId& consumer, const SessionId& session,
                                           std::uint64_t generation) {
  return queue_
      .RunControl<bool>([&](Txn& t, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(auto row, LockPosition(t, consumer, session));
        AS_ASSIGN_OR_RETURN(ConsumerPosition next,
                            store_internal::ReleasePosition(std::move(row), generation));
        return StorePosition(t, next);
      })
      .status();
}

Result<std::vector<ConsumerPosition>> PostgresConsumerStore::ListConsumerPositions(
    const ConsumerId& consumer) {
  using Positions = std::vector<ConsumerPosition>;
  return WithReader<Positions>(readers_, [&](Conn& conn) -> Result<Positions> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT session FROM consumer_positions WHERE "
                                          "consumer=$1 ORDER BY session",
                                          {consumer.str()}));
    Positions out;
    for (int i = 0; i < r.size(); ++i) {
      AS_ASSIGN_OR_RETURN(auto pos, LoadPosition(conn, consumer, SessionId(r.Text(i, 0))));
      if (pos) out.push_back(std::move(*pos));
    }
    return out;
  });
}

Status PostgresConsumerStore::DeleteConsumerPositions(const ConsumerId& consumer) {
  return queue_
      .RunControl<bool>([&](Txn& t, bool&) -> Status { return DeletePositions(t, consumer); })
      .status();
}

Status PostgresConsumerStore::SaveConsumer(const ConsumerId& consumer,
                                           const std::string& definition) {
  AS_RETURN_IF_ERROR(
      CheckText({{"a consumer id", consumer.str()}, {"a consumer definition", definition}}));
  return queue_
      .RunControl<bool>([&](Txn& t, bool&) -> Status {
        return t
            .Exec(
                "INSERT INTO consumers(id, definition) VALUES($1,$2) ON CONFLICT (id) DO "
                "UPDATE SET definition=excluded.definition",
                {consumer.str(), definition})
            .status();
      })
      .status();
}

Result<std::vector<StoredConsumer>> PostgresConsumerStore::ListConsumers() {
  using Stored = std::vector<StoredConsumer>;
  return WithReader<Stored>(readers_, [&](Conn& conn) -> Result<Stored> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT id, definition FROM consumers ORDER BY id"));
    Stored out;
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i) out.push_back({ConsumerId(r.Text(i, 0)), r.Text(i, 1)});
    return out;
  });
}

Status PostgresConsumerStore::DeleteConsumer(const ConsumerId& consumer) {
  return queue_
      .RunControl<bool>([&](Txn& t, bool&) -> Status {
        AS_ASSIGN_OR_RETURN(Rows r, t.Exec("DELETE FROM consumers WHERE id=$1", {consumer.str()}));
        if (r.Affected() == 0) return Error(ErrorCode::kNotFound, "no consumer " + consumer.str());
        return DeletePositions(t, consumer);
      })
      .status();
}

}  // namespace agentstream::pg
