#include "server/address_limiter.h"

#include <utility>

namespace agentstream::server {

bool AddressLimiter::TryAcquire(const std::string& address) {
  std::lock_guard lock(mu_);
  std::size_t& held = held_[address];
  if (held >= max_) {
    if (held == 0) held_.erase(address);
    return false;
  }
  ++held;
  return true;
}

void AddressLimiter::Release(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = held_.find(address);
  if (it == held_.end()) return;
  if (--it->second == 0) held_.erase(it);
}

std::size_t AddressLimiter::held(const std::string& address) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(address);
  return it == held_.end() ? 0 : it->second;
}

AddressSlot& AddressSlot::operator=(AddressSlot&& other) noexcept {
  if (this == &other) return *this;
  Release();
  limiter_ = std::exchange(other.limiter_, nullptr);
  address_ = std::move(other.address_);
  return *this;
}

bool AddressSlot::Acquire(AddressLimiter& limiter, const std::string& address) {
  if (limiter_ != nullptr) return true;
  if (!limiter.TryAcquire(address)) return false;
  limiter_ = &limiter;
  address_ = address;
  return true;
}

void AddressSlot::Release() {
  if (limiter_ == nullptr) return;
  std::exchange(limiter_, nullptr)->Release(address_);
}

}  // namespace agentstream::server
