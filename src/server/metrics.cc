#include "server/metrics.h"

#include <fmt/format.h>

namespace agentstream::server {

void Metrics::Request(const std::string& route, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
}

std::string Metrics::Render(const HubStats& hub, const LogStats& log) const {
  std::string out;
  auto gauge = [&out](const char* name, const char* help, auto value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, value);
  };
  auto counter = [&out](const char* name, const char* help, auto value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
  };
  gauge("agentstream_connections_open", "Open HTTP connections.", connections_open_.load());
  counter("agentstream_connections_total", "Accepted connections.", connections_total_.load());
  gauge("agentstream_websockets_open", "Open WebSocket connections.", websockets_open_.load());
  gauge("agentstream_subscribers", "Live subscribers of the fan-out hub.", hub.subscribers);
  counter("agentstream_hub_batches_total", "Event batches built from commits.", hub.batches);
  counter("agentstream_frames_sent_total", "SSE and WebSocket frames sent.", frames_sent_.load());
  counter("agentstream_slow_clients_dropped_total",
          "Clients disconnected because their send queue exceeded its bound.",
          slow_clients_dropped_.load());
  counter("agentstream_log_commits_total", "Log transactions committed.", log.commits);
  counter("agentstream_log_appends_total", "Log appends acknowledged.", log.appends);
  counter("agentstream_log_events_total", "Events made durable.", log.events);
  counter("agentstream_log_commit_micros_total", "Time spent committing.", log.commit_micros);
  counter("agentstream_log_sync_micros_total", "Time spent in the final COMMIT.", log.sync_micros);
  out += "# HELP agentstream_http_requests_total HTTP requests by route and status.\n";
  out += "# TYPE agentstream_http_requests_total counter\n";
  std::lock_guard lock(mu_);
  for (const auto& [key, n] : requests_) {
    out += fmt::format("agentstream_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n",
                       key.first, key.second, n);
  }
  return out;
}

}  // namespace agentstream::server
