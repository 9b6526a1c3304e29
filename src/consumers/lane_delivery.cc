#include <algorithm>
#include <boost/json.hpp>
#include <limits>
#include <utility>

#include "consumers/consumer_service_impl.h"
#include "log/log.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

// The delivery of `plan`'s range of (consumer, session), carrying `contents` (its state aside).
Delivery DeliveryOf(const ConsumerId& consumer, const SessionId& session, const InflightPlan& plan,
                    Contents contents) {
  Delivery d;
  d.consumer = consumer;
  d.session = session;
  d.epoch = plan.epoch;
  d.seq_start = plan.seq_start;
  d.seq_end = plan.seq_end;
  d.ordinal = plan.ordinal;
  d.coalesced = contents.coalesced;
  d.events = std::move(contents.events);
  d.first_seqs = std::move(contents.first_seqs);
  d.idempotency_key = IdempotencyKey(consumer, session, d.epoch, d.seq_end);
  return d;
}

}  // namespace

ConsumerService::Impl::StepOutcome ConsumerService::Impl::Step(Entry& e, Lane& lane) {
  // 1. The lease: renewed while there is work, left to expire when idle.
  if (auto ended = KeepLease(e, lane)) return *ended;
  if (auto ended = ResumeIfAsked(e, lane)) return *ended;
  if (lane.record.parked) return {Next::kParked, 0};

  // 2. The plan: the journaled one, else the next events.
  Delivery d;
  auto ended = lane.record.inflight ? ReplayJournaled(e, lane, d) : JournalNext(e, lane, d);
  if (ended) return *ended;
  d.state = lane.record.sink_state;

  // 3. Send, then commit the position with the sink's new state in one transaction.
  return SendAndCommit(e, lane, d);
}

std::optional<ConsumerService::Impl::StepOutcome> ConsumerService::Impl::ResumeIfAsked(Entry& e,
                                                                                       Lane& lane) {
  bool resume = false;
  {
    std::lock_guard lock(mu_);
    std::swap(resume, lane.resume);
  }
  if (!resume || !lane.record.parked) return std::nullopt;
  lane.record.parked = false;
  lane.record.error.clear();
  lane.attempts = 0;
  Status s = Commit(e, lane, lane.position);
  if (!s.ok()) {
    lane.record.parked = true;
    return StepOutcome{Next::kRetry, 1000};
  }
  log::Info("consumer.resumed", {{"consumer", e.spec.id.str()}, {"session", lane.session.str()}});
  std::lock_guard lock(mu_);
  lane.progress.parked = false;
  lane.progress.attempts = 0;
  lane.progress.last_error.clear();
  return std::nullopt;
}

std::optional<ConsumerService::Impl::StepOutcome> ConsumerService::Impl::JournalNext(Entry& e,
                                                                                     Lane& lane,
                                                                                     Delivery& d) {
  auto planned = Plan(e, lane, lane.position);
  if (!planned.ok()) return Fail(e, lane, planned.status().ToString());
  if (!planned->plan) {
    if (planned->position != lane.position && !Commit(e, lane, planned->position).ok())
      return StepOutcome{Next::kRetry, 1000};
    return StepOutcome{planned->caught_up ? Next::kIdle : Next::kMore, 0};
  }
  // Journal before sending, so a crash from here on resends exactly this delivery.
  lane.record.inflight = std::move(planned->plan);
  Status journaled = Commit(e, lane, planned->position);
  if (!journaled.ok()) {
    lane.record.inflight.reset();
    if (journaled.code() == ErrorCode::kFenced) return StepOutcome{Next::kRetry, LeaseTtl(e) / 2};
    return Fail(e, lane, journaled.ToString());
  }
  d = std::move(planned->delivery);
  return std::nullopt;
}

std::optional<ConsumerService::Impl::StepOutcome> ConsumerService::Impl::ReplayJournaled(
    Entry& e, Lane& lane, Delivery& d) {
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
  d = DeliveryOf(e.spec.id, lane.session, plan, std::move(contents));
  std::lock_guard lock(mu_);
  if (!read->empty()) lane.pending_since_ms = read->front().time;
  return std::nullopt;
}

ConsumerService::Impl::StepOutcome ConsumerService::Impl::SendAndCommit(Entry& e, Lane& lane,
                                                                        const Delivery& d) {
  auto ack = e.sink->Send(d, lane.record.inflight->prepared);
  if (!ack.ok()) return Fail(e, lane, ack.status().ToString());
  if (ack->not_delivered)
    return Fail(e, lane, ack->not_delivered->error, ack->not_delivered->retry_after_ms);
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
    if (committed.code() == ErrorCode::kFenced) return {Next::kRetry, LeaseTtl(e) / 2};
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
  out.delivery = DeliveryOf(e.spec.id, lane.session, plan, std::move(contents));
  AS_ASSIGN_OR_RETURN(plan.prepared, e.sink->Prepare(out.delivery));
  out.plan = std::move(plan);
  return out;
}

ConsumerService::Impl::StepOutcome ConsumerService::Impl::Fail(Entry& e, Lane& lane,
                                                               const std::string& error,
                                                               std::int64_t retry_after_ms) {
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
  // A receiver's Retry-After is honoured: the next attempt waits for the later of the two.
  const std::int64_t delay =
      parked ? 0 : std::max(Backoff(e.spec.retry, lane.attempts), retry_after_ms);
  // One critical section, so a reader never sees the lane parked with its last failure uncounted.
  std::lock_guard lock(mu_);
  ++e.failures;
  lane.progress.last_error = error;
  lane.progress.attempts = lane.attempts;
  lane.progress.parked = parked;
  if (parked) return {Next::kParked, 0};
  return {Next::kRetry, delay};
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

}  // namespace agentstream::consumers
