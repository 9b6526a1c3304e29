#include "streams/watchers.h"

#include <utility>
#include <vector>

namespace agentstream::streams {

std::uint64_t Watchers::Add(const std::string& path, std::function<void()> fn) {
  std::lock_guard lock(mu_);
  if (count_ >= max_) return 0;
  const std::uint64_t id = next_++;
  watchers_[path].emplace(id, std::move(fn));
  ++count_;
  return id;
}

void Watchers::Remove(const std::string& path, std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = watchers_.find(path);
  if (it == watchers_.end()) return;
  if (it->second.erase(id) > 0) --count_;
  if (it->second.empty()) watchers_.erase(it);
}

void Watchers::SetHook(std::function<void(const std::string&)> hook) {
  std::lock_guard lock(mu_);
  hook_ = std::move(hook);
}

void Watchers::Changed(const std::string& path) {
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard lock(mu_);
    if (hook_) hook_(path);
    auto it = watchers_.find(path);
    if (it == watchers_.end()) return;
    for (const auto& [id, fn] : it->second) fns.push_back(fn);
  }
  for (const auto& fn : fns) fn();
}

void Watchers::WakeAll() {
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard lock(mu_);
    for (const auto& [path, map] : watchers_)
      for (const auto& [id, fn] : map) fns.push_back(fn);
  }
  for (const auto& fn : fns) fn();
}

}  // namespace agentstream::streams
