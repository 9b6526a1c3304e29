// DeviceRoutes: pairing and paired devices (docs/protocol.md, "Devices"; docs/remote.md,
// "Pairing a phone").
//
//   POST   /v1/pairings            a one-time pairing code and its link (the owner only)
//   POST   /v1/pairings/exchange   a code for a device token (no credential; rate-limited)
//   GET    /v1/whoami              the caller: the owner or a device
//   GET    /v1/devices             every paired device, revoked ones included
//   PATCH  /v1/devices/{id}        rename (the owner, or that device itself)
//   DELETE /v1/devices/{id}        revoke (the owner, or that device itself)
//
// Also the transport's device check (Admit): a credential that is not the owner's token is
// looked up as a device token. Transport-free, like ApiRouter; calls block for at most one store
// round trip on the calling (I/O) thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "devices/device_service.h"
#include "server/http_types.h"

namespace agentstream::server {

// The bodies the routes read, parsed strictly (a member they do not define is refused).
struct PairingRequest {
  std::string name = "device";
  std::int64_t expires_in_ms = devices::kDefaultPairingLifetimeMs;
};
Result<PairingRequest> ParsePairingRequest(std::string_view body);  // {"name","expiresInMs"}
Result<std::string> ParseExchangeRequest(std::string_view body);    // {"code"} -> the code
Result<std::string> ParseRenameRequest(std::string_view body);      // {"name"} -> the name

// The Device JSON of docs/protocol.md; `current`: it is the caller.
boost::json::object DeviceToJson(const DeviceRecord& device, bool current);

// The base URL of pairing links: `public_url` when set, else the request's own origin (scheme
// and Host as forwarded by a trusted proxy). kInvalidArgument for a base that is plain http to a
// host that is not loopback, naming the three supported ways (docs/remote.md).
Result<std::string> PairingBaseUrl(std::string_view public_url, const HttpRequest& request);

// True for `POST /v1/pairings/exchange`, which needs no credential.
bool IsPairingExchange(const HttpRequest& request);

class DeviceRoutes {
 public:
  // `devices` outlives the routes. `public_url`: `serve --public-url` ("" for none).
  DeviceRoutes(devices::DeviceService& devices, std::string public_url);

  // For a request the owner check refused: when its bearer token or `query_token` is a valid
  // device token, sets request.device_id and returns nullopt; when it is a device token that is
  // unknown or revoked, or the client failed too often, or the store failed, the response to
  // send. With no device credential, returns nullopt and leaves the request as it was.
  std::optional<HttpResponse> Admit(HttpRequest& request, std::string_view query_token,
                                    std::string_view user_agent);

  // Handles the request when it is one of the routes above (true); else leaves it (false).
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg,
              std::string_view user_agent, const std::function<void(HttpResponse)>& reply);

 private:
  HttpResponse CreatePairing(const HttpRequest& request);
  HttpResponse Exchange(const HttpRequest& request, std::string_view user_agent);
  HttpResponse WhoAmI(const HttpRequest& request);
  HttpResponse List(const HttpRequest& request);
  HttpResponse Change(const HttpRequest& request, const std::string& id);

  devices::DeviceService& devices_;
  const std::string public_url_;
};

}  // namespace agentstream::server
