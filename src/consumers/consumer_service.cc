#include "consumers/consumer_service.h"

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "consumers/lane.h"
#include "consumers/sink.h"
#include "consumers/sinks.h"
#include "log/log.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// A parent-session sink never reads its own parent: its appends would feed it forever.
bool Selects(const ConsumerSpec& spec, const SessionId& session, const std::string& provider) {
  if (spec.sink.kind == SinkKind::kParentSession && session == spec.sink.parent) return false;
  return FilterMatchesSession(spec.filter, session, provider);
}

// What one step of a lane asks of the scheduler.
enum class Next { kMore, kIdle, kRetry, kParked };
struct StepOutcome {
  Next next = Next::kIdle;
  std::int64_t delay_ms = 0;  // kRetry
};

// One (consumer, session). The fields under "worker" belong to the worker running the lane (at
// most one at a time: `scheduled`); the rest are guarded by Impl::mu_.
struct Lane {
  explicit Lane(SessionId s) : session(std::move(s)) {}
  const SessionId session;
  // Guarded by mu_.
  bool scheduled = false;
  bool dirty = true;
  SteadyClock::time_point not_before{};
  bool resume = false;
  SessionProgress progress;
  TimestampMs pending_since_ms = 0;  // commit time of the oldest unacknowledged event
  // Worker.
  std::uint64_t generation = 0;
  TimestampMs lease_expires_ms = 0;
  Cursor position;
  LaneRecord record;
  int attempts = 0;
};

struct Entry {
  ConsumerSpec spec;
  std::shared_ptr<Sink> sink;
  std::map<SessionId, std::shared_ptr<Lane>> lanes;
  bool deleted = false;
  int running = 0;  // lanes being stepped
  std::uint64_t deliveries = 0, events_delivered = 0, failures = 0;
};

}  // namespace

class ConsumerService::Impl {
 public:
  Impl(EventLog& log, ConsumerServiceOptions options, ParentAppender parent)
      : log_(log), options_(std::move(options)), parent_(std::move(parent)) {
    if (options_.workers < 1) options_.workers = 1;
  }

  ~Impl() { Stop(); }

  Status Start();
  void Stop();
  Result<ConsumerState> Create(ConsumerSpec spec);
  Result<std::vector<ConsumerState>> List();
  Result<ConsumerState> Get(const ConsumerId& id);
  Status Delete(const ConsumerId& id);
  Status Resume(const ConsumerId& id, const std::optional<SessionId>& session);

 private:
  Result<std::shared_ptr<Sink>> MakeSinkFor(const ConsumerSpec& spec);
  Status AddLocked(ConsumerSpec spec);
  ConsumerState StateLocked(const Entry& e) const;
  Status PositionAtTails(const ConsumerSpec& spec);
  void SchedulerLoop();
  void WorkerLoop();
  void Discover();
  void TrackLocked(Entry& e, const SessionInfo& info);
  void PushIfDueLocked(const std::shared_ptr<Entry>& e, const std::shared_ptr<Lane>& lane,
                       SteadyClock::time_point now);
  StepOutcome Step(Entry& e, Lane& lane);
  // The lane's next delivery after `from`, without journaling it.
  struct Planned {
    Cursor position;  // `from` in the session's current epoch (or past a range with nothing to
                      // deliver)
    std::optional<InflightPlan> plan;
    Delivery delivery;
    bool caught_up = false;
  };
  Result<Planned> Plan(Entry& e, Lane& lane, Cursor from);
  StepOutcome Fail(Entry& e, Lane& lane, const std::string& error);
  Status Commit(Entry& e, Lane& lane, Cursor position);
  std::int64_t Backoff(const RetryPolicy& retry, int attempts);
  std::int64_t LeaseTtl(const Entry& e) const {
    // A lease must outlive one send: it is renewed between sends, not during one.
    return std::max(options_.lease_ttl_ms, 2 * e.spec.sink.timeout_ms);
  }
  TimestampMs Now() const { return system::Now(options_.clock); }

  EventLog& log_;
  ConsumerServiceOptions options_;
  ParentAppender parent_;

