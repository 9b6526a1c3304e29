// AddressLimiter: how many connections of each client address may be waiting for a request or
// reading one (the request head and body) at once. Those are the connections a client can hold
// without doing anything (a half-sent header, an idle keep-alive); a bound per address keeps one
// client from taking every connection slot (ServerOptions::max_waiting_per_address). Connections
// answering a request, streaming a live read or running a WebSocket do not hold a place, so many
// subscribers behind one address (a load balancer, local clients on 127.0.0.1) are not limited.
//
// Thread-safe. Places are taken and returned through AddressSlot.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace agentstream::server {

class AddressLimiter {
 public:
  explicit AddressLimiter(std::size_t max_per_address) : max_(max_per_address) {}

  // Takes one place of `address`; false (nothing taken) when it holds max_per_address already.
  bool TryAcquire(const std::string& address);
  // Returns a place taken by TryAcquire.
  void Release(const std::string& address);
  // The places `address` holds.
  std::size_t held(const std::string& address) const;

 private:
  const std::size_t max_;
  mutable std::mutex mu_;
  std::map<std::string, std::size_t> held_;  // guarded by mu_; no entry for zero
};

// One place of one address, returned on destruction or Release(). Movable, not copyable; the
// limiter must outlive it.
class AddressSlot {
 public:
  AddressSlot() = default;
  AddressSlot(AddressSlot&& other) noexcept { *this = std::move(other); }
  AddressSlot& operator=(AddressSlot&& other) noexcept;
  AddressSlot(const AddressSlot&) = delete;
  AddressSlot& operator=(const AddressSlot&) = delete;
  ~AddressSlot() { Release(); }

  // Takes a place of `address` unless one is held already; false when the address is full.
  bool Acquire(AddressLimiter& limiter, const std::string& address);
  void Release();
  bool held() const { return limiter_ != nullptr; }

 private:
  AddressLimiter* limiter_ = nullptr;  // null: no place held
  std::string address_;
};

}  // namespace agentstream::server
