// Internal to the subscriptions (subscriptions.h): what their files share. subscriptions.cc holds
// the manager's lifecycle and its keys (webhook signatures, callback tokens);
// subscription_requests.cc answers the requests under /v1/stream/__ds/; subscription_wakes.cc
// turns stream changes into wakes and runs the delivery thread; subscription_webhooks.cc checks
// webhook URLs and POSTs to them; subscription_glob.cc matches stream patterns.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "streams/stream_protocol.h"
#include "streams/stream_store.h"
#include "streams/subscription_records.h"
#include "streams/subscriptions.h"

namespace agentstream::streams {

namespace json = boost::json;

namespace subscriptions_internal {

inline constexpr std::string_view kStreamRoot = "/v1/stream/";
inline constexpr std::string_view kControlRoot = "/v1/stream/__ds/";

// A JSON response.
inline StreamResponse Json(int status, std::string body) {
  StreamResponse r;
  r.status = status;
  r.headers.emplace_back("content-type", "application/json");
  r.body = std::move(body);
  return r;
}

// The JSON error response {"error":{"code":..,"message":..}}.
inline StreamResponse Err(int status, std::string_view code, std::string_view message) {
  return Json(
      status,
      json::serialize(json::object{{"error", json::object{{"code", code}, {"message", message}}}}));
}

// `v` as an object; nullptr when it is none.
inline const json::object* Object(const json::value& v) {
  return v.is_object() ? &v.as_object() : nullptr;
}

// The string member `key` of `o`; "" when absent or not a string.
inline std::string StrField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Ends the wake in progress of `s` (its token, holder, snapshot and lease).
inline void ClearWake(SubscriptionRecord& s) {
  s.token.clear();
  s.holder.clear();
  s.wake_id.clear();
  s.snapshot.clear();
  s.lease_expires_ms = 0;
}

// subscription_webhooks.cc: nullopt when `url` may receive webhooks, else the reason.
std::optional<std::string> RejectWebhookUrl(const std::string& url);

}  // namespace subscriptions_internal

// The tails of a subscription's streams as offset text (zero for a missing stream), read from
// the store once per change of the subscription: one read for all of them.
class SubscriptionManager::TailView {
 public:
  explicit TailView(StreamStore& store) : store_(store) {}

  void Prefetch(const std::vector<std::string>& relative) {
    std::vector<std::string> paths;
    for (const std::string& r : relative)
      if (cache_.count(r) == 0)
        paths.push_back(std::string(subscriptions_internal::kStreamRoot) + r);
    if (paths.empty()) return;
    const std::map<std::string, Offset> tails = store_.Tails(paths);
    for (const std::string& path : paths) {
      auto it = tails.find(path);
      cache_[path.substr(subscriptions_internal::kStreamRoot.size())] =
          FormatOffset(it == tails.end() ? Offset{} : it->second);
    }
  }
  void Prefetch(const SubscriptionRecord& s) {
    std::vector<std::string> relative;
    relative.reserve(s.streams.size());
    for (const auto& [path, link] : s.streams) relative.push_back(path);
    Prefetch(relative);
  }
  const std::string& Get(const std::string& relative) {
    if (cache_.count(relative) == 0) Prefetch(std::vector<std::string>{relative});
    return cache_[relative];
  }
  std::string FirstPending(const SubscriptionRecord& s) {
    Prefetch(s);
    for (const auto& [path, link] : s.streams)
      if (Get(path) > link.acked) return path;
    return "";
  }
  // True when a stream's tail differs from the wake snapshot's.
  bool MovedPast(const SubscriptionRecord& s) {
    Prefetch(s);
    for (const auto& [path, link] : s.streams) {
      auto at = s.snapshot.find(path);
      if (at == s.snapshot.end() || at->second != Get(path)) return true;
    }
    return false;
  }
  json::array Infos(const SubscriptionRecord& s) {
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

}  // namespace agentstream::streams
