#include "push/sender.h"

#include <algorithm>
#include <array>
#include <boost/json/object.hpp>

#include "api/json_members.h"
#include "core/utf8.h"
#include "net/base64.h"
#include "net/http_client.h"
#include "push/crypto.h"
#include "push/ece.h"
#include "push/endpoint.h"
#include "system/wall_clock.h"

namespace agentstream::push {
namespace {

constexpr std::array<std::string_view, 4> kUrgencies = {"very-low", "low", "normal", "high"};
constexpr std::array<std::string_view, 2> kNtfyMembers = {"url", "topic"};

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

PushOutcome Refused(std::string detail) {
  return {.kind = PushOutcome::kRejected, .detail = std::move(detail)};
}

Status CheckMessage(const PushMessage& message) {
  if (message.payload.size() > kMaxPlaintextBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "a push payload is at most " + std::to_string(kMaxPlaintextBytes) + " bytes");
  }
  if (message.ttl_s < 0 || message.ttl_s > kMaxTtlS) {
    return Error(ErrorCode::kInvalidArgument, "a push TTL is 0 to " + std::to_string(kMaxTtlS) +
                                                  " seconds, not " + std::to_string(message.ttl_s));
  }
  if (message.topic.size() > kMaxTopicChars ||
      !std::all_of(message.topic.begin(), message.topic.end(), IsBase64UrlChar)) {
    return Error(ErrorCode::kInvalidArgument,
                 "a push topic is at most 32 characters of A-Z a-z 0-9 - _");
  }
  if (std::find(kUrgencies.begin(), kUrgencies.end(), message.urgency) == kUrgencies.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 "a push urgency is very-low, low, normal or high, not \"" +
                     BoundUtf8(message.urgency, 32).text + "\"");
  }
  return Status::Ok();
}

// At most kMaxDetailBytes of `text`, each byte outside printable ASCII replaced by '?'.
std::string Printable(std::string_view text) {
  std::string out(text.substr(0, kMaxDetailBytes));
  for (char& c : out) {
    if (c < ' ' || c > '~') c = '?';
  }
  return out;
}

PushOutcome Classify(const Result<net::HttpReply>& reply, std::int64_t now_ms) {
  if (!reply.ok()) {
    return {.kind = PushOutcome::kRetry, .detail = Printable(reply.status().message())};
  }
  PushOutcome out{.status = reply->status, .detail = Printable(reply->body)};
  const int status = reply->status;
  if (status == 200 || status == 201 || status == 202) {
    out.kind = PushOutcome::kDelivered;
  } else if (status == 404 || status == 410) {
    out.kind = PushOutcome::kGone;
  } else if (status == 429 || (status >= 500 && status <= 599)) {
    out.kind = PushOutcome::kRetry;
    out.retry_after_ms = RetryAfterMs(reply->Header("Retry-After"), now_ms);
  } else {
    out.kind = PushOutcome::kRejected;
  }
  return out;
}

// Line breaks, tabs and other control characters become spaces; then cut to `max_bytes` on a
// UTF-8 boundary (ill-formed UTF-8 repaired).
std::string SingleLine(std::string_view text, std::size_t max_bytes) {
  std::string line(text);
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < ' ' || c == '\x7f') c = ' ';
  }
  return BoundUtf8(line, max_bytes).text;
}

// `text` (valid UTF-8) as a header value: as is when it is ASCII, else RFC 2047 encoded-words
// ("=?UTF-8?B?...?=") of whole characters, each under RFC 2047's 75 characters.
std::string HeaderText(const std::string& text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c <= '~'; })) {
    return text;
  }
  constexpr std::size_t kWordBytes = 45;  // 60 base64 characters + 12 of framing
  std::string out;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::size_t n = std::min(kWordBytes, rest.size());
    while (n < rest.size() && (static_cast<unsigned char>(rest[n]) & 0xc0) == 0x80) --n;
    out += (out.empty() ? "" : " ") + std::string("=?UTF-8?B?") +
           net::EncodeBase64(rest.substr(0, n)) + "?=";
    rest.remove_prefix(n);
  }
  return out;
}

}  // namespace

std::string TopicFor(std::string_view key) {
  return internal::EncodeBase64Url(internal::Sha256(key)).substr(0, kMaxTopicChars);
}

