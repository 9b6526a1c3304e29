#include "providers/subscribers.h"

#include <cstdio>
#include <exception>
#include <vector>

namespace agentstream::providers {

EventSubscription& EventSubscription::operator=(EventSubscription&& other) noexcept {
  if (this != &other) {
    Cancel();
    list_ = std::move(other.list_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void EventSubscription::Cancel() {
  if (auto list = list_.lock()) list->Remove(id_);
  list_.reset();
  id_ = 0;
}

EventSubscription SubscriberList::Add(EventCallback callback) {
  if (closed_) return {};
  const std::uint64_t id = next_id_++;
  callbacks_.emplace(id, std::move(callback));
  return EventSubscription(weak_from_this(), id);
}

void SubscriberList::Remove(std::uint64_t id) { callbacks_.erase(id); }

void SubscriberList::Publish(turn::ProviderEvent event) {
  if (closed_) return;
  queue_.push_back(std::move(event));
  if (delivering_) return;
  delivering_ = true;
  auto self = shared_from_this();  // a callback may drop the provider that owns this list
  while (!queue_.empty() && !closed_) {
    const turn::ProviderEvent next = std::move(queue_.front());
    queue_.pop_front();
    std::vector<std::uint64_t> ids;
    for (const auto& [id, cb] : callbacks_) ids.push_back(id);
    for (std::uint64_t id : ids) {
      auto it = callbacks_.find(id);  // unsubscribed by an earlier callback: skipped
      if (it == callbacks_.end()) continue;
      EventCallback cb = it->second;  // a copy: the callback may unsubscribe itself
      try {
        cb(next);
      } catch (const std::exception& e) {
        ++errors_;
        std::fprintf(stderr, "agentstream: provider subscriber threw: %s\n", e.what());
      } catch (...) {
        ++errors_;
        std::fprintf(stderr, "agentstream: provider subscriber threw\n");
      }
      if (closed_) break;
    }
  }
  delivering_ = false;
}

void SubscriberList::Close() {
  closed_ = true;
  callbacks_.clear();
  queue_.clear();
}

}  // namespace agentstream::providers
