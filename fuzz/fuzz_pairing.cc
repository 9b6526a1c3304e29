// libFuzzer target: what the pairing and device routes read from clients (server/
// device_routes.h, devices/device_service.h). Byte 0 picks the reader:
//   0 mod 4: the rest as a POST /v1/pairings body: an accepted one has a valid name (1 to 64
//            bytes of UTF-8, no control characters) and a lifetime of 10 s to 24 h; a refusal
//            is invalid_argument.
//   1 mod 4: the rest as a POST /v1/pairings/exchange body: an accepted one gives its code as
//            a string; a refusal is invalid_argument.
//   2 mod 4: the rest as a PATCH /v1/devices/{id} body: an accepted name passes the name check.
//   3 mod 4: the rest as "ID\nCREDENTIAL\nBODY" against the routes of a daemon with one paired
//            device (memory store): the credential through the device check, then PATCH and
//            DELETE of /v1/devices/ID, the exchange and a pairing with the body. Every answer is
//            one of the statuses the routes document, a refused credential never names a
//            device, and the paired device stays unrevoked unless ID is its id.
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device_service.h"
#include "fuzz_check.h"
#include "server/device_routes.h"
#include "store/memory_log.h"

namespace agentstream::server {
namespace {

using fuzzing::Check;

bool Documented(int status) {
  for (int s : {200, 201, 400, 401, 403, 404, 429}) {
    if (status == s) return true;
  }
  return false;
}

struct Daemon {
  MemoryEventLog log;
  devices::DeviceService service{log.devices()};
  DeviceRoutes routes{service, ""};
  std::string device_id;

  Daemon() {
    auto pairing = service.CreatePairing("phone", devices::kDefaultPairingLifetimeMs);
    auto paired = service.Exchange(pairing.value().code, "fuzz", "127.0.0.1");
    device_id = paired.value().device.id;
  }
};

HttpResponse Call(Daemon& d, const std::string& method, const std::string& path,
                  std::string_view body, const std::string& device_id) {
  HttpRequest request;
  request.method = method;
  request.path = path;
  request.body = std::string(body);
  request.client_address = "10.0.0.1";
  request.scheme = "https";
  request.effective_host = "box.example";
  request.device_id = device_id;
  HttpResponse out;
  out.status = 0;
  const bool handled =
      d.routes.Handle(request, PathSegments(path), "fuzz", [&](HttpResponse r) { out = r; });
  Check(handled && Documented(out.status));
  return out;
}

void Routes(std::string_view rest) {
  // Renewed now and then: each accepted pairing stays in the memory store until it expires.
  static std::unique_ptr<Daemon> fresh;
  static int runs = 0;
  if (!fresh || ++runs % 1000 == 0) fresh = std::make_unique<Daemon>();
  Daemon& daemon = *fresh;
  const std::size_t first = rest.find('\n');
  const std::string id(rest.substr(0, first));
  rest = first == std::string_view::npos ? std::string_view() : rest.substr(first + 1);
  const std::size_t second = rest.find('\n');
  const std::string credential(rest.substr(0, second));
  const std::string_view body =
      second == std::string_view::npos ? std::string_view() : rest.substr(second + 1);

  HttpRequest request;
  request.authorization = "Bearer " + credential;
  request.client_address = "10.0.0.2";
  std::optional<HttpResponse> refused = daemon.routes.Admit(request, credential, "fuzz");
  Check(!refused || Documented(refused->status) || refused->status == 503);
  if (refused) Check(request.device_id.empty());
  if (!request.device_id.empty()) Check(request.device_id == daemon.device_id);

  if (id.find('/') == std::string::npos && !id.empty()) {
    Call(daemon, "PATCH", "/v1/devices/" + id, body, "");
    // As a paired device, on another device: refused.
    if (id != daemon.device_id) {
      Check(Call(daemon, "PATCH", "/v1/devices/" + id, body, daemon.device_id).status == 403);
      Call(daemon, "DELETE", "/v1/devices/" + id, "", "");
    }
  }
  Call(daemon, "POST", "/v1/pairings/exchange", body, "");
  HttpResponse pairing = Call(daemon, "POST", "/v1/pairings", body, "");
  if (pairing.status == 201) {
    const boost::json::value v = boost::json::parse(pairing.body);
    const std::string code(v.at("code").as_string());
    Check(devices::LooksLikePairingCode(code));
    Check(std::string(v.at("url").as_string()) == "https://box.example/#pair=" + code);
  }
  Check(Call(daemon, "POST", "/v1/pairings", body, daemon.device_id).status == 403);
  Check(!daemon.log.devices().GetDevice(daemon.device_id)->revoked());
}

}  // namespace
}  // namespace agentstream::server

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace agentstream;
  using namespace agentstream::server;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      Result<PairingRequest> parsed = ParsePairingRequest(rest);
      if (!parsed.ok()) {
        fuzzing::Check(parsed.status().code() == ErrorCode::kInvalidArgument);
        break;
      }
      fuzzing::Check(devices::CheckDeviceName(parsed->name).ok());
      fuzzing::Check(parsed->expires_in_ms >= devices::kMinPairingLifetimeMs &&
                     parsed->expires_in_ms <= devices::kMaxPairingLifetimeMs);
      break;
    }
    case 1: {
      Result<std::string> code = ParseExchangeRequest(rest);
      if (!code.ok()) fuzzing::Check(code.status().code() == ErrorCode::kInvalidArgument);
      break;
    }
    case 2: {
      Result<std::string> name = ParseRenameRequest(rest);
      if (!name.ok()) {
        fuzzing::Check(name.status().code() == ErrorCode::kInvalidArgument);
        break;
      }
      fuzzing::Check(devices::CheckDeviceName(*name).ok());
      break;
    }
    default:
      Routes(rest);
  }
  return 0;
}
