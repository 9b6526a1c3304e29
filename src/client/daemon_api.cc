#include "client/daemon_api.h"

#include <boost/json/serialize.hpp>

#include "api/api_json.h"
#include "client/endpoint.h"
#include "system/random_id.h"

namespace agentstream::client {

namespace {
// Reply bodies are bounded by the transport (TransportOptions::max_body_bytes).
constexpr std::size_t kMaxReplyJsonBytes = std::size_t{64} << 20;
}  // namespace

std::string NewClientId(std::string_view prefix) { return system::RandomId(prefix); }

std::string DaemonApi::AgentPath(std::string_view agent, std::string_view suffix) {
  return "/v1/agents/" + PercentEncode(agent) + std::string(suffix);
}

Result<boost::json::value> DaemonApi::Call(std::string_view method, const std::string& target,
                                           const boost::json::value* body) {
  const std::string text = body == nullptr ? std::string() : boost::json::serialize(*body);
  AS_ASSIGN_OR_RETURN(HttpResponse response, http_.Request(method, target, text));
  const bool ok = response.status >= 200 && response.status < 300;
  if (response.body.empty()) {
    if (ok) return boost::json::value();
    return Error(ErrorCode::kInternal, "daemon: HTTP " + std::to_string(response.status) + " for " +
                                           std::string(method) + " " + target);
  }
  auto parsed = api::ParseJson(response.body, kMaxReplyJsonBytes);
  if (ok) {
    if (!parsed.ok()) {
      return Error(ErrorCode::kInvalidArgument, "daemon: the reply to " + std::string(method) +
                                                    " " + target +
                                                    " is not JSON: " + parsed.status().message());
    }
    return std::move(parsed).value();
  }
  const Status status =
      parsed.ok() ? api::ErrorFromJson(*parsed, response.status)
                  : Error(ErrorCode::kInternal, "HTTP " + std::to_string(response.status) + ": " +
                                                    response.body.substr(0, 200));
  return Error(status.code(), "daemon: " + status.ToString());
}

}  // namespace agentstream::client
