// libFuzzer target: the pure functions that read a client's request. The input is split at '\n'
// into a request target, a Host, an Authorization, an Origin and a Transfer-Encoding value and a
// header value of the generic streams (Stream-Expires-At, an offset); the rest is a JSON body of
// the agents API. None may crash, and what they accept keeps its invariants: a parsed path starts
// with '/' and holds no control character; a boolean query parameter is accepted exactly when it
// is true, false, 1 or 0; a percent-encoded string decodes back to itself; an error body is valid
// JSON. The body is read by every request decoder (api/api_json.h: create with its worktree,
// send with its attachments, permission reply, the one-member bodies), with and without the
// WebSocket's envelope: a decoder accepts only objects whose members it defines (the harness's
// own lists, from docs/protocol.md), refuses any other member first, naming it, and what it
// accepts round-trips through its encoder. The Authorization, Origin and Transfer-Encoding values
// also stand for X-Forwarded-For, -Host and -Proto (field lines split at ';') and the streams'
// header value for a list of trusted-proxy ranges (split at ' '), resolved for several peers
// (server/forwarded.h): a peer that is not a trusted proxy gets its own scheme, Host and address
// whatever the headers say; from a trusted one, the result is a canonical address that is the
// peer's or one of X-Forwarded-For's (a trusted proxy only when every one is), or a refusal naming
// the header.
#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_json.h"
#include "core/ids.h"
#include "core/utf8.h"
#include "fuzz_check.h"
#include "net/http_url.h"
#include "server/api_router.h"
#include "server/forwarded.h"
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
    for (const auto& [name, value] : query) {
      const Result<bool> flag = server::QueryFlag(query, name);
      const bool known = value == "true" || value == "1" || value == "false" || value == "0";
      Check(flag.ok() == known);
      if (known) Check(*flag == (value == "true" || value == "1"));
    }
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
  (void)server::CheckAccess(options, authorization, host, origin, "127.0.0.1");
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

// `text` split at `separator`, at most `limit` parts (a header's field lines, a list of ranges).
std::vector<std::string_view> SplitAt(std::string_view text, char separator,
                                      std::size_t limit = 16) {
  std::vector<std::string_view> parts;
  if (text.empty()) return parts;
  while (parts.size() < limit) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text = text.substr(at + 1);
  }
  return parts;
}

void FuzzForwarded(std::string_view host, std::string_view forwarded_for,
                   std::string_view forwarded_host, std::string_view forwarded_proto,
                   std::string_view ranges) {
  std::vector<std::string> entries;
  for (const std::string_view entry : SplitAt(ranges, ' ')) {
    const Result<server::AddressRange> range = server::ParseAddressRange(entry);
    if (!range.ok()) {
      Check(range.status().code() == ErrorCode::kInvalidArgument);
      Check(!server::TrustedProxies::Parse({std::string(entry)}).ok());
      continue;
    }
    Check(range->prefix >= 0 && range->prefix <= (range->v4 ? 32 : 128));
    entries.emplace_back(entry);
  }
  const Result<server::TrustedProxies> proxies = server::TrustedProxies::Parse(entries);
  Check(proxies.ok());
  // X-Forwarded-For's elements, canonical ("" for one that is not an address).
  std::vector<std::string> elements;
  for (const std::string_view line : SplitAt(forwarded_for, ';')) {
    for (std::string_view element : SplitAt(line, ',', line.size() + 1)) {
      while (!element.empty() && (element.front() == ' ' || element.front() == '\t'))
        element.remove_prefix(1);
      while (!element.empty() && (element.back() == ' ' || element.back() == '\t'))
        element.remove_suffix(1);
      elements.push_back(server::CanonicalAddress(element));
    }
  }
  const bool every_one_trusted =
      std::all_of(elements.begin(), elements.end(),
                  [&](const std::string& e) { return !e.empty() && proxies->Contains(e); });
  const std::string_view peers[] = {"127.0.0.1", "10.1.2.3", "::ffff:10.1.2.3", "fd00::7", ""};
  bool tls = false;
  for (const std::string_view peer : peers) {
    tls = !tls;
    server::ForwardedInput in;
    in.peer = peer;
    in.tls = tls;
    in.host = host;
    in.forwarded_for = SplitAt(forwarded_for, ';');
    in.forwarded_host = SplitAt(forwarded_host, ';');
    in.forwarded_proto = SplitAt(forwarded_proto, ';');
    const Result<server::EffectiveRequest> r = server::ResolveForwarded(*proxies, in);
    const std::string own = server::CanonicalAddress(peer);
    if (own.empty() || !proxies->Contains(own)) {
      Check(r.ok() && !r->forwarded && r->client_address == own && r->host == host &&
            r->scheme == (tls ? "https" : "http"));
      continue;
    }
    if (!r.ok()) {
      Check(r.status().code() == ErrorCode::kInvalidArgument);
      Check(r.status().message().find("X-Forwarded-") != std::string::npos);
      continue;
    }
    Check(r->forwarded && (r->scheme == "http" || r->scheme == "https"));
    Check(server::CanonicalAddress(r->client_address) == r->client_address);
    if (in.forwarded_for.empty()) {
      Check(r->client_address == own);
    } else {
      Check(std::find(elements.begin(), elements.end(), r->client_address) != elements.end());
      Check(!proxies->Contains(r->client_address) || every_one_trusted);
    }
    if (!in.forwarded_host.empty()) Check(server::HostOfHeader(r->host).has_value());
    const std::string origin = server::OriginOf(r->scheme, r->host);
    if (!origin.empty())
      Check(origin.rfind(r->scheme + "://", 0) == 0 && server::IsSafeHeaderValue(origin));
  }
}

