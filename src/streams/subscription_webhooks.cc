// Webhooks (subscriptions.h): which URLs may receive them (http only to this machine, https
// only to public hosts), and the POST of a wake.
#include <algorithm>
#include <chrono>

#include "core/ascii.h"
#include "net/http_client.h"
#include "streams/subscriptions.h"
#include "streams/subscriptions_internal.h"

namespace agentstream::streams {

namespace {

// A webhook receiver's answer larger than this fails the delivery.
constexpr std::size_t kMaxWebhookAnswerBytes = std::size_t{64} * 1024;

bool LocalDevHost(const std::string& host) {
  if (host == "localhost") return true;
  if (host.rfind("127.", 0) != 0) return false;
  return std::count(host.begin(), host.end(), '.') == 3;
}

}  // namespace

namespace subscriptions_internal {

std::optional<std::string> RejectWebhookUrl(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "webhook.url must be a valid URL";
  const std::string scheme = url.substr(0, scheme_end);
  std::string host = url.substr(scheme_end + 3);
  host = host.substr(0, host.find_first_of("/?#"));
  if (host.rfind('[', 0) == 0) return "IPv6 webhook hosts are not accepted";
  host = host.substr(0, host.find(':'));
  AsciiLowerInPlace(host);
  if (host.empty()) return "webhook.url must be a valid URL";
  if (scheme == "http")
    return LocalDevHost(host)
               ? std::nullopt
               : std::optional<std::string>(
                     "http webhook URLs are only allowed for localhost or 127.0.0.x");
  if (scheme != "https") return "webhook.url must use https";
  if (host == "localhost") return "localhost webhook URLs must use http";
  if (net::IsPublicAddressLiteral(host) == false)
    return "webhook.url must not target private or link-local hosts";
  return std::nullopt;
}

}  // namespace subscriptions_internal

int PostJson(const std::string& url, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms,
             std::string* response_body) {
  net::HttpRequest request;
  request.url = url;
  request.body = body;
  request.headers = headers;
  request.timeout = std::chrono::milliseconds(timeout_ms);
  request.max_reply_bytes = kMaxWebhookAnswerBytes;
  // http webhooks may only target this machine (RejectWebhookUrl); https ones only other hosts,
  // whatever their name resolves to.
  request.public_addresses_only = url.rfind("https://", 0) == 0;
  Result<net::HttpReply> reply = net::SendHttpRequest(request);
  if (!reply.ok()) return 0;
  if (response_body != nullptr) *response_body = std::move(reply->body);
  return reply->status;
}

}  // namespace agentstream::streams
