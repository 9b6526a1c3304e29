// The reserved Durable Streams subscription API (/v1/stream/__ds/...): webhook subscriptions,
// whose wakes are POSTed signed with Ed25519 (keys published at __ds/jwks.json), and pull-wake
// subscriptions, whose wakes are appended to a wake stream and claimed by workers. Each wake has
// a generation; a callback, ack or release with a stale generation or wake id is fenced (409),
// and a claim holds a lease of lease_ttl_ms.
//
// The subscriptions and the keys live in SubscriptionRecords (subscription_records.h): every
// request and every stream change is one Update of one subscription, so on records shared by
// several daemons (PostgreSQL) a wake is created, claimed, acknowledged or fenced by one daemon
// at a time, and only the daemon whose Update created a wake delivers its webhook.
//
// Threading: Handle runs on the caller's thread (it may block on the records' storage);
// OnStreamChanged only queues; one delivery thread evaluates changed streams and POSTs webhooks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "streams/stream_protocol.h"
#include "streams/stream_store.h"
#include "streams/subscription_records.h"

namespace boost::json {
class value;
}

namespace agentstream::streams {

struct SubscriptionLimits {
  std::size_t max_subscriptions = 1000;
  std::size_t max_streams_per_subscription = 10000;
  std::size_t max_pending_deliveries = 1000;  // queued webhook POSTs and stream changes
  int webhook_timeout_ms = 5000;
};

class SubscriptionManager {
 public:
  // `store` outlives the manager. Starts the delivery thread.
  SubscriptionManager(StreamStore& store, std::unique_ptr<SubscriptionRecords> records,
                      SubscriptionLimits limits = {});
  ~SubscriptionManager();
  SubscriptionManager(const SubscriptionManager&) = delete;
  SubscriptionManager& operator=(const SubscriptionManager&) = delete;

  // Opens the records and takes their signing and token keys (or keeps this run's fresh ones
  // when they keep none). Call before serving requests.
  Status Restore();

  // A request under /v1/stream/__ds/. `base_url` is "http://host:port" of this server. A storage
  // failure of the records is 503 (nothing was changed).
  StreamResponse Handle(const StreamRequest& request, const std::string& base_url);
  // A stream changed (append, create, close, delete): wakes the subscriptions that follow it.
  void OnStreamChanged(const std::string& path);

  // Ed25519 signature header value for `body` at `unix_seconds`: "t=..,kid=..,ed25519=..".
  std::string Sign(const std::string& body, std::int64_t unix_seconds) const;
  const std::string& kid() const { return kid_; }

 private:
  class TailView;
  struct Delivery {
    std::string subscription_id, wake_id, url, body;
  };
  // Work found inside an Update, done after it (appends re-enter the store).
  struct Actions {
    std::vector<Delivery> deliveries;
    std::vector<std::pair<std::string, std::string>> wake_appends;  // path, JSON
  };
  using Slot = SubscriptionRecords::Slot;

  StreamResponse HandleOne(const StreamRequest& req, const std::string& base_url,
                           const std::string& id, const std::string& action,
                           const boost::json::value& body, Slot& slot, TailView& tails,
                           Actions* actions);
  StreamResponse AddStreams(SubscriptionRecord& s, const boost::json::value& body, TailView& tails);
  StreamResponse Acknowledge(const StreamRequest& req, const std::string& action,
                             const boost::json::value& body, Slot& slot, TailView& tails,
                             Actions* actions);
  StreamResponse Create(const boost::json::value& body, const std::string& base_url,
                        const std::string& id, Slot& slot, TailView& tails);
  std::vector<std::string> Followed(const SubscriptionRecord& s) const;
  StreamResponse Claim(const boost::json::value& body, Slot& slot, TailView& tails,
                       Actions* actions);
  std::string Serialize(const SubscriptionRecord& s) const;
  void CreateWake(SubscriptionRecord& s, const std::string& triggered_by, TailView& tails,
                  std::int64_t now_ms, Actions* actions) const;
  bool NextWakeIfPending(SubscriptionRecord& s, TailView& tails, std::int64_t now_ms,
                         Actions* actions) const;
  std::string MakeToken(const std::string& subject, std::int64_t epoch, std::int64_t now_ms) const;
  std::optional<StreamResponse> CheckToken(const SubscriptionRecord& s, const std::string& token,
                                           const std::string& body, std::int64_t now_ms) const;
  void Run(Actions actions);
  void DeriveKeyId();
  void DeliveryLoop();
  void StreamChanged(const std::string& path);
  void Delivered(const Delivery& d, int status, const std::string& body);

  StreamStore& store_;
  const std::unique_ptr<SubscriptionRecords> records_;
  const SubscriptionLimits limits_;
  unsigned char public_key_[32];
  unsigned char secret_key_[64];
  unsigned char token_key_[32];
  std::string x_, kid_;
  // Requests in progress: while one runs, a changed stream is evaluated even when no
  // subscription existed yet (a new subscription reads the tails before it is stored).
  std::atomic<int> handling_{0};
  std::mutex queue_mu_;  // guards queue_ and stop_
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
