// Subscriber fan-out with the delivery guarantees of the provider contract (provider.h):
// provider order, serialized delivery (re-entrant publishes are queued, never nested),
// subscriber error isolation, and deterministic cleanup (after Cancel / Close no callback runs).
// Not thread-safe: used on one EventLoop thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "core/turn/provider_event.h"

namespace agentstream::providers {

using EventCallback = std::function<void(const turn::ProviderEvent&)>;

class SubscriberList;

// Owns one subscription to a provider's events (AgentProvider::Subscribe): destroying it (or
// Cancel) unsubscribes. Safe to outlive the list.
class [[nodiscard]] EventSubscription {
 public:
  EventSubscription() = default;
  EventSubscription(std::weak_ptr<SubscriberList> list, std::uint64_t id)
      : list_(std::move(list)), id_(id) {}
  EventSubscription(EventSubscription&& other) noexcept { *this = std::move(other); }
  EventSubscription& operator=(EventSubscription&& other) noexcept;
  EventSubscription(const EventSubscription&) = delete;
  EventSubscription& operator=(const EventSubscription&) = delete;
  ~EventSubscription() { Cancel(); }
  void Cancel();

 private:
  std::weak_ptr<SubscriberList> list_;
  std::uint64_t id_ = 0;
};

class SubscriberList : public std::enable_shared_from_this<SubscriberList> {
 public:
  EventSubscription Add(EventCallback callback);
  void Remove(std::uint64_t id);
  // Delivers `event` to every current subscriber, in subscription order. Called from inside a
  // callback, it queues the event and returns; the outer call delivers it after the current one.
  void Publish(turn::ProviderEvent event);
  // Removes every subscriber and drops queued events; later Publish calls do nothing.
  void Close();
  bool closed() const { return closed_; }
  std::size_t size() const { return callbacks_.size(); }
  // Exceptions thrown by subscribers so far (each was caught and skipped).
  std::uint64_t subscriber_errors() const { return errors_; }

 private:
  std::map<std::uint64_t, EventCallback> callbacks_;
  std::uint64_t next_id_ = 1;
  std::deque<turn::ProviderEvent> queue_;
  bool delivering_ = false;
  bool closed_ = false;
  std::uint64_t errors_ = 0;
};

}  // namespace agentstream::providers
