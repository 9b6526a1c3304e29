#include "store/memory_consumer_store.h"

namespace agentstream::store_internal {

std::optional<ConsumerPosition> MemoryConsumerStore::Find(const ConsumerId& consumer,
                                                          const SessionId& session) const {
  auto it = positions_.find({consumer.str(), session.str()});
  if (it == positions_.end()) return std::nullopt;
  return it->second;
}

void MemoryConsumerStore::ErasePositions(const ConsumerId& consumer) {
  std::erase_if(positions_, [&](const auto& entry) { return entry.first.first == consumer.str(); });
}

Result<ConsumerPosition> MemoryConsumerStore::AcquireLease(const ConsumerId& consumer,
                                                           const SessionId& session,
                                                           const std::string& owner,
                                                           TimestampMs now_ms,
                                                           std::int64_t ttl_ms) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ConsumerPosition granted, GrantLease(Find(consumer, session), consumer,
                                                           session, owner, now_ms, ttl_ms));
  positions_[{consumer.str(), session.str()}] = granted;
  return granted;
}

Status MemoryConsumerStore::CommitConsumerPosition(const ConsumerId& consumer,
                                                   const SessionId& session,
                                                   std::uint64_t generation, Cursor position,
                                                   std::optional<std::string> adapter_state,
                                                   TimestampMs now_ms) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ConsumerPosition next,
                      CommitPosition(Find(consumer, session), generation, position,
                                     std::move(adapter_state), now_ms));
  positions_[{consumer.str(), session.str()}] = std::move(next);
  return Status::Ok();
}

Status MemoryConsumerStore::ReleaseLease(const ConsumerId& consumer, const SessionId& session,
                                         std::uint64_t generation) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(ConsumerPosition next, ReleasePosition(Find(consumer, session), generation));
  positions_[{consumer.str(), session.str()}] = std::move(next);
  return Status::Ok();
}

Result<std::vector<ConsumerPosition>> MemoryConsumerStore::ListConsumerPositions(
    const ConsumerId& consumer) {
  std::lock_guard lock(log_.mu);
  std::vector<ConsumerPosition> out;
  for (const auto& [key, pos] : positions_)
    if (key.first == consumer.str()) out.push_back(pos);
  return out;
}

Status MemoryConsumerStore::DeleteConsumerPositions(const ConsumerId& consumer) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  ErasePositions(consumer);
  return Status::Ok();
}

Status MemoryConsumerStore::SaveConsumer(const ConsumerId& consumer,
                                         const std::string& definition) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  definitions_[consumer.str()] = definition;
  return Status::Ok();
}

Result<std::vector<StoredConsumer>> MemoryConsumerStore::ListConsumers() {
  std::lock_guard lock(log_.mu);
  std::vector<StoredConsumer> out;
  for (const auto& [id, definition] : definitions_) out.push_back({ConsumerId(id), definition});
  return out;
}

Status MemoryConsumerStore::DeleteConsumer(const ConsumerId& consumer) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  if (definitions_.erase(consumer.str()) == 0)
    return Error(ErrorCode::kNotFound, "no consumer " + consumer.str());
  ErasePositions(consumer);
  return Status::Ok();
}

}  // namespace agentstream::store_internal
