// Internal to the store module: the ScheduleStore (schedule_store.h) of the SQLite log, over the
// tables `schedules` and `schedule_firings`. Writes run on the log's writer thread inside its
// batch transaction (so a sticky log refuses them too, and a claim or an advance is one
// conditional statement in one write transaction: of two claims, the second sees the first's
// lease); reads on a reader connection. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "store/schedule_store.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_writer.h"

namespace agentstream::sqlite {

class SqliteScheduleStore final : public ScheduleStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  SqliteScheduleStore(WriteQueue& queue, ReaderPool& readers) : queue_(queue), readers_(readers) {}

  Status AddSchedule(const ScheduleRecord& schedule) override;
  Result<std::vector<ScheduleRecord>> ListSchedules() override;
  Result<ScheduleRecord> GetSchedule(const std::string& id) override;
  Status SetSchedulePaused(const std::string& id, bool paused, TimestampMs now_ms) override;
  Status DeleteSchedule(const std::string& id) override;
  Result<ScheduleRecord> ClaimSchedule(const std::string& id, const std::string& owner,
                                       TimestampMs now_ms, std::int64_t ttl_ms) override;
  Status AdvanceSchedule(const std::string& id, const std::string& owner, TimestampMs last_tick_ms,
                         TimestampMs pending_tick_ms,
                         const std::vector<ScheduleFiring>& firings) override;
  Status ReleaseSchedule(const std::string& id, const std::string& owner) override;
  Result<std::vector<ScheduleFiring>> ListFirings(const std::string& id,
                                                  std::size_t limit) override;

 private:
  // Runs `body(Writer&)` in the writer's batch.
  template <class Body>
  Status Write(Body body);

  WriteQueue& queue_;
  ReaderPool& readers_;
};

}  // namespace agentstream::sqlite