  std::mutex mu_;  // guards everything below
  std::condition_variable scheduler_cv_, worker_cv_, idle_cv_;
  std::map<ConsumerId, std::shared_ptr<Entry>> consumers_;
  std::map<SessionId, std::string> providers_;  // known sessions and their provider
  std::map<SessionId, Cursor> noticed_;  // sessions with commits not yet looked at, and tails
  bool resume_pending_ = false;
  bool rescan_ = true;
  // Lanes ready to step; each lane at most once (Lane::scheduled), so the queue is bounded by
  // the number of lanes.
  std::deque<std::pair<std::shared_ptr<Entry>, std::shared_ptr<Lane>>> ready_;
  bool started_ = false, stopping_ = false;
  std::thread scheduler_;
  std::vector<std::thread> workers_;
  Subscription subscription_;
  std::mt19937_64 rng_{std::random_device{}()};
};

Result<std::shared_ptr<Sink>> ConsumerService::Impl::MakeSinkFor(const ConsumerSpec& spec) {
  if (options_.sink_factory) {
    AS_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, options_.sink_factory(spec));
    return std::shared_ptr<Sink>(std::move(sink));
  }
  AS_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, MakeSink(spec, parent_));
  return std::shared_ptr<Sink>(std::move(sink));
}

Status ConsumerService::Impl::AddLocked(ConsumerSpec spec) {
  AS_ASSIGN_OR_RETURN(std::shared_ptr<Sink> sink, MakeSinkFor(spec));
  auto entry = std::make_shared<Entry>();
  entry->spec = std::move(spec);
  entry->sink = std::move(sink);
  for (const auto& [id, provider] : providers_) {
    if (entry->lanes.size() >= options_.max_sessions_per_consumer) break;
    if (Selects(entry->spec, id, provider)) entry->lanes.emplace(id, std::make_shared<Lane>(id));
  }
  consumers_[entry->spec.id] = entry;
  rescan_ = true;
  scheduler_cv_.notify_all();
  return Status::Ok();
}

Status ConsumerService::Impl::Start() {
  AS_ASSIGN_OR_RETURN(std::vector<StoredConsumer> stored, log_.consumers().ListConsumers());
  std::lock_guard lock(mu_);
  if (started_) return Status::Ok();
  for (auto& s : stored) {
    boost::system::error_code ec;
    json::value v = json::parse(s.definition, ec);
    if (ec) return Error(ErrorCode::kCorruption, "stored consumer " + s.id.str() + " is not JSON");
    AS_ASSIGN_OR_RETURN(ConsumerSpec spec, ConsumerSpecFromJson(v));
    AS_RETURN_IF_ERROR(AddLocked(std::move(spec)));
  }
  subscription_ = log_.SubscribeCommits([this](const CommitNotice& notice) {
    std::lock_guard lock(mu_);
    // Bounded by the number of sessions; past the per-consumer bound a full rescan replaces it.
    if (noticed_.size() < options_.max_sessions_per_consumer) {
      noticed_[notice.session] = Cursor{notice.epoch, notice.tail};
    } else {
      rescan_ = true;
    }
    scheduler_cv_.notify_all();
  });
  started_ = true;
  scheduler_ = std::thread([this] { SchedulerLoop(); });
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  return Status::Ok();
}

void ConsumerService::Impl::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
  }
  subscription_.Reset();
  scheduler_cv_.notify_all();
  worker_cv_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  for (auto& w : workers_) w.join();
  workers_.clear();
  // The workers are gone: the worker fields of every lane are ours to read.
  std::lock_guard lock(mu_);
  for (auto& [id, e] : consumers_) {
    for (auto& [session, lane] : e->lanes) {
      if (lane->generation != 0) (void)log_.consumers().ReleaseLease(id, session, lane->generation);
      lane->generation = 0;
    }
  }
  ready_.clear();
  started_ = false;
  stopping_ = false;
}

Status ConsumerService::Impl::PositionAtTails(const ConsumerSpec& spec) {
  std::string after;
  std::size_t positioned = 0;
  while (positioned < options_.max_sessions_per_consumer) {
    AS_ASSIGN_OR_RETURN(std::vector<SessionInfo> page, log_.ListSessions(after, 1000));
    if (page.empty()) break;
    for (const auto& info : page) {
      if (!Selects(spec, info.id, info.meta.provider)) continue;
      AS_ASSIGN_OR_RETURN(ConsumerPosition lease,
                          log_.consumers().AcquireLease(spec.id, info.id, options_.owner, Now(),
                                                        options_.lease_ttl_ms));
      AS_RETURN_IF_ERROR(log_.consumers().CommitConsumerPosition(
          spec.id, info.id, lease.generation, Cursor{info.epoch, info.tail}, std::nullopt, Now()));
      (void)log_.consumers().ReleaseLease(spec.id, info.id, lease.generation);
      ++positioned;
    }
    after = page.back().id.str();
  }
  return Status::Ok();
}

