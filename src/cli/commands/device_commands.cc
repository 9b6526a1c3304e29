#include "cli/commands/device_commands.h"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <qrencode.h>

#include <boost/json/serialize.hpp>
#include <charconv>
#include <ctime>
#include <memory>

#include "cli/commands/command_util.h"
#include "client/endpoint.h"
#include "net/http_url.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

// "2026-12-04 09:30 UTC" for milliseconds since the epoch; "never" for 0.
std::string When(std::int64_t ms) {
  if (ms <= 0) return "never";
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:%Y-%m-%d %H:%M} UTC", utc);
}

std::string DevicePath(std::string_view id) { return "/v1/devices/" + client::PercentEncode(id); }

// A link base the phone can use safely: https, or a loopback address (the same rule the daemon
// applies to its own base, docs/remote.md).
Status CheckLinkBase(const std::string& base) {
  AS_ASSIGN_OR_RETURN(net::HttpUrl url, net::ParseHttpUrl(base));
  const bool loopback =
      url.host == "localhost" || url.host == "::1" || url.host.rfind("127.", 0) == 0;
  if (!url.tls && !loopback)
    return Error(ErrorCode::kInvalidArgument,
                 "--public-url must be https (or loopback): a link over plain http to " + url.host +
                     " would send the device token in the clear (docs/remote.md)");
  return Status::Ok();
}

void PrintDevice(const json::object& d) {
  const bool revoked =
      d.contains("revoked") && d.at("revoked").is_bool() && d.at("revoked").get_bool();
  fmt::print("{:<22} {:<24} {:<8} last seen {:<22} {}\n", MemberText(d, "id"),
             MemberText(d, "name"), revoked ? "revoked" : "active",
             When(MemberInt(d, "lastSeenMs")), MemberText(d, "userAgent"));
}

}  // namespace

Result<std::int64_t> ParseDuration(std::string_view text) {
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, number);
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  if (unit == "s") scale = 1000;
  if (unit == "m") scale = 60'000;
  if (unit == "h") scale = 3'600'000;
  if (ec != std::errc() || rest == text.data() || number < 0 || scale == 0 ||
      number > INT64_MAX / scale)
    return Error(
        ErrorCode::kInvalidArgument,
        "a duration is a number and a unit: 90s, 10m, 2h (got \"" + std::string(text) + "\")");
  return number * scale;
}

Result<std::string> RenderQr(std::string_view text, int quiet) {
  const std::string input(text);
  std::unique_ptr<QRcode, void (*)(QRcode*)> code(
      QRcode_encodeString(input.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), QRcode_free);
  if (!code) return Error(ErrorCode::kInvalidArgument, "the link does not fit in a QR code");
  const int width = code->width;
  const int size = width + 2 * quiet;
  // Light (true) outside the symbol; a module's low bit is 1 when it is dark.
  auto light = [&](int row, int col) {
    const int r = row - quiet;
    const int c = col - quiet;
    if (r < 0 || c < 0 || r >= width || c >= width) return true;
    return (code->data[r * width + c] & 1) == 0;
  };
  std::string out;
  for (int row = 0; row < size; row += 2) {
    for (int col = 0; col < size; ++col) {
      const bool top = light(row, col);
      const bool bottom = row + 1 < size ? light(row + 1, col) : false;
      if (top && bottom) {
        out += "\u2588";  // full block
      } else if (top) {
        out += "\u2580";  // upper half block
      } else if (bottom) {
        out += "\u2584";  // lower half block
      } else {
        out += ' ';
      }
    }
    out += '\n';
  }
  return out;
}

int Pair(const ClientContext& context, const PairOptions& options) {
  Result<std::int64_t> expires = ParseDuration(options.expires);
  Status base_ok = options.public_url.empty() ? Status::Ok() : CheckLinkBase(options.public_url);
  if (!expires.ok() || !base_ok.ok()) {
    PrintError(!expires.ok() ? expires.status() : base_ok);
    return kExitUsage;
  }
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    const json::value body = json::object{{"name", options.name}, {"expiresInMs", *expires}};
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("POST", "/v1/pairings", &body));
    if (!reply.is_object()) return Error(ErrorCode::kInvalidArgument, "daemon: not an object");
    json::object& pairing = reply.as_object();
    if (!options.public_url.empty()) {
      std::string base = options.public_url;
      while (!base.empty() && base.back() == '/') base.pop_back();
      pairing["url"] = base + "/#pair=" + MemberText(pairing, "code");
    }
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const std::string url = MemberText(pairing, "url");
    if (!options.no_qr) {
      AS_ASSIGN_OR_RETURN(std::string qr, RenderQr(url));
      fmt::print("{}\n", qr);
    }
    fmt::print(
        "{}\nOpen it on the device (or scan the code) before {}; it pairs one device, "
        "once.\n",
        url, When(MemberInt(pairing, "expiresMs")));
    return Status::Ok();
  });
}

int ListDevices(const ClientContext& context) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", "/v1/devices"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::value* list =
        reply.is_object() ? reply.get_object().if_contains("devices") : nullptr;
    if (list == nullptr || !list->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: devices: not a list");
    if (list->get_array().empty()) fmt::print("no paired devices (agentstream pair adds one)\n");
    for (const json::value& d : list->get_array())
      if (d.is_object()) PrintDevice(d.get_object());
    return Status::Ok();
  });
}

int RenameDevice(const ClientContext& context, const std::string& id, const std::string& name) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    const json::value body = json::object{{"name", name}};
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("PATCH", DevicePath(id), &body));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
    } else {
      PrintDevice(reply.get_object());
    }
    return Status::Ok();
  });
}

int RevokeDevice(const ClientContext& context, const std::string& id) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("DELETE", DevicePath(id)));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
    } else {
      PrintDevice(reply.get_object());
    }
    return Status::Ok();
  });
}

}  // namespace agentstream::cli
