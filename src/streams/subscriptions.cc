#include "streams/subscriptions.h"

#include <sodium.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstring>

#include "net/base64.h"
#include "net/http_client.h"
#include "system/random_id.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

namespace json = boost::json;

namespace {

constexpr std::string_view kStreamRoot = "/v1/stream/";
constexpr std::string_view kControlRoot = "/v1/stream/__ds/";
constexpr std::string_view kSubs = "subscriptions/";
constexpr std::int64_t kMinLeaseMs = 1000;
constexpr std::int64_t kMaxLeaseMs = 600000;
constexpr std::int64_t kTokenLifetimeSeconds = 3600;
// A webhook receiver's answer larger than this fails the delivery.
constexpr std::size_t kMaxWebhookAnswerBytes = std::size_t{64} * 1024;

std::string B64Url(const unsigned char* data, std::size_t size) {
  return net::EncodeBase64({reinterpret_cast<const char*>(data), size},
                           net::Base64Alphabet::kUrlSafeNoPadding);
}

std::string Trim(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

StreamResponse Json(int status, std::string body) {
  StreamResponse r;
  r.status = status;
  r.headers.emplace_back("content-type", "application/json");
  r.body = std::move(body);
  return r;
}

StreamResponse Err(int status, std::string_view code, std::string_view message) {
  return Json(
      status,
      json::serialize(json::object{{"error", json::object{{"code", code}, {"message", message}}}}));
}

bool LocalDevHost(const std::string& host) {
  if (host == "localhost") return true;
  if (host.rfind("127.", 0) != 0) return false;
  return std::count(host.begin(), host.end(), '.') == 3;
}

// nullopt when acceptable, else the reason.
std::optional<std::string> RejectWebhookUrl(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "webhook.url must be a valid URL";
  const std::string scheme = url.substr(0, scheme_end);
  std::string host = url.substr(scheme_end + 3);
  host = host.substr(0, host.find_first_of("/?#"));
  if (host.rfind('[', 0) == 0) return "IPv6 webhook hosts are not accepted";
  host = host.substr(0, host.find(':'));
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

const json::object* Object(const json::value& v) {
  return v.is_object() ? &v.as_object() : nullptr;
}

std::string StrField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::string Iso8601(std::int64_t ms) {
  const std::time_t t = ms / 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

void ClearWake(Subscription& s) {
  s.token.clear();
  s.holder.clear();
  s.wake_id.clear();
  s.snapshot.clear();
  s.lease_expires_ms = 0;
}

}  // namespace

// The tails of a subscription's streams as offset text (zero for a missing stream), read from
// the store once per change of the subscription: one read for all of them.
class SubscriptionManager::TailView {
 public:
  explicit TailView(StreamStore& store) : store_(store) {}

  void Prefetch(const std::vector<std::string>& relative) {
    std::vector<std::string> paths;
    for (const std::string& r : relative)
      if (cache_.count(r) == 0) paths.push_back(std::string(kStreamRoot) + r);
    if (paths.empty()) return;
    const std::map<std::string, Offset> tails = store_.Tails(paths);
    for (const std::string& path : paths) {
      auto it = tails.find(path);
      cache_[path.substr(kStreamRoot.size())] =
          FormatOffset(it == tails.end() ? Offset{} : it->second);
    }
  }
  void Prefetch(const Subscription& s) {
    std::vector<std::string> relative;
    relative.reserve(s.streams.size());
    for (const auto& [path, link] : s.streams) relative.push_back(path);
    Prefetch(relative);
  }
  const std::string& Get(const std::string& relative) {
    if (cache_.count(relative) == 0) Prefetch(std::vector<std::string>{relative});
    return cache_[relative];
  }
  std::string FirstPending(const Subscription& s) {
    Prefetch(s);
    for (const auto& [path, link] : s.streams)
      if (Get(path) > link.acked) return path;
    return "";
  }
  // True when a stream's tail differs from the wake snapshot's.
  bool MovedPast(const Subscription& s) {
    Prefetch(s);
    for (const auto& [path, link] : s.streams) {
      auto at = s.snapshot.find(path);
      if (at == s.snapshot.end() || at->second != Get(path)) return true;
    }
    return false;
  }
  json::array Infos(const Subscription& s) {
    Prefetch(s);
    json::array out;
    for (const auto& [path, link] : s.streams) {
      const std::string& tail = Get(path);
      out.push_back(json::object{{"path", path},
                                 {"link_type", link.types.count("explicit") ? "explicit" : "glob"},
                                 {"acked_offset", link.acked},
                                 {"tail_offset", tail},
                                 {"has_pending", tail > link.acked}});
    }
    return out;
  }

 private:
  StreamStore& store_;
  std::map<std::string, std::string> cache_;
};

bool GlobMatch(std::string_view pattern, std::string_view path) {
  auto split = [](std::string_view s) {
    std::vector<std::string_view> parts;
    while (!s.empty()) {
      const std::size_t slash = s.find('/');
      if (slash != 0) parts.push_back(s.substr(0, slash));
      if (slash == std::string_view::npos) break;
      s.remove_prefix(slash + 1);
    }
    return parts;
  };
  const auto p = split(pattern), s = split(path);
  std::function<bool(std::size_t, std::size_t)> match = [&](std::size_t pi, std::size_t si) {
    while (pi < p.size() && si < s.size()) {
      if (p[pi] == "**") {
        for (std::size_t i = si; i <= s.size(); ++i)
          if (match(pi + 1, i)) return true;
        return false;
      }
      if (p[pi] != "*" && p[pi] != s[si]) return false;
      ++pi;
      ++si;
    }
    while (pi < p.size() && p[pi] == "**") ++pi;
    return pi == p.size() && si == s.size();
  };
  return match(0, 0);
}

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

SubscriptionManager::SubscriptionManager(StreamStore& store,
                                         std::unique_ptr<SubscriptionRecords> records,
                                         SubscriptionLimits limits)
    : store_(store), records_(std::move(records)), limits_(limits) {
  if (sodium_init() < 0) std::abort();
  crypto_sign_keypair(public_key_, secret_key_);
  randombytes_buf(token_key_, sizeof token_key_);
  DeriveKeyId();
  sender_ = std::thread([this] { DeliveryLoop(); });
}

void SubscriptionManager::DeriveKeyId() {
  x_ = B64Url(public_key_, sizeof public_key_);
  const std::string thumb = R"({"crv":"Ed25519","kty":"OKP","x":")" + x_ + "\"}";
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(thumb.data()), thumb.size());
  kid_ = "ds_" + B64Url(digest, sizeof digest);
}

SubscriptionManager::~SubscriptionManager() {
  {
    std::lock_guard lock(queue_mu_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  sender_.join();
}

Status SubscriptionManager::Restore() {
  AS_ASSIGN_OR_RETURN(std::string keys, records_->OpenKeys());
  if (keys.empty()) return Status::Ok();
  if (keys.size() != kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes)
    return Error(ErrorCode::kCorruption, "the stored subscription keys have the wrong size");
  crypto_sign_seed_keypair(public_key_, secret_key_,
                           reinterpret_cast<const unsigned char*>(keys.data()));
  std::copy_n(keys.data() + kSubscriptionSeedBytes, kSubscriptionTokenKeyBytes,
              reinterpret_cast<char*>(token_key_));
  sodium_memzero(keys.data(), keys.size());
  DeriveKeyId();
  return Status::Ok();
}

std::string SubscriptionManager::Sign(const std::string& body, std::int64_t unix_seconds) const {
  const std::string payload = std::to_string(unix_seconds) + "." + body;
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(payload.data()),
                       payload.size(), secret_key_);
  return "t=" + std::to_string(unix_seconds) + ",kid=" + kid_ +
         ",ed25519=" + B64Url(sig, sizeof sig);
}

std::string SubscriptionManager::MakeToken(const std::string& subject, std::int64_t epoch,
                                           std::int64_t now_ms) const {
  unsigned char jti[8];
  randombytes_buf(jti, sizeof jti);
  const std::string payload =
      json::serialize(json::object{{"sub", subject},
                                   {"epoch", epoch},
                                   {"exp", now_ms / 1000 + kTokenLifetimeSeconds},
                                   {"jti", B64Url(jti, sizeof jti)}});
  const std::string p =
      B64Url(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(p.data()), p.size(),
                         token_key_);
  return p + "." + B64Url(mac, sizeof mac);
}

std::string SubscriptionManager::Serialize(const Subscription& s) const {
  json::array streams;
  for (const auto& [path, link] : s.streams)
    streams.push_back(
        json::object{{"path", path},
                     {"link_type", link.types.count("explicit") ? "explicit" : "glob"},
                     {"acked_offset", link.acked}});
  json::object o{{"id", s.id},
                 {"subscription_id", s.id},
                 {"type", s.type},
                 {"streams", std::move(streams)},
                 {"lease_ttl_ms", s.lease_ttl_ms},
                 {"created_at", s.created_at},
                 {"status", s.status}};
  if (!s.pattern.empty()) o["pattern"] = s.pattern;
  if (!s.webhook_url.empty())
    o["webhook"] = json::object{
        {"url", s.webhook_url},
        {"signing", json::object{{"alg", "ed25519"},
                                 {"kid", kid_},
                                 {"jwks_url", s.base_url + "/v1/stream/__ds/jwks.json"}}}};
  if (!s.wake_stream.empty()) o["wake_stream"] = s.wake_stream;
  if (!s.description.empty()) o["description"] = s.description;
  return json::serialize(o);
}

void SubscriptionManager::CreateWake(Subscription& s, const std::string& triggered_by,
                                     TailView& tails, std::int64_t now_ms, Actions* actions) const {
  ++s.generation;
  s.wake_id = system::RandomId("w", 24);
  s.snapshot.clear();
  tails.Prefetch(s);
  for (const auto& [path, link] : s.streams) s.snapshot[path] = tails.Get(path);
  if (s.type == "webhook") {
    s.token = MakeToken("subscription:" + s.id, s.generation, now_ms);
    s.lease_expires_ms = now_ms + s.lease_ttl_ms;
    const std::string body = json::serialize(json::object{
        {"subscription_id", s.id},
        {"wake_id", s.wake_id},
        {"generation", s.generation},
        {"streams", tails.Infos(s)},
        {"callback_url", s.base_url + "/v1/stream/__ds/subscriptions/" + s.id + "/callback"},
        {"callback_token", s.token}});
    actions->deliveries.push_back(Delivery{s.id, s.wake_id, s.webhook_url, body});
    return;
  }
  if (s.wake_stream.empty()) return;
  actions->wake_appends.emplace_back(std::string(kStreamRoot) + s.wake_stream,
                                     json::serialize(json::object{{"type", "wake"},
                                                                  {"subscription_id", s.id},
                                                                  {"stream", triggered_by},
                                                                  {"generation", s.generation},
                                                                  {"ts", now_ms}}));
}

bool SubscriptionManager::NextWakeIfPending(Subscription& s, TailView& tails, std::int64_t now_ms,
                                            Actions* actions) const {
  const std::string first = tails.FirstPending(s);
  if (first.empty()) return false;
  CreateWake(s, first, tails, now_ms, actions);
  return true;
}

std::optional<StreamResponse> SubscriptionManager::CheckToken(const Subscription& s,
                                                              const std::string& token,
                                                              const std::string& body,
                                                              std::int64_t now_ms) const {
  const std::size_t dot = token.find('.');
  if (dot == std::string::npos) return Err(401, "TOKEN_INVALID", "Token invalid");
  const std::string p = token.substr(0, dot);
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(p.data()), p.size(),
                         token_key_);
  const std::string expected = B64Url(mac, sizeof mac);
  if (expected.size() != token.size() - dot - 1 ||
      sodium_memcmp(expected.data(), token.data() + dot + 1, expected.size()) != 0)
    return Err(401, "TOKEN_INVALID", "Token invalid");
  std::optional<std::string> decoded = net::DecodeBase64(p, net::Base64Alphabet::kUrlSafeNoPadding);
  if (!decoded) return Err(401, "TOKEN_INVALID", "Token invalid");
  const std::string payload = std::move(*decoded);
  boost::system::error_code ec;
  const json::value claims = json::parse(payload, ec);
  const json::object* c = ec ? nullptr : Object(claims);
  if (c == nullptr || StrField(*c, "sub") != "subscription:" + s.id)
    return Err(401, "TOKEN_INVALID", "Token invalid");
  const json::value* exp = c->if_contains("exp");
  if (exp == nullptr || !exp->is_int64() || exp->as_int64() < now_ms / 1000)
    return Err(401, "TOKEN_EXPIRED", "Token expired");
  const json::value req = json::parse(body, ec);
  const json::object* r = ec ? nullptr : Object(req);
  const json::value* epoch = c->if_contains("epoch");
  const json::value* generation = r != nullptr ? r->if_contains("generation") : nullptr;
  if (epoch == nullptr || !epoch->is_int64() || epoch->as_int64() != s.generation ||
      generation == nullptr || !generation->is_int64() || generation->as_int64() != s.generation ||
      s.wake_id.empty() || StrField(*r, "wake_id") != s.wake_id)
    return Err(409, "FENCED", "Wake generation is stale");
  return std::nullopt;
}

namespace {

// Applies the acks of a callback or ack body to `s`; the refusal, if any (then nothing changed).
std::optional<StreamResponse> ApplyAcks(
    Subscription& s, const json::value& body,
    const std::function<const std::string&(const std::string&)>& tail) {
  const json::object* r = Object(body);
  const json::value* acks = r != nullptr ? r->if_contains("acks") : nullptr;
  if (acks == nullptr || !acks->is_array()) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> updates;
  for (const json::value& ack : acks->as_array()) {
    const json::object* a = Object(ack);
    if (a == nullptr) return Err(400, "INVALID_REQUEST", "acks must be objects");
    std::string stream = StrField(*a, "stream");
    if (stream.empty()) stream = StrField(*a, "path");
    stream = Trim(stream);
    const std::string offset = StrField(*a, "offset");
    auto link = s.streams.find(stream);
    if (stream.empty() || link == s.streams.end())
      return Err(409, "INVALID_OFFSET", "Ack references an unknown subscription stream");
    if (offset == "-1") return Err(409, "INVALID_OFFSET", "Ack offset must not be -1");
    if (offset < link->second.acked)
      return Err(409, "INVALID_OFFSET", "Ack offset regresses the committed cursor");
    if (offset > tail(stream))
      return Err(409, "INVALID_OFFSET", "Ack offset is beyond stream tail");
    updates.emplace_back(stream, offset);
  }
  for (const auto& [stream, offset] : updates) s.streams[stream].acked = offset;
  return std::nullopt;
}

}  // namespace

StreamResponse SubscriptionManager::Handle(const StreamRequest& req, const std::string& base_url) {
  const std::string rest =
      req.path.size() > kControlRoot.size() ? req.path.substr(kControlRoot.size()) : "";
  if (rest == "jwks.json") {
    if (req.method != "GET") return Err(405, "INVALID_REQUEST", "Method not allowed");
    StreamResponse r =
        Json(200, json::serialize(json::object{
                      {"keys", json::array{json::object{{"kty", "OKP"},
                                                        {"crv", "Ed25519"},
                                                        {"x", x_},
                                                        {"kid", kid_},
                                                        {"use", "sig"},
                                                        {"alg", "EdDSA"}}}}}));
    r.headers[0].second = "application/jwk-set+json";
    r.headers.emplace_back("cache-control", "public, max-age=300");
    return r;
  }
  if (rest.rfind(kSubs, 0) != 0)
    return Err(404, "SUBSCRIPTION_NOT_FOUND", "Durable Streams control route not found");
  const std::string tail = rest.substr(kSubs.size());
  const std::size_t slash = tail.find('/');
  const std::string id = tail.substr(0, slash);
  const std::string action = slash == std::string::npos ? "" : tail.substr(slash + 1);
  if (id.empty()) return Err(404, "SUBSCRIPTION_NOT_FOUND", "Subscription not found");
  boost::system::error_code ec;
  const json::value body = req.body.empty() ? json::value() : json::parse(req.body, ec);
  if (ec) return Err(400, "INVALID_REQUEST", "Invalid JSON body");
  Actions actions;
  StreamResponse response;
  // Counted before a new subscription reads the streams' tails: a change committed after that
  // read is evaluated (and finds the subscription once it is stored).
  ++handling_;
  const Status updated = records_->Update(id, [&](Slot& slot) {
    TailView tails(store_);
    response = HandleOne(req, base_url, id, action, body, slot, tails, &actions);
  });
  --handling_;
  if (!updated.ok())
    return Err(503, "UNAVAILABLE", "Subscription storage failed; nothing was changed");
  Run(std::move(actions));
  return response;
}

StreamResponse SubscriptionManager::HandleOne(const StreamRequest& req, const std::string& base_url,
                                              const std::string& id, const std::string& action,
                                              const json::value& body, Slot& slot, TailView& tails,
                                              Actions* actions) {
  auto not_found = [] { return Err(404, "SUBSCRIPTION_NOT_FOUND", "Subscription not found"); };
  if (action.empty() && req.method == "PUT") return Create(body, base_url, id, slot, tails);
  if (action.empty() && req.method == "GET")
    return slot.sub ? Json(200, Serialize(*slot.sub)) : not_found();
  if (action.empty() && req.method == "DELETE") {
    slot.sub.reset();
    return StreamResponse{204, {}, ""};
  }
  if (!slot.sub) return not_found();
  Subscription& s = *slot.sub;
  if (action == "streams" && req.method == "POST") {
    const json::object* o = Object(body);
    const json::value* streams = o != nullptr ? o->if_contains("streams") : nullptr;
    if (streams == nullptr || !streams->is_array() || streams->as_array().empty())
      return Err(400, "INVALID_REQUEST", "streams must be a non-empty string array");
    for (const json::value& v : streams->as_array())
      if (!v.is_string() || v.as_string().empty())
        return Err(400, "INVALID_REQUEST", "streams must be a non-empty string array");
    for (const json::value& v : streams->as_array()) {
      if (s.streams.size() >= limits_.max_streams_per_subscription) break;
      const std::string stream = Trim(v.as_string());
      SubscriptionLink& link = s.streams[stream];
      link.types.insert("explicit");
      if (link.acked.empty()) link.acked = tails.Get(stream);
    }
    return StreamResponse{204, {}, ""};
  }
  if (action.rfind("streams/", 0) == 0 && req.method == "DELETE") {
    const std::string stream = Trim(action.substr(8));
    auto link = s.streams.find(stream);
    if (link != s.streams.end()) {
      link->second.types.erase("explicit");
      if (link->second.types.empty()) s.streams.erase(link);
    }
    return StreamResponse{204, {}, ""};
  }
  if (action == "claim" && req.method == "POST") return Claim(body, slot, tails, actions);
  const std::string auth = req.Header("authorization").value_or("");
  const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
  const bool callback = action == "callback", ack = action == "ack", release = action == "release";
  if ((callback || ack || release) && req.method == "POST") {
    if (token.empty())
      return Err(401, "TOKEN_INVALID", "Missing or malformed Authorization header");
    if (!callback && s.type != "pull-wake")
      return Err(400, "INVALID_REQUEST", "Subscription is not pull-wake");
    if (auto fenced = CheckToken(s, token, req.body, slot.now_ms)) return *fenced;
    if (release) {
      ClearWake(s);
      NextWakeIfPending(s, tails, slot.now_ms, actions);
      return StreamResponse{204, {}, ""};
    }
    if (auto error = ApplyAcks(
            s, body, [&](const std::string& p) -> const std::string& { return tails.Get(p); }))
      return *error;
    s.lease_expires_ms = slot.now_ms + s.lease_ttl_ms;
    bool next = false;
    const json::object* o = Object(body);
    const json::value* done = o != nullptr ? o->if_contains("done") : nullptr;
    if (done != nullptr && done->is_bool() && done->as_bool()) {
      ClearWake(s);
      next = NextWakeIfPending(s, tails, slot.now_ms, actions);
    }
    return Json(200, json::serialize(json::object{{"ok", true}, {"next_wake", next}}));
  }
  return Err(405, "INVALID_REQUEST", "Method not allowed");
}

StreamResponse SubscriptionManager::Create(const json::value& body, const std::string& base_url,
                                           const std::string& id, Slot& slot, TailView& tails) {
  const json::object* o = Object(body);
  if (o == nullptr) return Err(400, "INVALID_REQUEST", "Request body must be a JSON object");
  Subscription s;
  s.id = id;
  s.type = StrField(*o, "type");
  if (s.type != "webhook" && s.type != "pull-wake")
    return Err(400, "INVALID_REQUEST", R"(type must be "webhook" or "pull-wake")");
  s.pattern = Trim(StrField(*o, "pattern"));
  if (const json::value* streams = o->if_contains("streams"); streams && streams->is_array()) {
    for (const json::value& v : streams->as_array()) {
      if (!v.is_string()) return Err(400, "INVALID_REQUEST", "streams must contain only strings");
      s.explicit_streams.push_back(Trim(v.as_string()));
    }
  }
  if (s.pattern.empty() && s.explicit_streams.empty())
    return Err(400, "INVALID_REQUEST", "At least one of pattern or streams is required");
  if (const json::value* lease = o->if_contains("lease_ttl_ms")) {
    if (!lease->is_int64() || lease->as_int64() < kMinLeaseMs || lease->as_int64() > kMaxLeaseMs)
      return Err(400, "INVALID_REQUEST", "lease_ttl_ms must be an integer from 1000 to 600000");
    s.lease_ttl_ms = lease->as_int64();
  }
  if (s.type == "webhook") {
    const json::value* hook = o->if_contains("webhook");
    if (hook != nullptr && hook->is_object()) s.webhook_url = StrField(hook->as_object(), "url");
    if (s.webhook_url.empty())
      return Err(400, "INVALID_REQUEST", "webhook subscriptions require webhook.url");
  }
  s.wake_stream = Trim(StrField(*o, "wake_stream"));
  if (s.type == "pull-wake" && s.wake_stream.empty())
    return Err(400, "INVALID_REQUEST", "pull-wake subscriptions require wake_stream");
  s.description = StrField(*o, "description");
  std::vector<std::string> sorted = s.explicit_streams;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (slot.sub) {
    const Subscription& e = *slot.sub;
    std::vector<std::string> existing = e.explicit_streams;
    std::sort(existing.begin(), existing.end());
    existing.erase(std::unique(existing.begin(), existing.end()), existing.end());
    if (e.type != s.type || e.pattern != s.pattern || existing != sorted ||
        e.webhook_url != s.webhook_url || e.wake_stream != s.wake_stream ||
        e.lease_ttl_ms != s.lease_ttl_ms || e.description != s.description)
      return Err(409, "SUBSCRIPTION_ALREADY_EXISTS",
                 "Subscription already exists with different configuration");
    return Json(200, Serialize(e));
  }
  if (s.type == "webhook") {
    if (auto reason = RejectWebhookUrl(s.webhook_url))
      return Err(400, "WEBHOOK_URL_REJECTED", *reason);
  }
  if (slot.count() >= limits_.max_subscriptions)
    return Err(503, "INVALID_REQUEST", "Too many subscriptions");
  s.base_url = base_url;
  s.created_at = Iso8601(slot.now_ms);
  std::vector<std::string> followed = s.explicit_streams;
  if (!s.pattern.empty()) {
    // Only streams under the pattern's literal leading segments can match it.
    const std::size_t wild = s.pattern.find('*');
    std::string prefix = s.pattern.substr(0, wild);
    if (wild != std::string::npos) prefix = prefix.substr(0, prefix.rfind('/') + 1);
    for (const std::string& path : store_.Paths(std::string(kStreamRoot) + prefix)) {
      if (path.rfind(kStreamRoot, 0) != 0 || path.rfind(kControlRoot, 0) == 0) continue;
      const std::string relative = path.substr(kStreamRoot.size());
      if (GlobMatch(s.pattern, relative)) followed.push_back(relative);
    }
  }
  tails.Prefetch(followed);
  for (std::size_t i = 0; i < followed.size(); ++i) {
    SubscriptionLink& link = s.streams[followed[i]];
    link.types.insert(i < s.explicit_streams.size() ? "explicit" : "glob");
    if (link.acked.empty()) link.acked = tails.Get(followed[i]);
  }
  const std::string serialized = Serialize(s);
  slot.sub = std::move(s);
  return Json(201, serialized);
}

StreamResponse SubscriptionManager::Claim(const json::value& body, Slot& slot, TailView& tails,
                                          Actions* actions) {
  Subscription& s = *slot.sub;
  const json::object* o = Object(body);
  const std::string worker = o != nullptr ? StrField(*o, "worker") : "";
  if (worker.empty()) return Err(400, "INVALID_REQUEST", "worker must be a non-empty string");
  if (s.type != "pull-wake") return Err(400, "INVALID_REQUEST", "Subscription is not pull-wake");
  if (!s.holder.empty() && slot.now_ms >= s.lease_expires_ms) ClearWake(s);  // the lease lapsed
  if (!s.holder.empty())
    return Json(
        409, json::serialize(json::object{{"error", json::object{{"code", "ALREADY_CLAIMED"},
                                                                 {"current_holder", s.holder},
                                                                 {"generation", s.generation}}}}));
  const std::string first = tails.FirstPending(s);
  if (first.empty()) return Err(409, "NO_PENDING_WORK", "Subscription has no pending work");
  if (s.wake_id.empty()) CreateWake(s, first, tails, slot.now_ms, actions);
  s.holder = worker;
  s.token = MakeToken("subscription:" + s.id, s.generation, slot.now_ms);
  s.lease_expires_ms = slot.now_ms + s.lease_ttl_ms;
  return Json(200, json::serialize(json::object{{"wake_id", s.wake_id},
                                                {"generation", s.generation},
                                                {"token", s.token},
                                                {"streams", tails.Infos(s)},
                                                {"lease_ttl_ms", s.lease_ttl_ms}}));
}

void SubscriptionManager::OnStreamChanged(const std::string& path) {
  if (handling_ == 0 && !records_->Any()) return;
  if (path.rfind(kStreamRoot, 0) != 0 || path.rfind(kControlRoot, 0) == 0) return;
  // Handled on the delivery thread: this runs inside the store's commit notification.
  std::lock_guard lock(queue_mu_);
  if (queue_.size() >= limits_.max_pending_deliveries) return;
  queue_.push_back(Delivery{"", "", "", path});
  queue_cv_.notify_one();
}

void SubscriptionManager::Run(Actions actions) {
  for (auto& [path, event] : actions.wake_appends) {
    AppendArgs args;
    args.path = path;
    args.body = event;
    args.content_type = "application/json";
    store_.AppendAsync(std::move(args), [](const OpResult&) {});
  }
  std::lock_guard lock(queue_mu_);
  for (Delivery& d : actions.deliveries) {
    if (queue_.size() >= limits_.max_pending_deliveries) break;
    queue_.push_back(std::move(d));
  }
  queue_cv_.notify_one();
}

void SubscriptionManager::DeliveryLoop() {
  auto refreshed = std::chrono::steady_clock::now();
  for (;;) {
    Delivery d;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait_for(lock, std::chrono::seconds(1),
                         [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      if (queue_.empty()) {
        lock.unlock();
        records_->Refresh();
        refreshed = std::chrono::steady_clock::now();
        continue;
      }
      d = std::move(queue_.front());
      queue_.pop_front();
    }
    if (std::chrono::steady_clock::now() - refreshed > std::chrono::seconds(1)) {
      records_->Refresh();
      refreshed = std::chrono::steady_clock::now();
    }
    if (d.subscription_id.empty()) {
      StreamChanged(d.body);
      continue;
    }
    std::string response;
    const int status = PostJson(d.url, d.body,
                                {{"content-type", "application/json"},
                                 {"webhook-signature", Sign(d.body, system::WallClockMs() / 1000)}},
                                limits_.webhook_timeout_ms, &response);
    Delivered(d, status, response);
  }
}

void SubscriptionManager::StreamChanged(const std::string& path) {
  const std::string relative = path.substr(kStreamRoot.size());
  auto candidates = records_->Candidates(relative);
  if (!candidates.ok()) return;  // storage failed: the next change wakes again
  for (const SubscriptionRecords::Candidate& candidate : *candidates) {
    if (!candidate.linked && !GlobMatch(candidate.pattern, relative)) continue;
    Actions actions;
    const Status updated = records_->Update(candidate.id, [&](Slot& slot) {
      if (!slot.sub) return;
      Subscription& s = *slot.sub;
      if (!s.pattern.empty() && GlobMatch(s.pattern, relative)) {
        SubscriptionLink& link = s.streams[relative];
        link.types.insert("glob");
        if (link.acked.empty()) link.acked = "-1";
      }
      if (!s.streams.count(relative)) return;
      TailView tails(store_);
      if (!s.wake_id.empty() && slot.now_ms >= s.lease_expires_ms) {
        // An unclaimed pull wake is made again only once its streams moved past its snapshot:
        // the daemons that all hear one change make one wake between them.
        if (s.holder.empty() && s.type == "pull-wake" && !tails.MovedPast(s)) return;
        ClearWake(s);
      }
      if (!s.wake_id.empty() || !s.holder.empty()) return;
      const std::string first = tails.FirstPending(s);
      if (!first.empty()) CreateWake(s, relative, tails, slot.now_ms, &actions);
    });
    if (updated.ok()) Run(std::move(actions));
  }
}

void SubscriptionManager::Delivered(const Delivery& d, int status, const std::string& body) {
  Actions actions;
  const Status updated = records_->Update(d.subscription_id, [&](Slot& slot) {
    if (!slot.sub || slot.sub->wake_id != d.wake_id) return;  // fenced: a newer wake
    Subscription& s = *slot.sub;
    if (status < 200 || status >= 300) {
      s.status = "failed";  // redelivered by the next change once the lease lapses
      return;
    }
    s.status = "active";
    boost::system::error_code ec;
    const json::value answer = json::parse(body, ec);
    const json::object* o = ec ? nullptr : Object(answer);
    const json::value* done = o != nullptr ? o->if_contains("done") : nullptr;
    if (done != nullptr && done->is_bool() && done->as_bool()) {
      for (const auto& [stream, tail] : s.snapshot) {
        auto link = s.streams.find(stream);
        if (link != s.streams.end()) link->second.acked = tail;
      }
      ClearWake(s);
      TailView tails(store_);
      NextWakeIfPending(s, tails, slot.now_ms, &actions);
    }
  });
  if (updated.ok()) Run(std::move(actions));
}

}  // namespace agentstream::streams
