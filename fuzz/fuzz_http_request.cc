// libFuzzer target: the pure functions that read a client's request head. The input is split at
// '\n' into a request target, a Host, an Authorization, an Origin and a Transfer-Encoding value
// and a header value of the generic streams (Stream-Expires-At, an offset); none may crash, and
// what they accept keeps its invariants: a parsed path starts with '/' and holds no control
// character, a percent-encoded string decodes back to itself, an error body is valid JSON.
#include <array>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/utf8.h"
#include "fuzz_check.h"
#include "net/http_url.h"
#include "server/api_router.h"
#include "server/http_types.h"
#include "server/security.h"
#include "server/static_files.h"
#include "streams/offset.h"
#include "streams/stream_protocol.h"

namespace agentstream {
namespace {

using fuzzing::Check;

void FuzzTarget(std::string_view target) {
  std::string path;
  std::map<std::string, std::string> query;
  if (server::ParseTarget(target, &path, &query)) {
    Check(!path.empty() && path.front() == '/');
    for (const char c : path) Check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    Check(server::IsSafeHeaderValue(path));
    for (const std::string& segment : server::PathSegments(path))
      Check(!segment.empty() && segment.find('/') == std::string::npos);
    (void)server::ParsePageQuery(query);
    (void)server::IsStaticRequest("GET", path);
    Cursor cursor;
    if (auto it = query.find("offset"); it != query.end()) (void)ParseCursor(it->second, &cursor);
  }
  std::string decoded;
  if (net::PercentDecode(target, /*plus_is_space=*/false, &decoded)) {
    std::string again;
    Check(net::PercentDecode(net::PercentEncode(decoded), false, &again) && again == decoded);
  }
}

void FuzzHeaders(std::string_view host, std::string_view authorization, std::string_view origin,
                 std::string_view transfer_encoding) {
  server::SecurityOptions options;
  options.token = "t0ken";
  options.allowed_origins = server::SameHostOrigins(7600);
  options.allowed_hosts = {"lb.example", "10.0.0.11", std::string(origin)};
  const auto parsed = server::HostOfHeader(host);
  const bool allowed = server::HostAllowed(options, host);
  if (!parsed) Check(!allowed);
  if (parsed) Check(!parsed->empty());
  options.allow_ip_literal_hosts = true;
  (void)server::HostAllowed(options, host);
  if (const auto token = server::BearerToken(authorization)) {
    Check(!token->empty() && token->front() != ' ');
  }
  (void)server::CheckAccess(options, authorization, host, origin);
  for (unsigned version : {10U, 11U}) {
    if (const auto refused = server::CheckFraming(transfer_encoding, version))
      Check(refused->status == 400 || refused->status == 501);
  }
  // Client bytes quoted in an error body still make valid JSON.
  const server::HttpResponse error =
      server::CodedErrorResponse(403, "forbidden", "misdirected host " + std::string(host));
  boost::system::error_code ec;
  (void)boost::json::parse(error.body, ec);
  Check(!ec);
  Check(IsValidUtf8(SanitizeUtf8(host)));
}

}  // namespace
}  // namespace agentstream

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::array<std::string_view, 6> fields{};
  for (std::string_view& field : fields) {
    const std::size_t newline = rest.find('\n');
    field = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  }
  agentstream::FuzzTarget(fields[0]);
  agentstream::FuzzHeaders(fields[1], fields[2], fields[3], fields[4]);
  (void)agentstream::streams::ParseIsoTime(fields[5]);
  (void)agentstream::streams::ParseOffset(fields[5]);
  return 0;
}
