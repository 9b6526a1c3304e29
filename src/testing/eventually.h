// Test support (header-only, for tests only): polling for a condition that another thread or
// process makes true.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace agentstream::test_support {

// Polls `pred` every 10 ms until it is true (true) or `timeout` has passed (false). The default
// is generous: it is how long a failing test waits, and sanitizer builds are slow.
inline bool Eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace agentstream::test_support
