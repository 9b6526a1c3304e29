// Internal to the store module: the ScheduleStore (schedule_store.h) of MemoryEventLog. Its rows
// live beside the log's and under the log's lock, so a log that turned sticky refuses these writes
// too, and a claim or an advance is atomic. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/memory_log_state.h"
#include "store/schedule_store.h"

namespace agentstream::store_internal {

class MemoryScheduleStore final : public ScheduleStore {
 public:
  // `log` must outlive the store.
  explicit MemoryScheduleStore(MemoryLogState& log) : log_(log) {}

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
  // The schedule `id`, or kNotFound; with log_.mu held.
  Result<ScheduleRecord*> Find(const std::string& id);

  MemoryLogState& log_;
  // Guarded by log_.mu.
  std::map<std::string, ScheduleRecord> schedules_;                       // by id
  std::map<std::string, std::map<TimestampMs, ScheduleFiring>> firings_;  // by schedule, tick
};

}  // namespace agentstream::store_internal
