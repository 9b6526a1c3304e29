#include "store/schedule_rows.h"

#include <algorithm>

#include "store/row_text.h"

namespace agentstream::store_internal {

namespace {

bool IsIdCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

Status CheckScheduleRow(const ScheduleRecord& schedule) {
  const std::string& id = schedule.id;
  if (id.empty() || id.size() > kMaxScheduleIdBytes ||
      !std::all_of(id.begin(), id.end(), IsIdCharacter)) {
    return Error(ErrorCode::kInvalidArgument, "a schedule id must be 1 to " +
                                                  std::to_string(kMaxScheduleIdBytes) +
                                                  " letters, digits, '_' and '-'");
  }
  return CheckRowText("a schedule definition", schedule.definition, 0, kMaxScheduleDefinitionBytes);
}

Status CheckLeaseClaim(const std::string& owner, std::int64_t ttl_ms) {
  AS_RETURN_IF_ERROR(CheckLeaseOwner(owner));
  if (ttl_ms <= 0) return Error(ErrorCode::kInvalidArgument, "a lease needs a positive ttl");
  return Status::Ok();
}

Status CheckLeaseOwner(const std::string& owner) {
  return CheckRowText("a lease owner", owner, 1, kMaxLeaseOwnerBytes);
}

Status CheckFirings(const std::string& id, const std::vector<ScheduleFiring>& firings) {
  for (const ScheduleFiring& f : firings) {
    if (f.schedule_id != id) {
      return Error(ErrorCode::kInvalidArgument,
                   "a firing of schedule " + f.schedule_id + " given for schedule " + id);
    }
    AS_RETURN_IF_ERROR(CheckRowText("a firing outcome", f.outcome, 0, kMaxFiringFieldBytes));
    AS_RETURN_IF_ERROR(CheckRowText("a firing agent", f.agent, 0, kMaxFiringFieldBytes));
    AS_RETURN_IF_ERROR(
        CheckRowText("a client message id", f.client_message_id, 0, kMaxFiringFieldBytes));
    AS_RETURN_IF_ERROR(CheckRowText("a turn id", f.turn_id, 0, kMaxFiringFieldBytes));
    AS_RETURN_IF_ERROR(CheckRowText("a firing detail", f.detail, 0, kMaxFiringDetailBytes));
  }
  return Status::Ok();
}

Status ScheduleNotFound(const std::string& id) {
  return Error(ErrorCode::kNotFound, "no schedule " + id);
}

Status ScheduleExists(const std::string& id) {
  return Error(ErrorCode::kAlreadyExists, "a schedule " + id + " exists");
}

Status ScheduleLeasedToAnother(const std::string& id, const std::string& holder,
                               TimestampMs expires_ms) {
  return Error(ErrorCode::kConflict, "schedule " + id + " is leased to " + holder + " until " +
                                         std::to_string(expires_ms));
}

Status ScheduleLeaseLost(const std::string& id, const std::string& owner) {
  return Error(ErrorCode::kConflict, "schedule " + id + " is not leased to " + owner);
}

}  // namespace agentstream::store_internal
