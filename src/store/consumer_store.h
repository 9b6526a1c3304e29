// ConsumerStore: what durable consumers (src/consumers/) keep in the same store as the session
// log: each consumer's definition, and its position in each session it reads, under a lease with
// fencing. Reached through EventLog::consumers(); on PostgreSQL several daemons share these, on
// SQLite and in memory one daemon uses the same calls (docs/consumers.md).
//
// Leases. At most one holder per (consumer, session): a holder's writes carry the generation it
// was granted, and writes with any other generation, or after the lease expired, are refused with
// kFenced. A grant of a free or expired lease gives the next generation; a renewal keeps it.
//
// Durability: a write that returns OK is committed as the log's writes are (event_log.h); a
// store whose log turned sticky refuses these writes too (kUnavailable).
//
// Threading: every method may be called from any thread and blocks for one store round trip.
// Errors: kUnavailable / kIoError as the log's writes, kInvalidArgument for text the store cannot
// hold (and a lease without an owner or a positive ttl), and those named on each method.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"

namespace agentstream {

// A durable consumer's position in one session, with its lease.
struct ConsumerPosition {
  ConsumerId consumer;
  SessionId session;
  Cursor position;          // the last event the consumer acknowledged ({1, 0}: none yet)
  std::string lease_owner;  // empty when no lease is held
  std::uint64_t generation = 0;
  TimestampMs lease_expires_ms = 0;
  std::string adapter_state;  // the sink's own state, committed with the position
};

// A stored consumer definition (see ConsumerStore::SaveConsumer).
struct StoredConsumer {
  ConsumerId id;
  std::string definition;
};

class ConsumerStore {
 public:
  virtual ~ConsumerStore() = default;

  // ---- Consumer positions ----
  // Grants or renews the lease of (consumer, session) to `owner` until now_ms + ttl_ms. A free or
  // expired lease is granted with the next generation; the current owner renews with the same
  // generation; a lease held by another owner is refused with kConflict. A store that several
  // daemons share judges leases by its own clock and ignores `now_ms` (here and in
  // CommitConsumerPosition), so the returned lease_expires_ms is on the store's clock.
  virtual Result<ConsumerPosition> AcquireLease(const ConsumerId& consumer,
                                                const SessionId& session, const std::string& owner,
                                                TimestampMs now_ms, std::int64_t ttl_ms) = 0;
  // Stores the position (and adapter state when given) if `generation` holds an unexpired lease.
  virtual Status CommitConsumerPosition(const ConsumerId& consumer, const SessionId& session,
                                        std::uint64_t generation, Cursor position,
                                        std::optional<std::string> adapter_state,
                                        TimestampMs now_ms) = 0;
  // Frees the lease (the position and the generation stay). kFenced when `generation` is not the
  // current one.
  virtual Status ReleaseLease(const ConsumerId& consumer, const SessionId& session,
                              std::uint64_t generation) = 0;
  // Every stored position of `consumer`, ordered by session.
  virtual Result<std::vector<ConsumerPosition>> ListConsumerPositions(
      const ConsumerId& consumer) = 0;
  virtual Status DeleteConsumerPositions(const ConsumerId& consumer) = 0;

  // ---- Consumer definitions ----
  // A consumer's definition is opaque text to the store (the consumers module stores its spec as
  // JSON). SaveConsumer inserts or replaces. ListConsumers orders them by id. DeleteConsumer
  // removes the definition and every position of the consumer in one transaction; kNotFound when
  // no definition exists.
  virtual Status SaveConsumer(const ConsumerId& consumer, const std::string& definition) = 0;
  virtual Result<std::vector<StoredConsumer>> ListConsumers() = 0;
  virtual Status DeleteConsumer(const ConsumerId& consumer) = 0;
};

}  // namespace agentstream