namespace json = boost::json;

constexpr std::string_view kConfigMembers[] = {
    "provider", "cwd", "model", "mode", "title", "clientRequestId", "worktree"};
constexpr std::string_view kWorktreeMembers[] = {"branch", "base"};
constexpr std::string_view kSendMembers[] = {"text", "clientMessageId", "attachments",
                                             "whileRunning"};
constexpr std::string_view kAttachmentMembers[] = {"kind", "mimeType", "name", "uri", "data"};
constexpr std::string_view kPermissionMembers[] = {"decision", "optionId", "message"};
constexpr std::string_view kModeMembers[] = {"mode"};
constexpr std::string_view kCursorMembers[] = {"cursor"};
constexpr std::string_view kEnvelope[] = {"type", "id", "agent"};

// Whether every member of `value` (an object) is among `known` or `extra`.
bool OnlyKnown(const json::value& value, api::MemberNames known, api::MemberNames extra = {}) {
  for (const auto& member : value.as_object()) {
    const std::string_view key = member.key();
    if (std::find(known.begin(), known.end(), key) == known.end() &&
        std::find(extra.begin(), extra.end(), key) == extra.end())
      return false;
  }
  return true;
}

// A decoder's answer for `body`: accepted only when every member is known (`nested` adds the
// check of the members inside); an object with another member is refused, naming it, before
// anything else is looked at. The error body it makes is JSON.
template <class T>
void CheckStrict(const Result<T>& decoded, const json::value& body, api::MemberNames known,
                 api::MemberNames extra, bool nested_known = true) {
  const bool object = body.is_object();
  const bool top_known = object && OnlyKnown(body, known, extra);
  if (decoded.ok()) Check(top_known && nested_known);
  if (object && !top_known) {
    Check(decoded.status().code() == ErrorCode::kInvalidArgument);
    Check(decoded.status().message().rfind("unknown field \"", 0) == 0);
  }
  if (!decoded.ok()) {
    const server::HttpResponse error = server::ErrorResponse(decoded.status());
    Check(error.status == 400 && api::ParseJson(error.body).ok());
  }
}

// Whether the nested objects a body may hold (worktree, attachments) have only known members.
bool NestedKnown(const json::value& body, std::string_view member, api::MemberNames known) {
  const json::value* v = body.is_object() ? body.as_object().if_contains(member) : nullptr;
  if (v == nullptr) return true;
  if (v->is_object()) return OnlyKnown(*v, known);
  if (v->is_array()) {
    for (const json::value& e : v->as_array())
      if (e.is_object() && !OnlyKnown(e, known)) return false;
  }
  return true;
}

void FuzzBody(std::string_view text) {
  const Result<json::value> body = api::ParseJson(text);
  if (!body.ok()) return;
  for (const api::MemberNames extra : {api::MemberNames(), api::MemberNames(kEnvelope)}) {
    const Result<api::AgentConfig> config = api::AgentConfigFromJson(*body, extra);
    CheckStrict(config, *body, kConfigMembers, extra);
    if (config.ok()) {
      const Result<api::AgentConfig> again =
          api::AgentConfigFromJson(api::AgentConfigToJson(*config));
      Check(again.ok() && again->provider == config->provider && again->cwd == config->cwd &&
            again->model == config->model && again->mode == config->mode &&
            again->title == config->title && again->client_request_id == config->client_request_id);
    }
    const Result<api::SendRequest> send = api::SendRequestFromJson(*body, extra);
    CheckStrict(send, *body, kSendMembers, extra,
                NestedKnown(*body, "attachments", kAttachmentMembers));
    if (send.ok()) {
      const Result<api::SendRequest> again =
          api::SendRequestFromJson(api::SendRequestToJson(*send));
      Check(again.ok() && again->text == send->text &&
            again->client_message_id == send->client_message_id &&
            again->while_running == send->while_running &&
            again->attachments.size() == send->attachments.size());
    }
    CheckStrict(api::PermissionReplyFromJson(*body, RequestId("req_1"), extra), *body,
                kPermissionMembers, extra);
    CheckStrict(api::StringBodyFromJson(*body, "mode", extra), *body, kModeMembers, extra);
    CheckStrict(api::CursorBodyFromJson(*body, extra), *body, kCursorMembers, extra);
  }
  const auto worktree = api::WorktreeRequestFromJson(*body);
  if (worktree.ok() && *worktree) Check(NestedKnown(*body, "worktree", kWorktreeMembers));
  if (!NestedKnown(*body, "worktree", kWorktreeMembers)) Check(!worktree.ok());
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
  agentstream::FuzzForwarded(fields[1], fields[2], fields[3], fields[4], fields[5]);
  (void)agentstream::streams::ParseIsoTime(fields[5]);
  (void)agentstream::streams::ParseOffset(fields[5]);
  agentstream::FuzzBody(rest);
  return 0;
}
