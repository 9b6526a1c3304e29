// Internal to the store module: what MemoryEventLog (memory_log.h) keeps, shared with its consumer
// store (memory_consumer_store.h) and its test peer (testing/memory_log_peer.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/commit_listeners.h"
#include "store/event_log.h"
#include "store/log_state.h"

namespace agentstream::store_internal {

struct MemoryLogState {
  explicit MemoryLogState(LogLimits l) : limits(l) {}
  const LogLimits limits;
  std::mutex mu;  // guards everything below, and the consumer store's rows
  std::map<std::string, SessionState> sessions;
  // Rows of each (session, epoch), indexed by seq - base_seq - 1.
  std::map<std::pair<std::string, std::uint64_t>, std::vector<StoredRow>> rows;
  std::map<std::string, Checkpoint> checkpoints;                      // by session
  std::map<std::string, std::vector<OwnershipRecord>> owner_history;  // by session
  std::map<std::string, DaemonRecord> daemons;
  Status sticky;
  LogStats stats;
  // Set by the test peer: the next commit fails as a sync failure of unknown outcome would.
  bool fail_next_commit = false;
  std::shared_ptr<CommitListeners> listeners = std::make_shared<CommitListeners>();

  // OK while the log accepts writes; with `mu` held.
  Status CheckWritable() const {
    if (!sticky.ok())
      return Error(ErrorCode::kUnavailable, "the log refuses writes after: " + sticky.message());
    return Status::Ok();
  }

  // Models the commit point: either the batch becomes durable, or the log turns sticky. With
  // `mu` held.
  Status Commit() {
    if (fail_next_commit) {
      fail_next_commit = false;
      sticky = Error(ErrorCode::kIoError, "injected sync failure");
      return sticky;
    }
    ++stats.commits;
    return Status::Ok();
  }
};

}  // namespace agentstream::store_internal
