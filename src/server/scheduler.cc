#include "server/scheduler.h"

#include <boost/json.hpp>

#include <utility>

#include "api/api_json.h"
#include "core/utf8.h"
#include "log/log.h"
#include "server/automation_fire.h"

namespace agentstream::server {

namespace json = boost::json;

struct Scheduler::Finished {
  std::string schedule;
  TimestampMs tick = 0;
  std::string key;
  Result<AutomationResult> result;
};

struct Scheduler::Shared {
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  bool poked = false;
  std::deque<Finished> finished;
};

Scheduler::Scheduler(ScheduleStore& store, runtime::AgentManager& agents,
                     WorkspaceRoutes* workspaces, SchedulerOptions options)
    : store_(store),
      agents_(agents),
      workspaces_(workspaces),
      options_(std::move(options)),
      shared_(std::make_shared<Shared>()) {
  thread_ = std::thread([this] { Loop(); });
}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Poke() {
  std::lock_guard lock(shared_->mu);
  shared_->poked = true;
  shared_->wake.notify_one();
}

void Scheduler::Stop() {
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->stop && !thread_.joinable()) return;
    shared_->stop = true;
    shared_->wake.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

TimestampMs Scheduler::Now() const {
  return options_.clock ? options_.clock() : system::WallClockMs();
}

void Scheduler::Loop() {
  auto next_round = std::chrono::steady_clock::now();
  while (true) {
    std::deque<Finished> finished;
    bool round = false;
    {
      std::unique_lock lock(shared_->mu);
      shared_->wake.wait_until(lock, next_round, [&] {
        return shared_->stop || shared_->poked || !shared_->finished.empty();
      });
      if (shared_->stop) break;
      finished.swap(shared_->finished);
      round = shared_->poked || std::chrono::steady_clock::now() >= next_round;
      shared_->poked = false;
    }
    for (const Finished& f : finished) Finish(f);
    // A firing that finished may leave the next tick due at once (a catch-up): a round follows.
    if (round || !finished.empty()) {
      Round();
      next_round = std::chrono::steady_clock::now() + options_.poll;
    }
  }
  for (const std::string& id : held_) (void)store_.ReleaseSchedule(id, options_.daemon_id);
}

const ScheduleDefinition* Scheduler::Definition(const ScheduleRecord& record) {
  auto cached = definitions_.find(record.id);
  if (cached != definitions_.end() && cached->second.first == record.definition)
    return &cached->second.second;
  if (auto bad = unreadable_.find(record.id);
      bad != unreadable_.end() && bad->second == record.definition)
    return nullptr;
  Result<json::value> body = api::ParseJson(record.definition);
  // The floor was checked when the schedule was made, by the daemon that made it.
  Result<ScheduleDefinition> parsed =
      body.ok() ? ParseSchedule(*body, 0, Now()) : Result<ScheduleDefinition>(body.status());
  if (!parsed.ok()) {
    log::Warn("schedule.unreadable",
              {{"schedule", record.id}, {"error", parsed.status().message()}});
    definitions_.erase(record.id);
    unreadable_[record.id] = record.definition;  // logged once
    return nullptr;
  }
  auto& slot = definitions_[record.id];
  slot = {record.definition, std::move(*parsed)};
  return &slot.second;
}

void Scheduler::Round() {
  Result<std::vector<ScheduleRecord>> listed = store_.ListSchedules();
  if (!listed.ok()) {
    if (listed.status().message() != list_error_)  // once per distinct error
      log::Warn("schedule.list_failed", {{"error", listed.status().message()}});
    list_error_ = listed.status().message();
    return;
  }
  list_error_.clear();
  std::set<std::string> present;
  for (const ScheduleRecord& record : *listed) {
    present.insert(record.id);
    if (in_flight_.contains(record.id)) continue;
    if (record.paused && record.pending_tick_ms == 0) continue;
    const ScheduleDefinition* schedule = Definition(record);
    if (schedule == nullptr) continue;
    const TimestampMs now = Now();
    if (record.pending_tick_ms == 0) {
      const std::optional<TimestampMs> next =
          NextTick(*schedule, record.created_ms, std::max(record.last_tick_ms, record.created_ms));
      if (!next || *next > now) continue;
    }
    if (!record.lease_owner.empty() && record.lease_owner != options_.daemon_id &&
        record.lease_expires_ms > now)
      continue;
    Result<ScheduleRecord> claimed =
        store_.ClaimSchedule(record.id, options_.daemon_id, now, options_.lease_ttl_ms);
    if (!claimed.ok()) continue;  // another daemon claimed it first, or it was deleted
    held_.insert(record.id);
    Start(*schedule, *claimed);
  }
  std::erase_if(definitions_, [&](const auto& d) { return !present.contains(d.first); });
  std::erase_if(unreadable_, [&](const auto& d) { return !present.contains(d.first); });
  std::erase_if(held_, [&](const std::string& id) { return !present.contains(id); });
}

void Scheduler::Start(const ScheduleDefinition& schedule, const ScheduleRecord& record) {
  TimestampMs tick = record.pending_tick_ms;
  if (tick == 0) {
    if (record.paused) return;
    TickPlan plan = PlanTicks(schedule, record, Now());
    std::vector<ScheduleFiring> skipped;
    if (plan.skipped) {
      plan.skipped->recorded_ms = Now();
      skipped.push_back(*plan.skipped);
      log::Warn("schedule.missed", {{"schedule", schedule.id},
                                    {"ticks", plan.skipped->ticks},
                                    {"first", TickKey(plan.skipped->first_tick_ms)},
                                    {"last", TickKey(plan.skipped->tick_ms)}});
    }
    if (!plan.fire && skipped.empty()) return;
    // The tick becomes pending before its firing's first step, with the skipped ones before it.
    const Status advanced = store_.AdvanceSchedule(
        schedule.id, options_.daemon_id, plan.handled_through, plan.fire.value_or(0), skipped);
    if (!advanced.ok()) {
      log::Warn("schedule.advance_failed",
                {{"schedule", schedule.id}, {"error", advanced.message()}});
      return;
    }
    if (!plan.fire) return;
    tick = *plan.fire;
  }
  const json::value fields = TickFields(schedule, tick);
  const Rendered prompt = RenderTemplate(schedule.prompt, fields);
  AutomationFiring firing;
  firing.key = "schedule:" + schedule.id + ":" + TickKey(tick);
  firing.fired =
      AutomationFired{"schedule", schedule.id, TickKey(tick), std::nullopt, prompt.missing};
  firing.prompt = prompt.text;
  if (schedule.agent) {
    firing.agent = *schedule.agent;
  } else {
    firing.create = AgentTemplateConfig(*schedule.create, fields);
    firing.worktree = schedule.create->worktree;
  }
  in_flight_.insert(schedule.id);
  std::weak_ptr<Shared> weak = shared_;
  std::string key = firing.key;
  FireAutomation(agents_, workspaces_, std::move(firing),
                 [weak, id = schedule.id, tick, key = std::move(key)](Result<AutomationResult> r) {
                   const std::shared_ptr<Shared> shared = weak.lock();
                   if (!shared) return;
                   std::lock_guard lock(shared->mu);
                   shared->finished.push_back(Finished{id, tick, key, std::move(r)});
                   shared->wake.notify_one();
                 });
}

void Scheduler::Finish(const Finished& f) {
  in_flight_.erase(f.schedule);
  ScheduleFiring firing;
  firing.schedule_id = f.schedule;
  firing.tick_ms = f.tick;
  firing.first_tick_ms = f.tick;
  firing.recorded_ms = Now();
  firing.client_message_id = f.key;
  if (f.result.ok()) {
    firing.outcome = "fired";
    firing.agent = f.result->agent.str();
    if (f.result->sent.turn) firing.turn_id = f.result->sent.turn->str();
    log::Info("schedule.fired", {{"schedule", f.schedule},
                                 {"tick", TickKey(f.tick)},
                                 {"agent", firing.agent},
                                 {"duplicate", f.result->duplicate}});
  } else {
    firing.outcome = "failed";
    firing.detail = BoundUtf8(f.result.status().message(), 1024).text;
    log::Warn("schedule.failed",
              {{"schedule", f.schedule}, {"tick", TickKey(f.tick)}, {"error", firing.detail}});
  }
  const Status advanced =
      store_.AdvanceSchedule(f.schedule, options_.daemon_id, f.tick, 0, {firing});
  if (!advanced.ok() && advanced.code() != ErrorCode::kNotFound) {
    // Still pending: fired again under its key by whoever claims the schedule next.
    log::Warn("schedule.advance_failed", {{"schedule", f.schedule}, {"error", advanced.message()}});
  }
}

}  // namespace agentstream::server
