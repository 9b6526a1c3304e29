// The requests of the subscription API under /v1/stream/__ds/ (subscriptions.h): the JWKS, and
// per subscription its creation, reading and deletion, the streams it follows, claims of its
// wakes, and callbacks, acks and releases (checked against the wake's token and generation).
// Each request is one Update of the subscription's records.
#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <ctime>
#include <functional>

#include "streams/subscriptions.h"
#include "streams/subscriptions_internal.h"

namespace agentstream::streams {

using subscriptions_internal::ClearWake;
using subscriptions_internal::Err;
using subscriptions_internal::Json;
using subscriptions_internal::kControlRoot;
using subscriptions_internal::kStreamRoot;
using subscriptions_internal::Object;
using subscriptions_internal::RejectWebhookUrl;
using subscriptions_internal::StrField;

namespace {

constexpr std::string_view kSubs = "subscriptions/";
constexpr std::int64_t kMinLeaseMs = 1000;
constexpr std::int64_t kMaxLeaseMs = 600000;

std::string Trim(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
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

// Applies the acks of a callback or ack body to `s`; the refusal, if any (then nothing changed).
std::optional<StreamResponse> ApplyAcks(
    SubscriptionRecord& s, const json::value& body,
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

// The configuration of a subscription create's body into `s`; the refusal, if any.
std::optional<StreamResponse> ReadSpec(const json::object& o, SubscriptionRecord& s) {
  s.type = StrField(o, "type");
  if (s.type != "webhook" && s.type != "pull-wake")
    return Err(400, "INVALID_REQUEST", R"(type must be "webhook" or "pull-wake")");
  s.pattern = Trim(StrField(o, "pattern"));
  if (const json::value* streams = o.if_contains("streams"); streams && streams->is_array()) {
    for (const json::value& v : streams->as_array()) {
      if (!v.is_string()) return Err(400, "INVALID_REQUEST", "streams must contain only strings");
      s.explicit_streams.push_back(Trim(v.as_string()));
    }
  }
  if (s.pattern.empty() && s.explicit_streams.empty())
    return Err(400, "INVALID_REQUEST", "At least one of pattern or streams is required");
  if (const json::value* lease = o.if_contains("lease_ttl_ms")) {
    if (!lease->is_int64() || lease->as_int64() < kMinLeaseMs || lease->as_int64() > kMaxLeaseMs)
      return Err(400, "INVALID_REQUEST", "lease_ttl_ms must be an integer from 1000 to 600000");
    s.lease_ttl_ms = lease->as_int64();
  }
  if (s.type == "webhook") {
    const json::value* hook = o.if_contains("webhook");
    if (hook != nullptr && hook->is_object()) s.webhook_url = StrField(hook->as_object(), "url");
    if (s.webhook_url.empty())
      return Err(400, "INVALID_REQUEST", "webhook subscriptions require webhook.url");
  }
  s.wake_stream = Trim(StrField(o, "wake_stream"));
  if (s.type == "pull-wake" && s.wake_stream.empty())
    return Err(400, "INVALID_REQUEST", "pull-wake subscriptions require wake_stream");
  s.description = StrField(o, "description");
  return std::nullopt;
}

std::vector<std::string> Distinct(std::vector<std::string> list) {
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  return list;
}

// Whether a create of `b` repeats the configuration of the existing `a` (idempotent).
bool SameSpec(const SubscriptionRecord& a, const SubscriptionRecord& b) {
  return a.type == b.type && a.pattern == b.pattern &&
         Distinct(a.explicit_streams) == Distinct(b.explicit_streams) &&
         a.webhook_url == b.webhook_url && a.wake_stream == b.wake_stream &&
         a.lease_ttl_ms == b.lease_ttl_ms && a.description == b.description;
}

}  // namespace

std::string SubscriptionManager::Serialize(const SubscriptionRecord& s) const {
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
  SubscriptionRecord& s = *slot.sub;
  if (action == "streams" && req.method == "POST") return AddStreams(s, body, tails);
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
  if ((action == "callback" || action == "ack" || action == "release") && req.method == "POST")
    return Acknowledge(req, action, body, slot, tails, actions);
  return Err(405, "INVALID_REQUEST", "Method not allowed");
}

StreamResponse SubscriptionManager::AddStreams(SubscriptionRecord& s, const json::value& body,
                                               TailView& tails) {
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

// A callback (either type), an ack or a release (pull-wake): each carries the wake's token.
StreamResponse SubscriptionManager::Acknowledge(const StreamRequest& req, const std::string& action,
                                                const json::value& body, Slot& slot,
                                                TailView& tails, Actions* actions) {
  SubscriptionRecord& s = *slot.sub;
  const std::string auth = req.Header("authorization").value_or("");
  const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
  if (token.empty()) return Err(401, "TOKEN_INVALID", "Missing or malformed Authorization header");
  if (action != "callback" && s.type != "pull-wake")
    return Err(400, "INVALID_REQUEST", "Subscription is not pull-wake");
  if (auto fenced = CheckToken(s, token, req.body, slot.now_ms)) return *fenced;
  if (action == "release") {
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

StreamResponse SubscriptionManager::Create(const json::value& body, const std::string& base_url,
                                           const std::string& id, Slot& slot, TailView& tails) {
  const json::object* o = Object(body);
  if (o == nullptr) return Err(400, "INVALID_REQUEST", "Request body must be a JSON object");
  SubscriptionRecord s;
  s.id = id;
  if (auto refused = ReadSpec(*o, s)) return *refused;
  if (slot.sub) {
    if (!SameSpec(*slot.sub, s))
      return Err(409, "SUBSCRIPTION_ALREADY_EXISTS",
                 "Subscription already exists with different configuration");
    return Json(200, Serialize(*slot.sub));
  }
  if (s.type == "webhook") {
    if (auto reason = RejectWebhookUrl(s.webhook_url))
      return Err(400, "WEBHOOK_URL_REJECTED", *reason);
  }
  if (slot.count() >= limits_.max_subscriptions)
    return Err(503, "INVALID_REQUEST", "Too many subscriptions");
  s.base_url = base_url;
  s.created_at = Iso8601(slot.now_ms);
  const std::vector<std::string> followed = Followed(s);
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

// The explicit streams of `s`, then the existing streams its pattern matches.
std::vector<std::string> SubscriptionManager::Followed(const SubscriptionRecord& s) const {
  std::vector<std::string> followed = s.explicit_streams;
  if (s.pattern.empty()) return followed;
  // Only streams under the pattern's literal leading segments can match it.
  const std::size_t wild = s.pattern.find('*');
  std::string prefix = s.pattern.substr(0, wild);
  if (wild != std::string::npos) prefix = prefix.substr(0, prefix.rfind('/') + 1);
  for (const std::string& path : store_.Paths(std::string(kStreamRoot) + prefix)) {
    if (path.rfind(kStreamRoot, 0) != 0 || path.rfind(kControlRoot, 0) == 0) continue;
    const std::string relative = path.substr(kStreamRoot.size());
    if (GlobMatch(s.pattern, relative)) followed.push_back(relative);
  }
  return followed;
}

StreamResponse SubscriptionManager::Claim(const json::value& body, Slot& slot, TailView& tails,
                                          Actions* actions) {
  SubscriptionRecord& s = *slot.sub;
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

}  // namespace agentstream::streams