PushOutcome SendPush(const PushSubscription& subscription, const VapidKey& key,
                     std::string_view subject, const PushMessage& message,
                     std::chrono::milliseconds timeout, const std::string& ca_file) {
  if (Status s = CheckMessage(message); !s.ok()) return Refused(s.message());
  Result<net::HttpUrl> url =
      internal::CheckSendUrl(subscription.endpoint, "push endpoint", /*allow_http=*/true);
  if (!url.ok()) return Refused(url.status().message());
  Result<std::string> body =
      EncryptPayload(message.payload, subscription.p256dh, subscription.auth);
  if (!body.ok()) return Refused(body.status().message());
  const std::int64_t now_ms = system::WallClockMs();
  const std::int64_t now_s = now_ms / 1000;
  Result<std::string> authorization = VapidAuthorization(key, internal::OriginOf(*url), subject,
                                                         now_s + kVapidTokenLifetimeS, now_s);
  if (!authorization.ok()) return Refused(authorization.status().message());

  net::HttpRequest request;
  request.url = subscription.endpoint;
  request.content_type = "application/octet-stream";
  request.body = std::move(*body);
  request.headers = {{"TTL", std::to_string(message.ttl_s)},
                     {"Urgency", message.urgency},
                     {"Content-Encoding", "aes128gcm"},
                     {"Authorization", std::move(*authorization)}};
  if (!message.topic.empty()) request.headers.emplace_back("Topic", message.topic);
  request.timeout = timeout;
  request.max_reply_bytes = kMaxReplyBytes;
  request.ca_file = ca_file;
  request.peer = "the push service " + internal::OriginOf(*url);
  return Classify(net::SendHttpRequest(request), now_ms);
}

Status ValidateNtfyTarget(const NtfyTarget& target) {
  Result<net::HttpUrl> url = internal::CheckSendUrl(target.url, "ntfy url", /*allow_http=*/true);
  if (!url.ok()) return url.status();
  if (target.url.find('?') != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, "ntfy url: a server URL without a query");
  }
  if (target.topic.empty() || target.topic.size() > kMaxNtfyTopicChars ||
      !std::all_of(target.topic.begin(), target.topic.end(), IsBase64UrlChar)) {
    return Error(ErrorCode::kInvalidArgument, "ntfy topic: 1 to 64 characters of A-Z a-z 0-9 - _");
  }
  return Status::Ok();
}

Result<NtfyTarget> NtfyTargetFromJson(const boost::json::value& json) {
  const boost::json::object* object = json.if_object();
  if (object == nullptr) return Error(ErrorCode::kInvalidArgument, "ntfy: a JSON object");
  AS_RETURN_IF_ERROR(api::RefuseUnknownMembers(*object, kNtfyMembers, "the ntfy target"));
  NtfyTarget target;
  for (const auto& [name, field] :
       {std::pair{"url", &target.url}, std::pair{"topic", &target.topic}}) {
    const boost::json::value* value = object->if_contains(name);
    if (value == nullptr || !value->is_string()) {
      return Error(ErrorCode::kInvalidArgument, std::string("ntfy ") + name + ": a string");
    }
    *field = std::string(value->get_string());
  }
  AS_RETURN_IF_ERROR(ValidateNtfyTarget(target));
  return target;
}

boost::json::value NtfyTargetToJson(const NtfyTarget& target) {
  return boost::json::object{{"url", target.url}, {"topic", target.topic}};
}

PushOutcome SendNtfy(const NtfyTarget& target, std::string_view title, std::string_view body,
                     int priority, std::string_view click_url, std::chrono::milliseconds timeout,
                     const std::string& ca_file) {
  if (Status s = ValidateNtfyTarget(target); !s.ok()) return Refused(s.message());
  // The page a tap opens, fragment and all ("https://host/#agent=ses_1").
  if (!click_url.empty() &&
      (click_url.size() > kMaxEndpointBytes || !net::ParseHttpUrl(click_url).ok() ||
       !std::all_of(click_url.begin(), click_url.end(),
                    [](char c) { return c > ' ' && c <= '~'; }))) {
    return Refused("ntfy click url: an http(s) URL of at most 2048 bytes of printable ASCII");
  }
  std::string base = target.url;
  while (base.ends_with('/')) base.pop_back();

  net::HttpRequest request;
  request.url = base + "/" + target.topic;
  request.content_type = "text/plain; charset=utf-8";
  request.body = SingleLine(body, kMaxNtfyBodyBytes);
  request.headers = {{"Priority", std::to_string(std::clamp(priority, 1, 5))}};
  if (std::string line = SingleLine(title, kMaxNtfyTitleBytes); !line.empty()) {
    request.headers.emplace_back("Title", HeaderText(line));
  }
  if (!click_url.empty()) request.headers.emplace_back("Click", std::string(click_url));
  request.timeout = timeout;
  request.max_reply_bytes = kMaxReplyBytes;
  request.ca_file = ca_file;
  request.peer = "the ntfy server " + base;
  return Classify(net::SendHttpRequest(request), system::WallClockMs());
}

}  // namespace agentstream::push
