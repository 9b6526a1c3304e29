// ProviderBase: the lifecycle every provider on an EventLoop shares (provider.h): the subscriber
// fan-out, completions that run after the call returns, the connection and turn flags, an
// interrupt that waits for the turn's end under a deadline, and the stall watchdog.
// ChildProcessProvider (child_process_provider.h) adds the runtime process on top; a provider
// writes its wire protocol, its event mapping and the hooks below. docs/providers.md describes
// the layering.
//
// Threading: as AgentProvider (one EventLoop thread). Completions posted by Later() and the
// timers' callbacks never run after the provider is destroyed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "process/event_loop.h"
#include "providers/provider.h"

namespace agentstream::providers {

// The runtime's open permission requests, by id, each with what the provider needs to answer it
// on the wire (`Wire`: a JSON-RPC id, the offered options, ...).
template <typename Wire = std::monostate>
class PermissionTable {
 public:
  struct Entry {
    PendingPermission info;
    Wire wire;
  };

  void Add(PendingPermission info, Wire wire = {}) {
    RequestId id = info.request_id;
    entries_[std::move(id)] = Entry{std::move(info), std::move(wire)};
  }
  // Removes the request and returns it; nullopt when it is not pending.
  std::optional<Entry> Take(const RequestId& id) {
    auto node = entries_.extract(id);
    if (node.empty()) return std::nullopt;
    return std::move(node.mapped());
  }
  bool Erase(const RequestId& id) { return entries_.erase(id) > 0; }
  // Removes every request and returns them in id order.
  std::map<RequestId, Entry> TakeAll() { return std::exchange(entries_, {}); }
  void Clear() { entries_.clear(); }
  bool empty() const { return entries_.empty(); }
  std::vector<PendingPermission> List() const {
    std::vector<PendingPermission> out;
    for (const auto& [id, entry] : entries_) out.push_back(entry.info);
    return out;
  }

 private:
  std::map<RequestId, Entry> entries_;
};

// RespondToPermission's answer for a request that is not pending (kNotFound).
Status NotPending(const RequestId& request);

class ProviderBase : public AgentProvider {
 public:
  EventSubscription Subscribe(EventCallback callback) final;

  // Cancels the running turn: SendCancel(), then OnInterruptTimeout() when the turn has not ended
  // within the interrupt timeout. `done` runs at ResolveInterruptWaiters(); at once (OK) when no
  // turn runs or the runtime is gone. Waiters that come while an interrupt is under way join it.
  void Interrupt(Done done) final;

 protected:
  // `name` names the runtime in messages ("claude produced no output ..."). `loop` must outlive
  // the provider.
  ProviderBase(process::EventLoop& loop, std::string name, process::Millis stall_timeout,
               process::Millis interrupt_timeout);
  ~ProviderBase() override;
  ProviderBase(const ProviderBase&) = delete;
  ProviderBase& operator=(const ProviderBase&) = delete;

  void Later(Done done, Status status) final;
  // Like Later() for any callback: runs `fn` on the loop after the current call, unless the
  // provider is destroyed first.
  void Post(std::function<void()> fn);
  // Wraps `fn` so that it does nothing once the provider is destroyed (for callbacks that other
  // objects, such as a shared server or a terminal, run later).
  template <typename Fn>
  auto WhileAlive(Fn fn) {
    return [alive = std::weak_ptr<bool>(alive_), fn = std::move(fn)](auto&&... args) mutable {
      if (alive.lock()) fn(std::forward<decltype(args)>(args)...);
    };
  }
  // StartTurn()'s admission: kUnavailable unless connected (not exited, not closing), kConflict
  // while `busy` (a foreground turn is active), else OK.
  Status ReadyForTurn(bool busy) const;
  void Publish(turn::ProviderEvent event) { subscribers_->Publish(std::move(event)); }
  void PublishAll(std::vector<turn::ProviderEvent> events);
  // Guarantee 5: no subscriber callback runs after this (Close() and the destructor call it).
  void CloseSubscribers() { subscribers_->Close(); }
  // Posted completions and subscribers stop here; a derived destructor that tears down more than
  // its members calls it first (idempotent).
  void Shutdown();

  // The interrupt under way is complete: its deadline is cleared and every waiter gets OK.
  void ResolveInterruptWaiters();
  bool interrupting() const { return !interrupt_waiters_.empty(); }

  // Runs the stall watchdog from now while a turn runs, no permission is pending and the runtime
  // lives; otherwise stops it. Called on every sign of life from the runtime.
  void ArmWatchdog();
  void StopWatchdog() { watchdog_.reset(); }

  // Hooks.
  // Interrupt(): the protocol's cancel of the running turn.
  virtual void SendCancel() = 0;
  // The turn did not end within the interrupt timeout (an interrupt is under way).
  virtual void OnInterruptTimeout() = 0;
  // The runtime was silent for the stall timeout during a turn.
  virtual void OnStalled() = 0;
  // The runtime waits on a permission answer: the watchdog sleeps meanwhile.
  virtual bool AwaitingPermission() const = 0;

  process::EventLoop& loop_;
  const std::string name_;
  const process::Millis stall_timeout_, interrupt_timeout_;
  bool connected_ = false;     // started and not exited or closing
  bool closing_ = false;       // Close() was called
  bool exited_ = false;        // the runtime is gone
  bool turn_running_ = false;  // the runtime is in a turn

 private:
  std::shared_ptr<SubscriberList> subscribers_ = std::make_shared<SubscriberList>();
  std::vector<Done> interrupt_waiters_;
  std::unique_ptr<process::TimerHandle> watchdog_, interrupt_timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for posted callbacks
};

}  // namespace agentstream::providers
