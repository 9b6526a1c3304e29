#include "server/device_routes.h"

#include <boost/json/value.hpp>
#include <string_view>
#include <utility>

#include "api/api_json.h"
#include "api/json_members.h"
#include "net/http_url.h"
#include "server/api_router.h"
#include "server/forwarded.h"
#include "server/security.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

// The body as a JSON object (an empty body is {}).
Result<json::object> BodyObject(std::string_view body, std::string_view what) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return json::object();
  AS_ASSIGN_OR_RETURN(json::value value, api::ParseJson(body));
  if (!value.is_object())
    return Error(ErrorCode::kInvalidArgument, std::string(what) + " must be a JSON object");
  return std::move(value.as_object());
}

Result<std::string> StringMember(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr)
    return Error(ErrorCode::kInvalidArgument, std::string(name) + " is required");
  if (!value->is_string())
    return Error(ErrorCode::kInvalidArgument, std::string(name) + " must be a string");
  return std::string(value->as_string());
}

HttpResponse Unauthorized(std::string_view message) {
  return CodedErrorResponse(401, "unauthorized", message);
}

HttpResponse Forbidden(std::string_view message) {
  return CodedErrorResponse(403, "forbidden", message);
}

// The response of a service error: kUnauthenticated as 401 `unauthorized`, the rest as usual.
HttpResponse ServiceError(const Status& status) {
  if (status.code() == ErrorCode::kUnauthenticated) return Unauthorized(status.message());
  return ErrorResponse(status);
}

constexpr std::string_view kPairingMembers[] = {"name", "expiresInMs"};
constexpr std::string_view kExchangeMembers[] = {"code"};
constexpr std::string_view kRenameMembers[] = {"name"};

}  // namespace

Result<PairingRequest> ParsePairingRequest(std::string_view body) {
  AS_ASSIGN_OR_RETURN(json::object object, BodyObject(body, "a pairing request"));
  AS_RETURN_IF_ERROR(api::RefuseUnknownMembers(object, kPairingMembers, "a pairing request"));
  PairingRequest out;
  if (object.contains("name")) {
    AS_ASSIGN_OR_RETURN(out.name, StringMember(object, "name"));
  }
  if (const json::value* expires = object.if_contains("expiresInMs")) {
    if (!expires->is_int64() && !expires->is_uint64())
      return Error(ErrorCode::kInvalidArgument, "expiresInMs must be an integer (milliseconds)");
    const bool in_range =
        expires->is_int64() ? true : expires->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX);
    if (!in_range)
      return Error(ErrorCode::kInvalidArgument, "expiresInMs must be 10000 to 86400000");
    out.expires_in_ms =
        expires->is_int64() ? expires->as_int64() : static_cast<std::int64_t>(expires->as_uint64());
  }
  AS_RETURN_IF_ERROR(devices::CheckDeviceName(out.name));
  if (out.expires_in_ms < devices::kMinPairingLifetimeMs ||
      out.expires_in_ms > devices::kMaxPairingLifetimeMs)
    return Error(ErrorCode::kInvalidArgument,
                 "expiresInMs must be 10000 to 86400000 (10 s to 24 h)");
  return out;
}

Result<std::string> ParseExchangeRequest(std::string_view body) {
  AS_ASSIGN_OR_RETURN(json::object object, BodyObject(body, "a pairing exchange"));
  AS_RETURN_IF_ERROR(api::RefuseUnknownMembers(object, kExchangeMembers, "a pairing exchange"));
  return StringMember(object, "code");
}

Result<std::string> ParseRenameRequest(std::string_view body) {
  AS_ASSIGN_OR_RETURN(json::object object, BodyObject(body, "a device change"));
  AS_RETURN_IF_ERROR(api::RefuseUnknownMembers(object, kRenameMembers, "a device change"));
  AS_ASSIGN_OR_RETURN(std::string name, StringMember(object, "name"));
  AS_RETURN_IF_ERROR(devices::CheckDeviceName(name));
  return name;
}

json::object DeviceToJson(const DeviceRecord& device, bool current) {
  return json::object{{"id", device.id},
                      {"name", device.name},
                      {"createdMs", device.created_ms},
                      {"lastSeenMs", device.last_seen_ms},
                      {"userAgent", device.user_agent},
                      {"revoked", device.revoked()},
                      {"revokedMs", device.revoked_ms},
                      {"current", current}};
}