Result<ConsumerState> ConsumerService::Impl::Create(ConsumerSpec spec) {
  {
    std::lock_guard lock(mu_);
    auto it = consumers_.find(spec.id);
    if (it != consumers_.end()) {
      if (it->second->spec == spec) return StateLocked(*it->second);
      return Error(ErrorCode::kAlreadyExists,
                   "consumer " + spec.id.str() + " exists with a different definition");
    }
    if (consumers_.size() >= options_.max_consumers)
      return Error(ErrorCode::kResourceExhausted,
                   "at most " + std::to_string(options_.max_consumers) + " consumers");
  }
  // Validates the sink before anything is stored.
  AS_RETURN_IF_ERROR(MakeSinkFor(spec).status());
  // Positions first: a crash before the definition is saved leaves only unused positions.
  if (spec.from_now) AS_RETURN_IF_ERROR(PositionAtTails(spec));
  AS_RETURN_IF_ERROR(
      log_.consumers().SaveConsumer(spec.id, json::serialize(ConsumerSpecToJson(spec, false))));
  const ConsumerId id = spec.id;
  std::lock_guard lock(mu_);
  if (consumers_.count(id) == 0) AS_RETURN_IF_ERROR(AddLocked(std::move(spec)));
  return StateLocked(*consumers_.at(id));
}

Result<std::vector<ConsumerState>> ConsumerService::Impl::List() {
  std::lock_guard lock(mu_);
  std::vector<ConsumerState> out;
  for (const auto& [id, e] : consumers_) out.push_back(StateLocked(*e));
  return out;
}

Result<ConsumerState> ConsumerService::Impl::Get(const ConsumerId& id) {
  std::lock_guard lock(mu_);
  auto it = consumers_.find(id);
  if (it == consumers_.end()) return Error(ErrorCode::kNotFound, "no consumer " + id.str());
  return StateLocked(*it->second);
}

ConsumerState ConsumerService::Impl::StateLocked(const Entry& e) const {
  ConsumerState state;
  state.spec = e.spec;
  state.deliveries = e.deliveries;
  state.events_delivered = e.events_delivered;
  state.failures = e.failures;
  const TimestampMs now = Now();
  for (const auto& [id, lane] : e.lanes) {
    SessionProgress p = lane->progress;
    p.session = id;
    if (p.tail.epoch == p.position.epoch) {
      p.lag_events = p.tail.seq > p.position.seq ? p.tail.seq.value() - p.position.seq.value() : 0;
    } else {
      p.lag_events = p.tail.seq.value();  // until the lane resolves the new epoch
    }
    p.lag_seconds =
        lane->pending_since_ms > 0 && p.lag_events > 0
            ? static_cast<double>(std::max<TimestampMs>(now - lane->pending_since_ms, 0)) / 1000.0
            : 0.0;
    state.sessions.push_back(std::move(p));
  }
  return state;
}

Status ConsumerService::Impl::Delete(const ConsumerId& id) {
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock lock(mu_);
    auto it = consumers_.find(id);
    if (it == consumers_.end()) return Error(ErrorCode::kNotFound, "no consumer " + id.str());
    entry = it->second;
    entry->deleted = true;
    consumers_.erase(it);
    // A lane being stepped finishes its step (bounded by the sink's timeout) first.
    idle_cv_.wait(lock, [&] { return entry->running == 0; });
  }
  return log_.consumers().DeleteConsumer(id);
}

Status ConsumerService::Impl::Resume(const ConsumerId& id,
                                     const std::optional<SessionId>& session) {
  std::lock_guard lock(mu_);
  auto it = consumers_.find(id);
  if (it == consumers_.end()) return Error(ErrorCode::kNotFound, "no consumer " + id.str());
  bool found = false;
  for (auto& [sid, lane] : it->second->lanes) {
    if (session && sid != *session) continue;
    found = true;
    if (!lane->progress.parked) continue;
    lane->resume = true;
    lane->dirty = true;
    lane->not_before = {};
    resume_pending_ = true;
  }
  if (session && !found)
    return Error(ErrorCode::kNotFound,
                 "consumer " + id.str() + " has no session " + session->str());
  scheduler_cv_.notify_all();
  return Status::Ok();
}

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
  auto next_rescan = SteadyClock::now();
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
      if (SteadyClock::now() >= next_rescan) {
        rescan_ = true;
        next_rescan = SteadyClock::now() + Millis(options_.rescan_ms);
      }
      resume_pending_ = false;
    }
    Discover();
    std::unique_lock lock(mu_);
    if (stopping_) return;
    auto now = SteadyClock::now();
    auto wake = std::min(next_rescan, now + Millis(options_.idle_poll_ms));
    for (auto& [id, e] : consumers_) {
      for (auto& [sid, lane] : e->lanes) {
        PushIfDueLocked(e, lane, now);
        if (!lane->scheduled && lane->dirty && lane->not_before > now)
          wake = std::min(wake, lane->not_before);
      }
    }
    scheduler_cv_.wait_until(
        lock, wake, [&] { return stopping_ || !noticed_.empty() || rescan_ || resume_pending_; });
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
    auto now = SteadyClock::now();
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

