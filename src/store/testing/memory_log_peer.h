// Test support: what tests do to a MemoryEventLog beyond the EventLog interface, to model a
// failing or damaged store. Only test binaries link it (agentstream_store_testing). Each call is
// thread-safe, as the log's own calls are.
#pragma once

#include <cstdint>
#include <optional>

#include "store/memory_log.h"

namespace agentstream::testing {

class MemoryLogPeer {
 public:
  // The next commit fails as a sync failure of unknown outcome would (the log turns sticky).
  static void FailNextCommit(MemoryEventLog& log);
  // What reopening a durable log does to its failure state: writes are accepted again.
  static void SimulateReopen(MemoryEventLog& log);
  // Stores `record` as given, bypassing every check, with `checksum` (nullopt: the correct one),
  // to model damaged storage.
  static void InjectRawRecord(MemoryEventLog& log, const EventRecord& record,
                              std::optional<std::uint64_t> checksum);
};

}  // namespace agentstream::testing
