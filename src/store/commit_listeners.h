// Internal to the store module: the registry of commit listeners every backend keeps.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

#include "store/event_log.h"

namespace agentstream::store_internal {

// Thread-safe. Notify() runs every listener in registration order while holding the registry's
// lock, so a listener must not register or unregister. The registry must outlive its
// subscriptions (backends keep it in a shared_ptr that subscriptions share).
class CommitListeners : public std::enable_shared_from_this<CommitListeners> {
 public:
  ListenerRegistration Add(CommitListener listener) {
    std::lock_guard lock(mu_);
    const std::uint64_t id = next_id_++;
    listeners_.emplace_back(id, std::move(listener));
    return ListenerRegistration([weak = weak_from_this(), id] {
      if (auto self = weak.lock()) {
        std::lock_guard inner(self->mu_);
        self->listeners_.remove_if([id](const auto& entry) { return entry.first == id; });
      }
    });
  }

  void Notify(const CommitNotice& notice) {
    std::lock_guard lock(mu_);
    for (auto& [id, listener] : listeners_) listener(notice);
  }

 private:
  std::mutex mu_;  // guards listeners_ and next_id_
  std::list<std::pair<std::uint64_t, CommitListener>> listeners_;
  std::uint64_t next_id_ = 1;
};

}  // namespace agentstream::store_internal
