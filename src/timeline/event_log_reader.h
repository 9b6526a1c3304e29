// EventLogReader: the pager's RawEventReader (core/timeline/pager.h) over one session of an
// EventLog, and the one-pass build of a session epoch's ProjectionIndex from the log.
//
// Thread safety: an EventLogReader may be used from one thread at a time; the EventLog it reads
// is thread-safe and must outlive it. Errors of the log (kNotFound, kCorruption,
// kUnsupportedVersion, kIoError) are returned unchanged.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/timeline/pager.h"
#include "core/timeline/projection_index.h"
#include "store/event_log.h"

namespace agentstream {

class EventLogReader final : public timeline::RawEventReader {
 public:
  // `log` is borrowed. Each range is read in log reads of at most `batch` events.
  EventLogReader(EventLog& log, SessionId session, std::size_t batch = 1000)
      : log_(log), session_(std::move(session)), batch_(batch) {}

  Result<std::vector<Event>> ReadRange(Epoch epoch, Seq first, Seq last) override;

  // Number of EventLog::Read calls so far (tests and benchmarks check paging cost with it).
  std::size_t reads() const { return reads_; }

 private:
  EventLog& log_;
  SessionId session_;
  std::size_t batch_;
  std::size_t reads_ = 0;
};

// Reads the whole of `epoch` (absent: the current one) of `session` once, oldest first, and
// returns its projection index. O(history): run once when a session is loaded; afterwards keep
// the index current with ProjectionIndex::Add on every commit.
Result<timeline::ProjectionIndex> BuildProjectionIndex(EventLog& log, const SessionId& session,
                                                       std::optional<Epoch> epoch = std::nullopt);

}  // namespace agentstream
