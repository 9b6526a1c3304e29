// Internal to the store module: the ScheduleStore (schedule_store.h) of the PostgreSQL log, over
// the tables `schedules` and `schedule_firings` that the daemons sharing the database share.
// Writes run in the log's writer batch (so a sticky log refuses them too). A claim is one
// conditional UPDATE ... RETURNING, and an advance begins with an UPDATE conditional on the
// holder: of two daemons' statements on one schedule, the second waits for the first's row lock
// and then judges the row the first left, so two daemons never both hold a live lease, and a
// daemon whose lease was taken over advances nothing. Reads run on a reader connection.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pg/setup.h"
#include "store/postgres/txn.h"
#include "store/schedule_store.h"

namespace agentstream::pg {

class PostgresScheduleStore final : public ScheduleStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  PostgresScheduleStore(WriteQueue& queue, ReaderPool& readers)
      : queue_(queue), readers_(readers) {}

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
  // Runs `body(Txn&)` in the writer's batch.
  template <class Body>
  Status Write(Body body);

  WriteQueue& queue_;
  ReaderPool& readers_;
};

}  // namespace agentstream::pg
