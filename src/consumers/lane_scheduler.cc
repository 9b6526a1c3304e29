#include <algorithm>
#include <tuple>
#include <utility>

#include "consumers/consumer_service_impl.h"

namespace agentstream::consumers {

void ConsumerService::Impl::TrackLocked(Entry& e, const SessionInfo& info) {
  auto it = e.lanes.find(info.id);
  if (it == e.lanes.end()) {
    if (e.lanes.size() >= options_.max_sessions_per_consumer) return;
    if (!Selects(e.spec, info.id, info.meta.provider)) return;
    it = e.lanes.emplace(info.id, std::make_shared<Lane>(info.id)).first;
  }
  it->second->progress.tail = Cursor{info.epoch, info.tail};
  it->second->dirty = true;
}

void ConsumerService::Impl::Discover() {
  std::map<SessionId, Cursor> noticed;
  bool rescan = false;
  {
    std::lock_guard lock(mu_);
    noticed.swap(noticed_);
    std::swap(rescan, rescan_);
    // A known session needs no read: the notice carries its tail.
    for (auto it = noticed.begin(); it != noticed.end();) {
      if (providers_.count(it->first) == 0) {
        ++it;
        continue;
      }
      for (auto& [id, e] : consumers_) {
        auto lane = e->lanes.find(it->first);
        if (lane == e->lanes.end()) continue;
        lane->second->progress.tail = it->second;
        lane->second->dirty = true;
      }
      it = noticed.erase(it);
    }
  }
  std::vector<SessionInfo> infos;
  if (rescan) {
    std::string after;
    while (infos.size() < options_.max_sessions_per_consumer) {
      auto page = log_.ListSessions(after, 1000);
      if (!page.ok() || page->empty()) break;
      after = page->back().id.str();
      for (auto& info : *page) infos.push_back(std::move(info));
    }
  } else {
    for (const auto& [id, tail] : noticed) {
      auto info = log_.GetSession(id);
      if (info.ok()) infos.push_back(std::move(*info));
    }
  }
  std::lock_guard lock(mu_);
  for (const auto& info : infos) {
    if (providers_.size() < options_.max_sessions_per_consumer || providers_.count(info.id) > 0)
      providers_[info.id] = info.meta.provider;
    for (auto& [id, e] : consumers_) TrackLocked(*e, info);
  }
}

void ConsumerService::Impl::PushIfDueLocked(const std::shared_ptr<Entry>& e,
                                            const std::shared_ptr<Lane>& lane,
                                            SteadyClock::time_point now) {
  if (lane->scheduled || e->deleted || !(lane->dirty || lane->resume) || lane->not_before > now)
    return;
  lane->scheduled = true;
  ready_.emplace_back(e, lane);
  worker_cv_.notify_one();
}

void ConsumerService::Impl::SchedulerLoop() {
  auto next_rescan = SchedulerNow();
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
      if (SchedulerNow() >= next_rescan) {
        rescan_ = true;
        next_rescan = SchedulerNow() + Millis(options_.rescan_ms);
      }
      resume_pending_ = false;
    }
    Discover();
    std::unique_lock lock(mu_);
    if (stopping_) return;
    auto now = SchedulerNow();
    auto wake = std::min(next_rescan, now + Millis(options_.idle_poll_ms));
    for (auto& [id, e] : consumers_) {
      for (auto& [sid, lane] : e->lanes) {
        PushIfDueLocked(e, lane, now);
        if (!lane->scheduled && lane->dirty && lane->not_before > now)
          wake = std::min(wake, lane->not_before);
      }
    }
    // A wait for a span rather than until an instant of the steady clock: the scheduler's time may
    // be an injected one, which the wait sees move at the latest after idle_poll_ms.
    scheduler_cv_.wait_for(lock, wake - SchedulerNow(), [&] {
      return stopping_ || !noticed_.empty() || rescan_ || resume_pending_;
    });
  }
}

void ConsumerService::Impl::WorkerLoop() {
  while (true) {
    std::shared_ptr<Entry> e;
    std::shared_ptr<Lane> lane;
    {
      std::unique_lock lock(mu_);
      worker_cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      std::tie(e, lane) = std::move(ready_.front());
      ready_.pop_front();
      if (e->deleted) {
        lane->scheduled = false;
        continue;
      }
      ++e->running;
      lane->dirty = false;  // a commit notice during the step sets it again
    }
    const StepOutcome out = Step(*e, *lane);
    std::lock_guard lock(mu_);
    --e->running;
    if (e->running == 0) idle_cv_.notify_all();
    auto now = SchedulerNow();
    switch (out.next) {
      case Next::kMore:
        lane->dirty = true;
        break;
      case Next::kRetry:
        lane->dirty = true;
        lane->not_before = now + Millis(out.delay_ms);
        break;
      case Next::kIdle:
      case Next::kParked:
        break;
    }
    lane->scheduled = false;
    if (out.next == Next::kMore) {
      PushIfDueLocked(e, lane, now);
    } else {
      scheduler_cv_.notify_all();
    }
  }
}

}  // namespace agentstream::consumers
