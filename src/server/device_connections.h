// DeviceConnections: the open connections of paired devices (WebSocket, SSE, long-poll and
// keep-alive HTTP), by device id, so that a revoked device's connections are closed at once
// (docs/remote.md, "Pairing a phone"). Bounded: at most `max_entries` registrations (the
// server's connection bound); a further one is refused.
//
// Thread-safe. A close callback runs on the thread that calls CloseDevice, outside the lock; it
// must only post the close to its connection's executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace agentstream::server {

class DeviceConnections {
 public:
  explicit DeviceConnections(std::size_t max_entries) : max_(max_entries) {}

  // One registration; unregisters on destruction or Reset(). Movable, not copyable; the
  // registry must outlive it.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept { *this = std::move(other); }
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { Reset(); }
    void Reset();
    bool active() const { return owner_ != nullptr; }

   private:
    friend class DeviceConnections;
    DeviceConnections* owner_ = nullptr;
    std::uint64_t id_ = 0;
  };

  // Registers `close` for a connection of `device_id`; an inactive Registration when full.
  Registration Add(const std::string& device_id, std::function<void()> close);
  // Runs (and forgets) the close callback of every connection of `device_id`; returns how many.
  std::size_t CloseDevice(const std::string& device_id);
  std::size_t size() const;

 private:
  struct Entry {
    std::string device_id;
    std::function<void()> close;
  };
  void Remove(std::uint64_t id);

  const std::size_t max_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Entry> entries_;  // guarded by mu_
  std::uint64_t next_id_ = 1;               // guarded by mu_
};

}  // namespace agentstream::server