Result<std::string> PairingBaseUrl(std::string_view public_url, const HttpRequest& request) {
  std::string base(public_url);
  if (base.empty()) {
    base = OriginOf(request.scheme, request.effective_host);
    if (base.empty())
      return Error(ErrorCode::kInvalidArgument,
                   "the request names no usable Host to build the pairing link from: give serve "
                   "--public-url");
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  AS_ASSIGN_OR_RETURN(net::HttpUrl url, net::ParseHttpUrl(base));
  if (!url.tls && !IsLoopbackHost(url.host)) {
    return Error(ErrorCode::kInvalidArgument,
                 "pairing over plain http to " + url.host +
                     " would send the device token in the clear; reach the daemon through a "
                     "private network such as Tailscale or WireGuard (with its HTTPS name), a "
                     "reverse proxy with TLS such as Caddy, or native TLS with serve --tls-cert "
                     "and --tls-key, and give serve --public-url (docs/remote.md)");
  }
  return base;
}

bool IsPairingExchange(const HttpRequest& request) {
  return request.method == "POST" && request.path == "/v1/pairings/exchange";
}

DeviceRoutes::DeviceRoutes(devices::DeviceService& devices, std::string public_url)
    : devices_(devices), public_url_(std::move(public_url)) {}

std::optional<HttpResponse> DeviceRoutes::Admit(HttpRequest& request, std::string_view query_token,
                                                std::string_view user_agent) {
  std::string_view credential = query_token;
  if (auto bearer = BearerToken(request.authorization)) credential = *bearer;
  if (credential.substr(0, devices::kDeviceTokenPrefix.size()) != devices::kDeviceTokenPrefix)
    return std::nullopt;
  Result<std::optional<DeviceRecord>> device =
      devices_.Authenticate(credential, user_agent, request.client_address);
  if (!device.ok()) return ErrorResponse(device.status());
  if (!device->has_value()) return Unauthorized("the device token is unknown or revoked");
  request.device_id = (*device)->id;
  return std::nullopt;
}

bool DeviceRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                          std::string_view user_agent,
                          const std::function<void(HttpResponse)>& reply) {
  if (seg.size() < 2 || seg[0] != "v1") return false;
  const std::string& m = request.method;
  if (seg[1] == "pairings" && seg.size() == 2 && m == "POST") {
    reply(CreatePairing(request));
  } else if (seg[1] == "pairings" && seg.size() == 3 && seg[2] == "exchange" && m == "POST") {
    reply(Exchange(request, user_agent));
  } else if (seg[1] == "whoami" && seg.size() == 2 && m == "GET") {
    reply(WhoAmI(request));
  } else if (seg[1] == "devices" && seg.size() == 2 && m == "GET") {
    reply(List(request));
  } else if (seg[1] == "devices" && seg.size() == 3 && (m == "PATCH" || m == "DELETE")) {
    reply(Change(request, seg[2]));
  } else {
    return false;
  }
  return true;
}

HttpResponse DeviceRoutes::CreatePairing(const HttpRequest& request) {
  if (!request.device_id.empty())
    return Forbidden("only the owner creates pairing codes, not a paired device");
  Result<PairingRequest> parsed = ParsePairingRequest(request.body);
  if (!parsed.ok()) return ErrorResponse(parsed.status());
  Result<std::string> base = PairingBaseUrl(public_url_, request);
  if (!base.ok()) return ErrorResponse(base.status());
  Result<devices::NewPairing> pairing = devices_.CreatePairing(parsed->name, parsed->expires_in_ms);
  if (!pairing.ok()) return ErrorResponse(pairing.status());
  return JsonValueResponse(json::object{{"code", pairing->code},
                                        {"url", *base + "/#pair=" + pairing->code},
                                        {"expiresMs", pairing->expires_ms}},
                           201);
}

HttpResponse DeviceRoutes::Exchange(const HttpRequest& request, std::string_view user_agent) {
  Result<std::string> code = ParseExchangeRequest(request.body);
  if (!code.ok()) return ErrorResponse(code.status());
  Result<devices::PairedDevice> paired =
      devices_.Exchange(*code, user_agent, request.client_address);
  if (!paired.ok()) return ServiceError(paired.status());
  return JsonValueResponse(
      json::object{{"token", paired->token}, {"device", DeviceToJson(paired->device, true)}}, 201);
}

HttpResponse DeviceRoutes::WhoAmI(const HttpRequest& request) {
  if (request.device_id.empty()) return JsonValueResponse(json::object{{"principal", "owner"}});
  Result<DeviceRecord> device = devices_.Get(request.device_id);
  if (!device.ok()) return ErrorResponse(device.status());
  return JsonValueResponse(
      json::object{{"principal", "device"}, {"device", DeviceToJson(*device, true)}});
}

HttpResponse DeviceRoutes::List(const HttpRequest& request) {
  Result<std::vector<DeviceRecord>> all = devices_.List();
  if (!all.ok()) return ErrorResponse(all.status());
  json::array list;
  for (const DeviceRecord& device : *all)
    list.push_back(DeviceToJson(device, device.id == request.device_id));
  return JsonValueResponse(json::object{{"devices", std::move(list)}});
}

HttpResponse DeviceRoutes::Change(const HttpRequest& request, const std::string& id) {
  if (!request.device_id.empty() && request.device_id != id)
    return Forbidden("a paired device may change only itself");
  Result<DeviceRecord> changed = Error(ErrorCode::kInternal, "unreachable");
  if (request.method == "PATCH") {
    Result<std::string> name = ParseRenameRequest(request.body);
    if (!name.ok()) return ErrorResponse(name.status());
    changed = devices_.Rename(id, *name);
  } else {
    changed = devices_.Revoke(id);
  }
  if (!changed.ok()) return ErrorResponse(changed.status());
  return JsonValueResponse(DeviceToJson(*changed, changed->id == request.device_id));
}

}  // namespace agentstream::server
