#include "store/event_log.h"

#include <future>

namespace agentstream {

ListenerRegistration& ListenerRegistration::operator=(ListenerRegistration&& other) noexcept {
  if (this != &other) {
    Reset();
    cancel_ = std::move(other.cancel_);
    other.cancel_ = nullptr;
  }
  return *this;
}

void ListenerRegistration::Reset() {
  if (cancel_) {
    auto cancel = std::move(cancel_);
    cancel_ = nullptr;
    cancel();
  }
}

Result<AppendResult> EventLog::Append(AppendRequest request) {
  std::promise<Result<AppendResult>> promise;
  auto future = promise.get_future();
  AppendAsync(std::move(request),
              [&promise](Result<AppendResult> result) { promise.set_value(std::move(result)); });
  return future.get();
}

Status EventLog::SaveCheckpoint(const SessionId&, const Checkpoint&) {
  return Error(ErrorCode::kUnavailable, "this log does not store checkpoints");
}

Result<std::optional<Checkpoint>> EventLog::LoadCheckpoint(const SessionId&) {
  return std::optional<Checkpoint>();
}

}  // namespace agentstream
