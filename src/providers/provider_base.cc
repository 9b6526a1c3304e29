#include "providers/provider_base.h"

namespace agentstream::providers {

Status NotPending(const RequestId& request) {
  return Error(ErrorCode::kNotFound, "no pending request " + request.str());
}

ProviderBase::ProviderBase(process::EventLoop& loop, std::string name,
                           process::Millis stall_timeout, process::Millis interrupt_timeout)
    : loop_(loop),
      name_(std::move(name)),
      stall_timeout_(stall_timeout),
      interrupt_timeout_(interrupt_timeout) {}

ProviderBase::~ProviderBase() { Shutdown(); }

void ProviderBase::Shutdown() {
  *alive_ = false;
  subscribers_->Close();
}

EventSubscription ProviderBase::Subscribe(EventCallback callback) {
  return subscribers_->Add(std::move(callback));
}

void ProviderBase::Later(Done done, Status status) {
  if (!done) return;
  Post([done = std::move(done), status = std::move(status)]() mutable { done(std::move(status)); });
}

void ProviderBase::Post(std::function<void()> fn) {
  loop_.Post([alive = std::weak_ptr<bool>(alive_), fn = std::move(fn)] {
    if (alive.lock()) fn();
  });
}

Status ProviderBase::ReadyForTurn(bool busy) const {
  if (!connected_ || exited_ || closing_)
    return Error(ErrorCode::kUnavailable, name_ + " is not connected");
  if (busy) return Error(ErrorCode::kConflict, "a foreground turn is active");
  return Status::Ok();
}

void ProviderBase::PublishAll(std::vector<turn::ProviderEvent> events) {
  for (turn::ProviderEvent& e : events) Publish(std::move(e));
}

void ProviderBase::Interrupt(Done done) {
  if (exited_ || !turn_running_) return Later(std::move(done), Status::Ok());
  interrupt_waiters_.push_back(std::move(done));
  if (interrupt_waiters_.size() > 1) return;  // an interrupt is already under way
  SendCancel();
  interrupt_timer_ = loop_.timers().After(interrupt_timeout_, [this] { OnInterruptTimeout(); });
}

void ProviderBase::ResolveInterruptWaiters() {
  interrupt_timer_.reset();
  auto waiters = std::exchange(interrupt_waiters_, {});
  for (Done& d : waiters) d(Status::Ok());
}

void ProviderBase::ArmWatchdog() {
  if (!turn_running_ || AwaitingPermission() || exited_) return watchdog_.reset();
  watchdog_ = loop_.timers().After(stall_timeout_, [this] { OnStalled(); });
}

}  // namespace agentstream::providers
