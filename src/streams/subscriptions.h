// The reserved Durable Streams subscription API (/v1/stream/__ds/...): webhook subscriptions,
// whose wakes are POSTed signed with Ed25519 (keys published at __ds/jwks.json), and pull-wake
// subscriptions, whose wakes are appended to a wake stream and claimed by workers. Each wake has
// a generation; a callback, ack or release with a stale generation or wake id is fenced (409),
// and a claim holds a lease of lease_ttl_ms. Subscriptions, with their acknowledged offsets and
// wake state, are journaled in the stream store (subscription_state.cc) and survive a restart,
// as do the signing and token keys when a key file is given.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "streams/stream_protocol.h"
#include "streams/stream_store.h"

namespace agentstream::streams {

struct SubscriptionLimits {
  std::size_t max_subscriptions = 1000;
  std::size_t max_streams_per_subscription = 10000;
  std::size_t max_pending_deliveries = 1000;  // queued webhook POSTs
  int webhook_timeout_ms = 5000;
};

class SubscriptionManager {
 public:
  explicit SubscriptionManager(StreamStore& store, SubscriptionLimits limits = {});
  ~SubscriptionManager();
  SubscriptionManager(const SubscriptionManager&) = delete;
  SubscriptionManager& operator=(const SubscriptionManager&) = delete;

  // Loads (or creates, mode 0600) the signing and token keys at `key_path` ("" keeps this run's
  // fresh keys), then the subscriptions journaled in the store. Call before serving requests.
  Status Restore(const std::string& key_path);

  // A request under /v1/stream/__ds/. `base_url` is "http://host:port" of this server.
  StreamResponse Handle(const StreamRequest& request, const std::string& base_url);
  // A stream changed (append, create, close, delete): wakes the subscriptions that follow it.
  void OnStreamChanged(const std::string& path);

  // Ed25519 signature header value for `body` at `unix_seconds`: "t=..,kid=..,ed25519=..".
  std::string Sign(const std::string& body, std::int64_t unix_seconds) const;
  const std::string& kid() const { return kid_; }

 private:
  struct Link {
    std::set<std::string> types;  // "explicit", "glob"
    std::string acked;            // offset, or "-1"
  };
  struct Subscription {
    std::string id, type, pattern, webhook_url, wake_stream, description, base_url, created_at;
    std::vector<std::string> explicit_streams;
    std::int64_t lease_ttl_ms = 30000;
    std::string status = "active";
    std::map<std::string, Link> streams;
    std::int64_t generation = 0;
    std::string wake_id, token, holder;
    std::int64_t lease_expires_ms = 0;
    std::map<std::string, std::string> snapshot;
  };
  struct Delivery {
    std::string subscription_id, wake_id, url, body;
  };
  // Work found under the lock, done after it (appends re-enter the store).
  struct Actions {
    std::vector<Delivery> deliveries;
    std::vector<std::pair<std::string, std::string>> wake_appends;  // path, JSON
  };

  StreamResponse HandleLocked(const StreamRequest& req, const std::string& base_url,
                              Actions* actions);
  std::string Tail(const std::string& relative) const;
  std::string Serialize(const Subscription& s) const;
  std::string StreamInfos(const Subscription& s) const;
  bool HasPending(const Subscription& s) const;
  std::string FirstPending(const Subscription& s) const;
  void CreateWake(Subscription& s, const std::string& triggered_by, Actions* actions);
  bool NextWakeIfPending(Subscription& s, Actions* actions);
  void ClearWake(Subscription& s);
  std::string MakeToken(const std::string& subject, std::int64_t epoch) const;
  std::optional<StreamResponse> CheckToken(const Subscription& s, const std::string& token,
                                           const std::string& body) const;
  std::optional<StreamResponse> ApplyAcks(Subscription& s, const std::string& body) const;
  void Run(Actions actions);
  // Journals subscription `id` (or its removal) if it changed since it was last journaled.
  // Called under mu_.
  void Save(const std::string& id);
  std::string Encode(const Subscription& s) const;
  static std::optional<Subscription> Decode(const std::string& text);
  void DeriveKeyId();
  void DeliveryLoop();
  void Delivered(const Delivery& d, int status, const std::string& body);

  StreamStore& store_;
  const SubscriptionLimits limits_;
  unsigned char public_key_[32];
  unsigned char secret_key_[64];
  unsigned char token_key_[32];
  std::string x_, kid_;
  std::mutex mu_;
  std::map<std::string, Subscription> subs_;
  // False only while no subscription exists and none is being created: a changed stream then
  // wakes nobody (the common case costs no thread hand-off per append).
  std::atomic<bool> any_subscription_{false};
  std::map<std::string, std::string> saved_;  // id -> the record last journaled (under mu_)
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Delivery> queue_;
  bool stop_ = false;
  std::thread sender_;
};

// "events/*" style globs: '*' one segment, '**' any number of segments.
bool GlobMatch(std::string_view pattern, std::string_view path);

// Blocking HTTP/1.1 POST of a JSON body to an http:// or https:// URL (net::SendHttpRequest);
// the status (0 when it failed, or when the answer was over 64 KiB) and the response body.
int PostJson(const std::string& url, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms,
             std::string* response_body);

}  // namespace agentstream::streams
