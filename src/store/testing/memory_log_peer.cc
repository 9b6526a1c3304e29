#include "store/testing/memory_log_peer.h"

#include <mutex>

#include "store/memory_log_state.h"

namespace agentstream::testing {

void MemoryLogPeer::FailNextCommit(MemoryEventLog& log) {
  std::lock_guard lock(log.state_->mu);
  log.state_->fail_next_commit = true;
}

void MemoryLogPeer::SimulateReopen(MemoryEventLog& log) {
  store_internal::MemoryLogState& state = *log.state_;
  std::lock_guard lock(state.mu);
  state.sticky = Status::Ok();
  state.fail_next_commit = false;
}

void MemoryLogPeer::InjectRawRecord(MemoryEventLog& log, const EventRecord& record,
                                    std::optional<std::uint64_t> checksum) {
  store_internal::MemoryLogState& state = *log.state_;
  std::lock_guard lock(state.mu);
  auto& s = state.sessions[record.session.str()];
  while (s.epochs.size() < record.epoch.value()) s.epochs.push_back({});
  auto& es = s.epochs[record.epoch.value() - 1];
  if (record.seq > es.tail) es.tail = record.seq;
  auto& vec = state.rows[{record.session.str(), record.epoch.value()}];
  store_internal::StoredRow row{record, checksum.value_or(store_internal::RecordChecksum(record))};
  const std::uint64_t index = record.seq.value() - es.base_seq().value() - 1;
  if (index < vec.size())
    vec[index] = row;
  else
    vec.push_back(row);
}

}  // namespace agentstream::testing