std::int64_t ConsumerService::Impl::Backoff(const RetryPolicy& retry, int attempts) {
  std::int64_t delay = retry.initial_backoff_ms;
  for (int i = 1; i < attempts && delay < retry.max_backoff_ms; ++i) delay *= 2;
  delay = std::min(delay, retry.max_backoff_ms);
  // Equal jitter: half fixed, half random, so retries of many sessions spread out.
  std::lock_guard lock(mu_);
  std::uniform_int_distribution<std::int64_t> jitter(0, delay / 2);
  return delay - delay / 2 + jitter(rng_);
}

Status ConsumerService::Impl::Commit(Entry& e, Lane& lane, Cursor position) {
  Status s = log_.consumers().CommitConsumerPosition(
      e.spec.id, lane.session, lane.generation, position, EncodeLaneRecord(lane.record), Now());
  if (s.ok()) {
    lane.position = position;
    std::lock_guard lock(mu_);
    lane.progress.position = position;
    lane.progress.parked = lane.record.parked;
  } else if (s.code() == ErrorCode::kFenced) {
    // Another holder took over: stop delivering this session until a new lease is granted.
    log::Info("consumer.fenced", {{"consumer", e.spec.id.str()},
                                  {"session", lane.session.str()},
                                  {"generation", lane.generation}});
    lane.generation = 0;
    std::lock_guard lock(mu_);
    lane.progress.last_error = s.ToString();
    lane.progress.generation = 0;
    lane.progress.lease_owner.clear();
  }
  return s;
}

StepOutcome ConsumerService::Impl::Fail(Entry& e, Lane& lane, const std::string& error) {
  ++lane.attempts;
  bool parked = false;
  if (lane.attempts >= e.spec.retry.max_attempts && lane.generation != 0) {
    // Parks on this delivery: it stays journaled and is resent as is after Resume().
    lane.record.parked = true;
    lane.record.error = error;
    parked = Commit(e, lane, lane.position).ok();
    if (!parked) lane.record.parked = false;
  }
  if (parked) {
    log::Warn("consumer.parked", {{"consumer", e.spec.id.str()},
                                  {"session", lane.session.str()},
                                  {"attempts", lane.attempts},
                                  {"error", error}});
  }
  const std::int64_t delay = parked ? 0 : Backoff(e.spec.retry, lane.attempts);
  std::lock_guard lock(mu_);
  ++e.failures;
  lane.progress.last_error = error;
  lane.progress.attempts = lane.attempts;
  lane.progress.parked = parked;
  if (parked) return {Next::kParked, 0};
  return {Next::kRetry, delay};
}

