// Runs an EventLoop on the test thread until an asynchronous call answers.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "core/status.h"
#include "process/event_loop.h"
#include "runtime/agent_manager.h"

namespace agentstream::runtime::testing {

// Starts the call and runs `loop` until its callback ran (kInternal "timed out" after `limit`).
template <class T>
Result<T> RunForResult(process::EventLoop& loop,
                       const std::function<void(const Callback<T>&)>& start,
                       std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  auto out = std::make_shared<std::optional<Result<T>>>();
  start([out](Result<T> r) { *out = std::move(r); });
  if (!loop.RunUntil([&] { return out->has_value(); }, limit))
    return Error(ErrorCode::kInternal, "timed out");
  return std::move(**out);
}

inline Status RunForStatus(process::EventLoop& loop,
                           const std::function<void(const StatusCallback&)>& start) {
  auto out = std::make_shared<std::optional<Status>>();
  start([out](Status s) { *out = std::move(s); });
  if (!loop.RunUntil([&] { return out->has_value(); }, std::chrono::seconds(20)))
    return Error(ErrorCode::kInternal, "timed out");
  return **out;
}

}  // namespace agentstream::runtime::testing
