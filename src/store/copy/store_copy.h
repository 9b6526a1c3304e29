// `agentstream store copy --from URL --to URL` (docs/operations.md, "Moving from SQLite to
// PostgreSQL"): a whole store moved between SQLite and PostgreSQL, either way (and SQLite to
// SQLite, PostgreSQL to PostgreSQL), row by row through the two backends' own tables
// (copy_conn.h), so that every stored record keeps its bytes, its seq and its time.
//
// What is copied: every session (its row with title, status, persistence handle and usage
// totals; its epochs with their bases, so forks and rewinds; its record batches as stored;
// its producers' states, its checkpoint and its ownership history, with no lease held), the
// consumers' definitions and positions, paired devices, pairing codes and presence, the
// schedules with their progress, leases and newest firings, and the shared secrets when both
// stores keep them (PostgreSQL). Worktree records travel in the events
// (workspace.created). The generic Durable Streams with their producers' states, subscriptions
// and keys are copied by streams/streams_copy.h, which this module does not include: the CLI
// hands it in as a CopyPart, run while both stores are held. Not copied: the daemon registry
// (daemons register when they start), the timeline index (rebuilt when a session is first paged)
// and the search index (rebuilt by the daemon's indexer at its next start).
//
// Resumable and idempotent: sessions are copied one by one, each session's batches in
// transactions of at most kCopyChunkRows rows or kCopyChunkBytes bytes, resuming after the
// destination's last batch of each epoch; small tables are upserted by primary key. A rerun
// after a crash or a kill -9 finishes the copy; a rerun after a finished one writes nothing.
// A destination is complete once a run ended with OK: start no daemon on it before.
//
// Verified: at the end every session's events are digested on both sides (SHA-256 over each
// epoch's base and each decoded, checksum-verified record) and compared.
//
// Not thread-safe; one call at a time. Runs on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace agentstream {

// The bounds of one transaction of a session's batches at the destination (and of the memory a
// copy holds: one chunk of rows at a time). A chunk holds at least one batch, which the log
// bounds to LogLimits::max_batch_bytes.
inline constexpr std::size_t kCopyChunkRows = 512;
inline constexpr std::size_t kCopyChunkBytes = 32 << 20;
// Rows of a small table read and upserted per transaction.
inline constexpr std::size_t kCopyTablePage = 1000;
// Sessions named in a refusal (the rest are counted).
inline constexpr std::size_t kCopyNamedInError = 10;

struct CopyProgress {
  // "check" (comparing what the destination holds), "copy", "tables", "verify".
  std::string phase;
  std::int64_t sessions_done = 0;
  std::int64_t sessions_total = 0;
  std::int64_t events_done = 0;   // events at the destination (copied before or now)
  std::int64_t events_total = 0;  // events in the source (each stored once: a fork's prefix
                                  // counts in its parent)
};

// More of a store to copy beside its sessions, from a module this one does not include (the CLI
// adds the generic Durable Streams, streams/streams_copy.h). Check runs after the sessions were
// compared and before anything is written: its error refuses the copy as it is. Copy runs after
// the sessions and small tables were copied and verified, while both stores are still held; its
// error ends the copy as it is. Both run on the calling thread.
class CopyPart {
 public:
  virtual ~CopyPart() = default;
  virtual Status Check() = 0;
  virtual Status Copy() = 0;
};

struct CopyOptions {
  // Copy into a destination that holds sessions the source does not. Without it such a copy is
  // refused; a destination holding only (parts of) the source's sessions is a copy to resume.
  bool merge = false;
  // Called on the calling thread after each chunk and session and once per phase; may be empty.
  std::function<void(const CopyProgress&)> progress;
  // Copied with the sessions (see CopyPart); may be null. Not owned; outlives the call.
  CopyPart* part = nullptr;
};

struct SessionDigest {
  std::string session;
  std::int64_t events = 0;  // the session's own events, every epoch
  std::string sha256;       // hex
};

struct CopyReport {
  std::int64_t sessions = 0;           // sessions in the source
  std::int64_t sessions_copied = 0;    // sessions this run wrote to
  std::int64_t events = 0;             // events in the source
  std::int64_t events_copied = 0;      // events this run wrote
  std::int64_t table_rows = 0;         // rows of the small tables upserted
  std::int64_t secrets_left = 0;       // shared secrets the destination (SQLite) cannot keep
  std::vector<SessionDigest> digests;  // every session's, by id, equal on both sides
};

// Copies the store at `from_url` into the store at `to_url` (created when it is a missing
// SQLite file; tables created or migrated to this build's schema). Errors, each with a message
// naming the store or session:
// - kInvalidArgument: a URL that is no SQLite file or PostgreSQL URL, or the same store twice;
// - kNotFound: no SQLite file at `from_url`;
// - kInvalidArgument also: a source that is not an agentstream store, or of an older schema (a
//   daemon of this build migrates it when it opens it);
// - kUnsupportedVersion: a source or destination of a newer schema than this build's;
// - kUnavailable: a daemon serves either store, or another copy runs (copy_conn.h);
// - kAlreadyExists: the destination holds sessions the source does not, without `merge`;
// - kConflict: sessions of the same id hold different content on the two sides (named);
// - kCorruption: a stored record fails its checksum, or the digests differ after the copy;
// - kIoError: reading or writing failed (a full disk among them). The transaction in flight is
//   rolled back; what was committed before is whole, and a rerun goes on from there.
Result<CopyReport> CopyStore(const std::string& from_url, const std::string& to_url,
                             const CopyOptions& options = {});

}  // namespace agentstream