StepOutcome ConsumerService::Impl::Step(Entry& e, Lane& lane) {
  const ConsumerId& id = e.spec.id;
  const std::int64_t ttl = LeaseTtl(e);
  // 1. The lease: renewed while there is work, left to expire when idle.
  TimestampMs now = Now();
  if (lane.generation == 0 || lane.lease_expires_ms - now < ttl / 2) {
    auto lease = log_.consumers().AcquireLease(id, lane.session, options_.owner, now, ttl);
    if (!lease.ok()) {
      lane.generation = 0;
      std::lock_guard lock(mu_);
      lane.progress.generation = 0;
      lane.progress.lease_owner.clear();
      // Held by another owner: look again when its lease could have lapsed.
      if (lease.status().code() == ErrorCode::kConflict) return {Next::kRetry, ttl / 2};
      lane.progress.last_error = lease.status().ToString();
      return {Next::kRetry, 1000};
    }
    if (lease->generation != lane.generation) {
      // A new grant: the stored position and record are the truth (another holder may have
      // moved them since this service last held the lease).
      auto record = DecodeLaneRecord(lease->adapter_state);
      if (!record.ok()) return Fail(e, lane, record.status().ToString());
      lane.record = std::move(*record);
      lane.position = lease->position;
      lane.attempts = 0;
    }
    lane.generation = lease->generation;
    // On this daemon's clock, from before the grant: the store's clock may differ (PostgreSQL
    // judges by its own), and this reckoning never believes in a lease longer than it lasts.
    lane.lease_expires_ms = now + ttl;
    std::lock_guard lock(mu_);
    lane.progress.generation = lane.generation;
    lane.progress.lease_owner = options_.owner;
    lane.progress.position = lane.position;
    lane.progress.parked = lane.record.parked;
    if (!lane.record.error.empty()) lane.progress.last_error = lane.record.error;
  }
  bool resume = false;
  {
    std::lock_guard lock(mu_);
    std::swap(resume, lane.resume);
  }
  if (resume && lane.record.parked) {
    lane.record.parked = false;
    lane.record.error.clear();
    lane.attempts = 0;
    Status s = Commit(e, lane, lane.position);
    if (!s.ok()) {
      lane.record.parked = true;
      return {Next::kRetry, 1000};
    }
    log::Info("consumer.resumed", {{"consumer", e.spec.id.str()}, {"session", lane.session.str()}});
    std::lock_guard lock(mu_);
    lane.progress.attempts = 0;
    lane.progress.last_error.clear();
  }
  if (lane.record.parked) return {Next::kParked, 0};

  // 2. The plan: the journaled one, else the next events.
  Delivery d;
  if (!lane.record.inflight) {
    auto planned = Plan(e, lane, lane.position);
    if (!planned.ok()) return Fail(e, lane, planned.status().ToString());
    if (!planned->plan) {
      if (planned->position != lane.position && !Commit(e, lane, planned->position).ok())
        return {Next::kRetry, 1000};
      return {planned->caught_up ? Next::kIdle : Next::kMore, 0};
    }
    // Journal before sending, so a crash from here on resends exactly this delivery.
    lane.record.inflight = std::move(planned->plan);
    Status journaled = Commit(e, lane, planned->position);
    if (!journaled.ok()) {
      lane.record.inflight.reset();
      if (journaled.code() == ErrorCode::kFenced) return {Next::kRetry, ttl / 2};
      return Fail(e, lane, journaled.ToString());
    }
    d = std::move(planned->delivery);
  } else {
    d.consumer = id;
    d.session = lane.session;
    const InflightPlan& plan = *lane.record.inflight;
    auto read = ReadRange(log_, lane.session, plan.epoch, plan.seq_start, plan.seq_end,
                          plan.seq_end.value() - plan.seq_start.value() + 1,
                          std::numeric_limits<std::size_t>::max());
    if (!read.ok()) return Fail(e, lane, read.status().ToString());
    if (read->empty() || read->back().seq != plan.seq_end)
      return Fail(e, lane, "the journaled range is no longer readable");
    Contents contents = BuildContents(*read, e.spec.filter, plan.coalesced,
                                      DeliveryBounds{std::numeric_limits<std::size_t>::max(),
                                                     std::numeric_limits<std::size_t>::max()});
    d.epoch = plan.epoch;
    d.seq_start = plan.seq_start;
    d.seq_end = plan.seq_end;
    d.ordinal = plan.ordinal;
    d.coalesced = contents.coalesced;
    d.events = std::move(contents.events);
    d.first_seqs = std::move(contents.first_seqs);
    d.idempotency_key = IdempotencyKey(id, lane.session, d.epoch, d.seq_end);
    std::lock_guard lock(mu_);
    if (!read->empty()) lane.pending_since_ms = read->front().time;
  }
  d.state = lane.record.sink_state;

  // 3. Send, then commit the position with the sink's new state in one transaction.
  auto ack = e.sink->Send(d, lane.record.inflight->prepared);
  if (!ack.ok()) return Fail(e, lane, ack.status().ToString());
  LaneRecord before = lane.record;
  if (ack->state) {
    if (json::serialize(*ack->state).size() > options_.max_state_bytes)
      return Fail(
          e, lane,
          "the sink's state is larger than " + std::to_string(options_.max_state_bytes) + " bytes");
    lane.record.sink_state = std::move(*ack->state);
  }
  lane.record.inflight.reset();
  lane.record.ordinal_epoch = d.epoch.value();
  lane.record.next_ordinal = d.ordinal + 1;
  // One transaction acknowledges this delivery and journals the next one (a failure to plan it
  // leaves that to the next step).
  Cursor commit_at{d.epoch, d.seq_end};
  bool more = true;
  auto next = Plan(e, lane, commit_at);
  if (next.ok()) {
    commit_at = next->position;
    lane.record.inflight = std::move(next->plan);
    more = !next->caught_up;
  }
  Status committed = Commit(e, lane, commit_at);
  if (!committed.ok()) {
    lane.record = std::move(before);
    if (committed.code() == ErrorCode::kFenced) return {Next::kRetry, ttl / 2};
    return Fail(e, lane, committed.ToString());
  }
  lane.attempts = 0;
  std::lock_guard lock(mu_);
  ++e.deliveries;
  e.events_delivered += d.seq_end.value() - d.seq_start.value() + 1;
  lane.progress.attempts = 0;
  lane.progress.last_error.clear();
  return {more ? Next::kMore : Next::kIdle, 0};
}

