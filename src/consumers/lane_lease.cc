#include <utility>

#include "consumers/consumer_service_impl.h"
#include "log/log.h"

namespace agentstream::consumers {

Status ConsumerService::Impl::PositionAtTails(const ConsumerSpec& spec) {
  std::string after;
  std::size_t positioned = 0;
  while (positioned < options_.max_sessions_per_consumer) {
    AS_ASSIGN_OR_RETURN(std::vector<SessionInfo> page, log_.ListSessions(after, 1000));
    if (page.empty()) break;
    for (const auto& info : page) {
      if (!Selects(spec, info.id, info.meta.provider)) continue;
      AS_ASSIGN_OR_RETURN(ConsumerPosition lease,
                          log_.consumers().AcquireLease(spec.id, info.id, options_.owner, Now(),
                                                        options_.lease_ttl_ms));
      AS_RETURN_IF_ERROR(log_.consumers().CommitConsumerPosition(
          spec.id, info.id, lease.generation, Cursor{info.epoch, info.tail}, std::nullopt, Now()));
      (void)log_.consumers().ReleaseLease(spec.id, info.id, lease.generation);
      ++positioned;
    }
    after = page.back().id.str();
  }
  return Status::Ok();
}

std::optional<ConsumerService::Impl::StepOutcome> ConsumerService::Impl::KeepLease(Entry& e,
                                                                                   Lane& lane) {
  const std::int64_t ttl = LeaseTtl(e);
  const TimestampMs now = Now();
  // Renewed while there is work, left to expire when idle.
  if (lane.generation != 0 && lane.lease_expires_ms - now >= ttl / 2) return std::nullopt;
  auto lease = log_.consumers().AcquireLease(e.spec.id, lane.session, options_.owner, now, ttl);
  if (!lease.ok()) {
    lane.generation = 0;
    std::lock_guard lock(mu_);
    lane.progress.generation = 0;
    lane.progress.lease_owner.clear();
    // Held by another owner: look again when its lease could have lapsed.
    if (lease.status().code() == ErrorCode::kConflict) return StepOutcome{Next::kRetry, ttl / 2};
    lane.progress.last_error = lease.status().ToString();
    return StepOutcome{Next::kRetry, 1000};
  }
  if (lease->generation != lane.generation) {
    // A new grant: the stored position and record are the truth (another holder may have
    // moved them since this service last held the lease).
    auto record = DecodeLaneRecord(lease->adapter_state);
    if (!record.ok()) return Fail(e, lane, record.status().ToString());
    lane.record = std::move(*record);
    lane.position = lease->position;
    lane.attempts = 0;
  }
  lane.generation = lease->generation;
  // On this daemon's clock, from before the grant: the store's clock may differ (PostgreSQL
  // judges by its own), and this reckoning never believes in a lease longer than it lasts.
  lane.lease_expires_ms = now + ttl;
  std::lock_guard lock(mu_);
  lane.progress.generation = lane.generation;
  lane.progress.lease_owner = options_.owner;
  lane.progress.position = lane.position;
  lane.progress.parked = lane.record.parked;
  if (!lane.record.error.empty()) lane.progress.last_error = lane.record.error;
  return std::nullopt;
}

Status ConsumerService::Impl::Commit(Entry& e, Lane& lane, Cursor position) {
  Status s = log_.consumers().CommitConsumerPosition(
      e.spec.id, lane.session, lane.generation, position, EncodeLaneRecord(lane.record), Now());
  if (s.ok()) {
    lane.position = position;
    std::lock_guard lock(mu_);
    lane.progress.position = position;
  } else if (s.code() == ErrorCode::kFenced) {
    // Another holder took over: stop delivering this session until a new lease is granted.
    log::Info("consumer.fenced", {{"consumer", e.spec.id.str()},
                                  {"session", lane.session.str()},
                                  {"generation", lane.generation}});
    lane.generation = 0;
    std::lock_guard lock(mu_);
    lane.progress.last_error = s.ToString();
    lane.progress.generation = 0;
    lane.progress.lease_owner.clear();
  }
  return s;
}

void ConsumerService::Impl::ReleaseLeasesLocked() {
  // The workers are gone: the worker fields of every lane are ours to read.
  for (auto& [id, e] : consumers_) {
    for (auto& [session, lane] : e->lanes) {
      if (lane->generation != 0) (void)log_.consumers().ReleaseLease(id, session, lane->generation);
      lane->generation = 0;
    }
  }
}

}  // namespace agentstream::consumers
