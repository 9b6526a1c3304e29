#include "consumers/consumer_service.h"

#include <boost/json.hpp>
#include <utility>

#include "consumers/consumer_service_impl.h"
#include "consumers/sinks.h"

namespace agentstream::consumers {

namespace {
namespace json = boost::json;
}  // namespace

bool ConsumerService::Impl::Selects(const ConsumerSpec& spec, const SessionId& session,
                                    const std::string& provider) {
  if (spec.sink.kind == SinkKind::kParentSession && session == spec.sink.parent) return false;
  return FilterMatchesSession(spec.filter, session, provider);
}

Result<std::shared_ptr<Sink>> ConsumerService::Impl::MakeSinkFor(const ConsumerSpec& spec) {
  if (options_.sink_factory) {
    AS_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, options_.sink_factory(spec));
    return std::shared_ptr<Sink>(std::move(sink));
  }
  AS_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink,
                      MakeSink(spec, parent_, options_.notify_sink_factory));
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
  std::lock_guard lock(mu_);
  ReleaseLeasesLocked();
  ready_.clear();
  started_ = false;
  stopping_ = false;
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
