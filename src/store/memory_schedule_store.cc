#include "store/memory_schedule_store.h"

#include <algorithm>

#include "store/schedule_rows.h"

namespace agentstream::store_internal {

Result<ScheduleRecord*> MemoryScheduleStore::Find(const std::string& id) {
  auto it = schedules_.find(id);
  if (it == schedules_.end()) return ScheduleNotFound(id);
  return &it->second;
}

Status MemoryScheduleStore::AddSchedule(const ScheduleRecord& schedule) {
  AS_RETURN_IF_ERROR(CheckScheduleRow(schedule));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  ScheduleRecord stored = schedule;
  stored.pending_tick_ms = 0;
  stored.lease_owner.clear();
  stored.lease_expires_ms = 0;
  if (!schedules_.emplace(schedule.id, std::move(stored)).second)
    return ScheduleExists(schedule.id);
  return Status::Ok();
}

Result<std::vector<ScheduleRecord>> MemoryScheduleStore::ListSchedules() {
  std::lock_guard lock(log_.mu);
  std::vector<ScheduleRecord> out;
  out.reserve(schedules_.size());
  for (const auto& [id, schedule] : schedules_) out.push_back(schedule);
  return out;
}

Result<ScheduleRecord> MemoryScheduleStore::GetSchedule(const std::string& id) {
  std::lock_guard lock(log_.mu);
  AS_ASSIGN_OR_RETURN(ScheduleRecord * schedule, Find(id));
  return *schedule;
}

Status MemoryScheduleStore::SetSchedulePaused(const std::string& id, bool paused,
                                              TimestampMs now_ms) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ScheduleRecord * schedule, Find(id));
  if (schedule->paused == paused) return Status::Ok();
  schedule->paused = paused;
  schedule->updated_ms = now_ms;
  if (!paused) schedule->last_tick_ms = std::max(schedule->last_tick_ms, now_ms);
  return Status::Ok();
}

Status MemoryScheduleStore::DeleteSchedule(const std::string& id) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  if (schedules_.erase(id) == 0) return ScheduleNotFound(id);
  firings_.erase(id);
  return Status::Ok();
}

Result<ScheduleRecord> MemoryScheduleStore::ClaimSchedule(const std::string& id,
                                                          const std::string& owner,
                                                          TimestampMs now_ms, std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(CheckLeaseClaim(owner, ttl_ms));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ScheduleRecord * schedule, Find(id));
  const bool live = !schedule->lease_owner.empty() && schedule->lease_expires_ms > now_ms;
  if (live && schedule->lease_owner != owner)
    return ScheduleLeasedToAnother(id, schedule->lease_owner, schedule->lease_expires_ms);
  schedule->lease_owner = owner;
  schedule->lease_expires_ms = now_ms + ttl_ms;
  return *schedule;
}

Status MemoryScheduleStore::AdvanceSchedule(const std::string& id, const std::string& owner,
                                            TimestampMs last_tick_ms, TimestampMs pending_tick_ms,
                                            const std::vector<ScheduleFiring>& firings) {
  AS_RETURN_IF_ERROR(CheckLeaseOwner(owner));
  AS_RETURN_IF_ERROR(CheckFirings(id, firings));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ScheduleRecord * schedule, Find(id));
  if (schedule->lease_owner != owner) return ScheduleLeaseLost(id, owner);
  schedule->last_tick_ms = std::max(schedule->last_tick_ms, last_tick_ms);
  schedule->pending_tick_ms = pending_tick_ms;
  auto& stored = firings_[id];
  for (const ScheduleFiring& firing : firings) stored.emplace(firing.tick_ms, firing);
  while (stored.size() > kKeptFirings) stored.erase(stored.begin());
  return Status::Ok();
}

Status MemoryScheduleStore::ReleaseSchedule(const std::string& id, const std::string& owner) {
  AS_RETURN_IF_ERROR(CheckLeaseOwner(owner));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ScheduleRecord * schedule, Find(id));
  if (schedule->lease_owner != owner) return Status::Ok();
  schedule->lease_owner.clear();
  schedule->lease_expires_ms = 0;
  return Status::Ok();
}

Result<std::vector<ScheduleFiring>> MemoryScheduleStore::ListFirings(const std::string& id,
                                                                     std::size_t limit) {
  std::lock_guard lock(log_.mu);
  std::vector<ScheduleFiring> out;
  auto it = firings_.find(id);
  if (it == firings_.end()) return out;
  for (auto f = it->second.rbegin(); f != it->second.rend() && out.size() < limit; ++f)
    out.push_back(f->second);
  return out;
}

}  // namespace agentstream::store_internal
