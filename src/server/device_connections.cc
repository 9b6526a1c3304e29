#include "server/device_connections.h"

#include <utility>
#include <vector>

namespace agentstream::server {

DeviceConnections::Registration& DeviceConnections::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    Reset();
    owner_ = std::exchange(other.owner_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void DeviceConnections::Registration::Reset() {
  if (owner_ != nullptr) owner_->Remove(id_);
  owner_ = nullptr;
  id_ = 0;
}

DeviceConnections::Registration DeviceConnections::Add(const std::string& device_id,
                                                       std::function<void()> close) {
  Registration out;
  std::lock_guard lock(mu_);
  if (entries_.size() >= max_) return out;
  out.owner_ = this;
  out.id_ = next_id_++;
  entries_.emplace(out.id_, Entry{device_id, std::move(close)});
  return out;
}

std::size_t DeviceConnections::CloseDevice(const std::string& device_id) {
  std::vector<std::function<void()>> closes;
  {
    std::lock_guard lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.device_id == device_id) {
        closes.push_back(std::move(it->second.close));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& close : closes) close();
  return closes.size();
}

std::size_t DeviceConnections::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void DeviceConnections::Remove(std::uint64_t id) {
  std::lock_guard lock(mu_);
  entries_.erase(id);
}

}  // namespace agentstream::server