Result<ConsumerService::Impl::Planned> ConsumerService::Impl::Plan(Entry& e, Lane& lane,
                                                                   Cursor from) {
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(lane.session));
  {
    std::lock_guard lock(mu_);
    lane.progress.tail = Cursor{info.epoch, info.tail};
  }
  Planned out;
  AS_ASSIGN_OR_RETURN(out.position,
                      ResolvePosition(log_, lane.session, from, info.epoch, info.tail));
  std::vector<EventRecord> records;
  if (out.position.seq < info.tail) {
    AS_ASSIGN_OR_RETURN(
        records, ReadRange(log_, lane.session, info.epoch, out.position.seq.next(), info.tail,
                           options_.max_scan_events, options_.max_delivery_bytes));
  }
  {
    std::lock_guard lock(mu_);
    lane.pending_since_ms = records.empty() ? 0 : records.front().time;
  }
  if (records.empty()) {
    out.caught_up = true;
    return out;
  }
  Contents contents =
      BuildContents(records, e.spec.filter, e.spec.coalesce,
                    DeliveryBounds{options_.max_delivery_events, options_.max_delivery_bytes});
  const Seq seq_end = records[contents.consumed - 1].seq;
  if (contents.events.empty()) {
    // Nothing this consumer selects: move past the range without a delivery.
    out.position = Cursor{info.epoch, seq_end};
    return out;
  }
  InflightPlan plan;
  plan.ordinal = lane.record.ordinal_epoch == info.epoch.value() ? lane.record.next_ordinal : 0;
  plan.epoch = info.epoch;
  plan.seq_start = out.position.seq.next();
  plan.seq_end = seq_end;
  plan.coalesced = e.spec.coalesce;
  Delivery& d = out.delivery;
  d.consumer = e.spec.id;
  d.session = lane.session;
  d.epoch = plan.epoch;
  d.seq_start = plan.seq_start;
  d.seq_end = plan.seq_end;
  d.ordinal = plan.ordinal;
  d.coalesced = contents.coalesced;
  d.events = std::move(contents.events);
  d.first_seqs = std::move(contents.first_seqs);
  d.idempotency_key = IdempotencyKey(d.consumer, d.session, d.epoch, d.seq_end);
  AS_ASSIGN_OR_RETURN(plan.prepared, e.sink->Prepare(d));
  out.plan = std::move(plan);
  return out;
}

// ---- ConsumerService ----

ConsumerService::ConsumerService(EventLog& log, ConsumerServiceOptions options,
                                 ParentAppender parent)
    : impl_(std::make_unique<Impl>(log, std::move(options), std::move(parent))) {}
ConsumerService::~ConsumerService() = default;
Status ConsumerService::Start() { return impl_->Start(); }
void ConsumerService::Stop() { impl_->Stop(); }
Result<ConsumerState> ConsumerService::Create(ConsumerSpec spec) {
  return impl_->Create(std::move(spec));
}
Result<std::vector<ConsumerState>> ConsumerService::List() { return impl_->List(); }
Result<ConsumerState> ConsumerService::Get(const ConsumerId& id) { return impl_->Get(id); }
Status ConsumerService::Delete(const ConsumerId& id) { return impl_->Delete(id); }
Status ConsumerService::Resume(const ConsumerId& id, const std::optional<SessionId>& session) {
  return impl_->Resume(id, session);
}

}  // namespace agentstream::consumers
