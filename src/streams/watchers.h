// The live readers of a stream store: watchers per stream path (long-polls and SSE readers
// waiting for a change) and one change hook (the subscriptions), bounded in number. Both stores
// (memory_stream_store.h, postgres_streams.h) keep theirs here. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace agentstream::streams {

class Watchers {
 public:
  explicit Watchers(std::size_t max_watchers) : max_(max_watchers) {}

  // 0 when `max_watchers` are registered.
  std::uint64_t Add(const std::string& path, std::function<void()> fn);
  void Remove(const std::string& path, std::uint64_t id);
  void SetHook(std::function<void(const std::string&)> hook);

  // Tells the hook and then every watcher of `path` (outside the lock, so a watcher may call
  // back into the store).
  void Changed(const std::string& path);
  // Wakes every watcher of every path (after changes may have been missed); the hook is not told.
  void WakeAll();

 private:
  const std::size_t max_;
  std::mutex mu_;  // guards everything below
  std::unordered_map<std::string, std::map<std::uint64_t, std::function<void()>>> watchers_;
  std::size_t count_ = 0;
  std::uint64_t next_ = 1;
  std::function<void(const std::string&)> hook_;
};

}  // namespace agentstream::streams
