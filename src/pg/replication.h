// What the PostgreSQL server a store connects to promises about failover, read once when the
// store opens (docs/operations.md, "High availability"): its synchronous_commit and
// synchronous_standby_names, and the standbys pg_stat_replication shows (readable to a superuser
// or a member of pg_read_all_stats; to others the standbys' states read as unknown).
// JudgeReplication is pure: it says whether an acknowledged commit could be lost when a standby is
// promoted.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "pg/pg.h"

namespace agentstream::pg {

struct Standby {
  std::string name;        // application_name
  std::string sync_state;  // "sync", "quorum", "potential", "async", or "" when not readable
};

struct ReplicationState {
  std::string synchronous_commit;         // on, remote_apply, remote_write, local, off
  std::string synchronous_standby_names;  // "" when no standby is synchronous
  std::vector<Standby> standbys;          // connected ones, as pg_stat_replication shows them
};

// Reads the state on `conn` (two statements). kUnavailable when the connection fails.
Result<ReplicationState> ReadReplication(Conn& conn);

struct ReplicationVerdict {
  enum class Level { kInfo, kWarn };
  Level level = Level::kInfo;
  // "synchronous", "asynchronous", "single", "no_sync_standby", "local_commit"
  std::string setup;
  std::string message;  // one sentence for the operator
};

// An acknowledged commit survives a failover only with a synchronous standby connected and
// synchronous_commit at on or remote_apply (or remote_write: the standby has it in memory, lost
// only if the standby's host fails too); those setups are kInfo. A server with no standby at all
// is kInfo (nothing to fail over to: the store is down until the server is back). Asynchronous
// standbys, synchronous_commit local or off, and named synchronous standbys of which none is
// connected (commits then wait for one) are kWarn.
ReplicationVerdict JudgeReplication(const ReplicationState& state);

}  // namespace agentstream::pg
