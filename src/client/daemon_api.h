// DaemonApi: the daemon's /v1 JSON endpoints as calls that return parsed JSON or a Status. It
// builds the targets (ids and cursors percent-encoded), sends JSON bodies, and turns an HTTP
// error reply ({"error":{"code","message"}}) into a Status with the daemon's code and message.
//
// Threading: as the Transport it uses (one thread at a time).
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "client/transport.h"
#include "core/status.h"

namespace agentstream::client {

class DaemonApi {
 public:
  // `http` must outlive the DaemonApi.
  explicit DaemonApi(Transport& http) : http_(http) {}

  // `method target` with `body` (none when null). The parsed reply of a 2xx answer (null for an
  // empty body). Errors: the transport's (kUnavailable, ...); for an HTTP error status, the
  // daemon's error code and a message "daemon: CODE: MESSAGE"; kInvalidArgument when a 2xx
  // body is not JSON.
  Result<boost::json::value> Call(std::string_view method, const std::string& target,
                                  const boost::json::value* body = nullptr);

  // "/v1/agents/ID" (ID percent-encoded), plus `suffix` ("/messages", ...).
  static std::string AgentPath(std::string_view agent, std::string_view suffix = {});

  Transport& http() { return http_; }

 private:
  Transport& http_;
};

// A fresh random id "PREFIX_<16 hex digits>", for a clientMessageId or a clientRequestId.
std::string NewClientId(std::string_view prefix);

}  // namespace agentstream::client
