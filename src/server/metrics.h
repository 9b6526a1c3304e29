// Server counters rendered in the Prometheus text format by GET /metrics. Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "server/hub.h"
#include "store/event_log.h"

namespace agentstream::server {

class Metrics {
 public:
  void ConnectionOpened() { ++connections_open_, ++connections_total_; }
  void ConnectionClosed() { --connections_open_; }
  // `route` is a pattern ("/v1/agents/{id}/events"), never a raw path (bounded label set).
  void Request(const std::string& route, int status);
  void FramesSent(std::uint64_t n) { frames_sent_ += n; }
  void SlowClientDropped() { ++slow_clients_dropped_; }
  void WebSocketOpened() { ++websockets_open_; }
  void WebSocketClosed() { --websockets_open_; }

  std::size_t connections_open() const {
    return static_cast<std::size_t>(std::max<std::int64_t>(0, connections_open_.load()));
  }
  std::uint64_t slow_clients_dropped() const { return slow_clients_dropped_; }
  std::uint64_t frames_sent() const { return frames_sent_; }

  std::string Render(const HubStats& hub, const LogStats& log) const;

 private:
  std::atomic<std::int64_t> connections_open_{0};
  std::atomic<std::uint64_t> connections_total_{0};
  std::atomic<std::int64_t> websockets_open_{0};
  std::atomic<std::uint64_t> frames_sent_{0};
  std::atomic<std::uint64_t> slow_clients_dropped_{0};
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;  // guarded by mu_
};

}  // namespace agentstream::server
