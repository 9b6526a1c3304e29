// Internal to the store module: what every ScheduleStore backend (schedule_store.h) checks before
// it stores a row, and the errors they answer with, so the three refuse the same text and report
// the same conditions the same way (kInvalidArgument, kNotFound, kConflict): schedule ids of 1 to
// 64 letters, digits, '_' and '-', definitions of at most 64 KiB, firing details of at most
// 1 KiB, the other firing fields and lease owners bounded too, and text that is UTF-8 without NUL
// bytes (what PostgreSQL's text holds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/schedule_store.h"

namespace agentstream::store_internal {

inline constexpr std::size_t kMaxScheduleIdBytes = 64;
inline constexpr std::size_t kMaxScheduleDefinitionBytes = std::size_t{64} * 1024;
inline constexpr std::size_t kMaxFiringDetailBytes = 1024;
// A firing's outcome, agent, client message id and turn id.
inline constexpr std::size_t kMaxFiringFieldBytes = 256;
inline constexpr std::size_t kMaxLeaseOwnerBytes = 128;

// The columns of the SQL tables, in the order the SQL backends read them into the records.
inline constexpr const char* kScheduleColumns =
    "id, definition, paused, created_ms, updated_ms, last_tick_ms, pending_tick_ms, lease_owner, "
    "lease_expires_ms";
inline constexpr const char* kFiringColumns =
    "schedule_id, tick_ms, first_tick_ms, ticks, recorded_ms, outcome, agent, client_message_id, "
    "turn_id, detail";

// `schedule` as AddSchedule stores it: its id and definition (the lease and the pending tick are
// not taken from it).
Status CheckScheduleRow(const ScheduleRecord& schedule);
// A claim of a lease: a named owner and a positive ttl.
Status CheckLeaseClaim(const std::string& owner, std::int64_t ttl_ms);
// The owner named by AdvanceSchedule and ReleaseSchedule ("" is nobody, never a holder).
Status CheckLeaseOwner(const std::string& owner);
// The firings AdvanceSchedule stores for schedule `id`: each of that schedule, its text bounded.
Status CheckFirings(const std::string& id, const std::vector<ScheduleFiring>& firings);

// kNotFound for an unknown schedule.
Status ScheduleNotFound(const std::string& id);
// kAlreadyExists for a schedule id taken.
Status ScheduleExists(const std::string& id);
// kConflict naming `holder`, whose lease of schedule `id` is live until `expires_ms`.
Status ScheduleLeasedToAnother(const std::string& id, const std::string& holder,
                               TimestampMs expires_ms);
// kConflict: `owner` does not hold the lease of schedule `id` (any more).
Status ScheduleLeaseLost(const std::string& id, const std::string& owner);

}  // namespace agentstream::store_internal
