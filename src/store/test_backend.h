// Test support: each EventLog backend behind one handle, with the hooks the conformance suite
// needs (reopen, injected sync failures, raw damaged rows). Only test binaries link this.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/event_log.h"

namespace agentstream::testing {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual EventLog& log() = 0;
  // Closes and opens the log again on the same storage (a no-op for memory).
  virtual void Reopen() = 0;
  virtual bool CanFailSyncs() const { return true; }
  // While set, the storage's syncs (or the commit point) fail.
  virtual void FailSyncs(bool fail) = 0;
  // Stores `record` as it is, bypassing every check, with `checksum` (nullopt: the right one).
  virtual void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) = 0;
};

// "memory", "sqlite", "sqlite_serial", "postgres". MakeBackend gives nullptr for "postgres" when
// AGENTSTREAM_TEST_PG (a libpq connection string) is not set: the caller skips. `search_slices`
// is the stores' option of that name (0: their default; the memory log keeps no search index).
std::vector<std::string> BackendNames();
std::unique_ptr<Backend> MakeBackend(const std::string& name, std::size_t search_slices = 0);

// The outcomes of four commits made together (CommitItemsTogether, CommitDocumentsTogether): the
// first and last land, the second is from a stale state, the third holds a text with a NUL byte,
// which PostgreSQL cannot keep. Adds a test failure unless the outcomes say so; returns whether
// the store kept the third.
bool CheckFourOutcomes(const Result<std::vector<Status>>& outcomes);

}  // namespace agentstream::testing
