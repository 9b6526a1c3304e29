// Coordination: what the daemons sharing one store agree on through it. Who runs each agent
// session (an ownership lease per session), which daemons are alive and where they answer (the
// daemon registry), and the secrets they must share (the inbox key). On PostgreSQL several
// daemons share these; on SQLite and in memory one daemon uses the same calls, so there is one
// code path (docs/architecture.md, "Agent ownership").
//
// Ownership. At most one daemon runs a session's runtime: the holder of its lease. Every grant
// gives the session a new *generation* (it only grows, and is never reused, also when the same
// owner takes the lease again: a new grant is a new runtime). The runtime stamps its appends and
// metadata updates with its generation (AppendRequest::owner_generation,
// SessionMetaUpdate::owner_generation), and the log refuses them with kFenced, in the transaction
// that would have written them, once the generation is no longer the session's current one. So
// after a takeover no event of the stale owner can land, whatever it still believes. A lease
// expires `ttl_ms` after its grant or last renewal, judged by the store's own clock (PostgreSQL:
// the server's `clock_timestamp()`), never by a daemon's, so a daemon whose clock jumps cannot
// make two owners.
//
// Threading: every method may be called from any thread and blocks for one store round trip.
// Errors: kNotFound for an unknown session, kUnavailable / kIoError as the log's writes (a
// sticky log refuses these writes too), kInvalidArgument for text the store cannot hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"

namespace agentstream {

// The ownership lease of one session, as stored.
struct OwnerLease {
  std::string owner;             // the holder's daemon id; empty when nobody holds it
  std::uint64_t generation = 0;  // the session's current ownership generation (0: never owned)
  TimestampMs expires_ms = 0;    // by the store's clock
  TimestampMs now_ms = 0;        // the store's clock when the lease was read or granted

  // Held, and not expired when it was read.
  bool live() const { return !owner.empty() && expires_ms > now_ms; }
};

// The answer to a grant: the new lease, and the lease it replaced (who held the session before:
// a takeover from a dead daemon, the same daemon's previous run, or nobody).
struct OwnerGrant {
  OwnerLease lease;
  OwnerLease previous;
};

// One grant in a session's ownership history: from `at` (the session's tail when it was granted)
// until the next grant, events stamped `generation` were appended by `owner`.
struct OwnershipRecord {
  std::uint64_t generation = 0;
  std::string owner;
  TimestampMs granted_ms = 0;
  Cursor at;
};

// A daemon as registered: where other daemons reach it, and its last heartbeat.
struct DaemonRecord {
  std::string id;
  std::string url;       // advertised base URL ("http://host:port"); empty: not reachable
  std::string host;      // the machine and data directory it runs with, so that two live
  std::string data_dir;  //   daemons cannot claim one id
  TimestampMs started_ms = 0;
  TimestampMs heartbeat_ms = 0;  // by the store's clock
  TimestampMs now_ms = 0;        // the store's clock when read
};

class Coordination {
 public:
  virtual ~Coordination() = default;

  // ---- Ownership ----
  // Grants the lease of `session` to `owner` for `ttl_ms` when nobody holds it, when it expired,
  // or when `owner` holds it already (a daemon restarted with the same identity takes its leases
  // back at once). Every grant bumps the generation and is recorded in the history. kConflict,
  // naming the holder, while another owner's lease is live.
  virtual Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                              std::int64_t ttl_ms) = 0;
  // Extends each lease `owner` holds at the given generation to now + ttl_ms (an expired lease
  // nobody took is renewed too: its generation never moved, so no other runtime exists). Returns
  // the sessions whose lease was lost (another grant happened, or the session is gone); their
  // runtimes must stop.
  virtual Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) = 0;
  // Frees the lease (the generation stays). kFenced when `generation` is no longer current.
  virtual Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) = 0;
  virtual Result<OwnerLease> GetOwnership(const SessionId& session) = 0;
  // Sessions whose lease is held but expired (their owner stopped renewing), at most `limit`.
  virtual Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) = 0;
  // Every grant of `session`, oldest first (bounded by the number of grants it ever had).
  virtual Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) = 0;

  // ---- Daemons ----
  // Registers `self` or refreshes its heartbeat (heartbeat_ms = now by the store's clock;
  // started_ms and the other fields as given). kAlreadyExists when another live daemon (one
  // whose heartbeat is younger than `ttl_ms`) holds the id from another host or data directory.
  virtual Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) = 0;
  // The registered daemon `id`, or nullopt.
  virtual Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) = 0;

  // ---- Shared secrets ----
  // The secret stored under `name`; when none is stored yet, stores `candidate` and returns it
  // (so every daemon ends up with the first one stored). kUnavailable from a store that keeps no
  // secrets (SQLite and memory: one daemon keeps its own in its data directory).
  virtual Result<std::string> SharedSecret(const std::string& name,
                                           const std::string& candidate) = 0;
};

}  // namespace agentstream
