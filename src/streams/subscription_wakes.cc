// Wakes and their delivery (subscriptions.h): a changed stream wakes the subscriptions that
// follow it, or whose pattern it matches; a webhook wake is POSTed, signed, by the delivery
// thread, a pull-wake wake is appended to the subscription's wake stream. The delivery thread
// also evaluates the changed streams and refreshes the records about once a second.
#include <boost/json.hpp>
#include <chrono>

#include "streams/subscriptions.h"
#include "streams/subscriptions_internal.h"
#include "system/random_id.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

using subscriptions_internal::ClearWake;
using subscriptions_internal::kControlRoot;
using subscriptions_internal::kStreamRoot;
using subscriptions_internal::Object;

void SubscriptionManager::CreateWake(SubscriptionRecord& s, const std::string& triggered_by,
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

bool SubscriptionManager::NextWakeIfPending(SubscriptionRecord& s, TailView& tails,
                                            std::int64_t now_ms, Actions* actions) const {
  const std::string first = tails.FirstPending(s);
  if (first.empty()) return false;
  CreateWake(s, first, tails, now_ms, actions);
  return true;
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
      SubscriptionRecord& s = *slot.sub;
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
    SubscriptionRecord& s = *slot.sub;
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
