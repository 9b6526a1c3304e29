#include "server/hub.h"

#include <span>
#include <utility>
#include <vector>

#include "core/event_codec.h"

namespace agentstream::server {

namespace {

// How many of `records`, from the first, one batch takes: at most `limits`, at least one.
std::size_t FitCount(std::span<const EventRecord> records, const BatchLimits& limits) {
  std::size_t count = 0;
  std::size_t payload_bytes = 0;
  for (const EventRecord& record : records) {
    payload_bytes += record.payload.size();
    if (count > 0 && (count >= limits.max_events || payload_bytes > limits.max_bytes)) break;
    ++count;
  }
  return count;
}

// Encodes `records` (consecutive, of one epoch) as one batch.
std::shared_ptr<const EventBatch> EncodeBatch(const SessionId& session, Epoch epoch,
                                              std::span<const EventRecord> records) {
  auto batch = std::make_shared<EventBatch>();
  batch->session = session;
  batch->epoch = epoch;
  batch->count = records.size();
  std::string json = "[";
  for (const EventRecord& record : records) {
    if (json.size() > 1) json += ',';
    json += EncodeEnvelope(record);
  }
  json += ']';
  if (!records.empty()) {
    batch->first = records.front().seq;
    batch->last = records.back().seq;
  }
  batch->json = std::make_shared<const std::string>(std::move(json));
  return batch;
}

}  // namespace

Result<std::shared_ptr<const EventBatch>> ReadBatch(EventLog& log, const SessionId& session,
                                                    Epoch epoch, Seq from,
                                                    const BatchLimits& limits, bool* has_newer) {
  ReadRequest request;
  request.session = session;
  request.epoch = epoch;
  request.direction = ReadDirection::kForward;
  request.from = from;
  request.max_items = limits.max_events;
  request.max_bytes = limits.max_bytes;
  AS_ASSIGN_OR_RETURN(ReadResult read, log.Read(request));
  if (has_newer != nullptr) *has_newer = read.has_newer;
  return EncodeBatch(session, epoch, read.events);  // the read applied the limits
}

Hub::Token& Hub::Token::operator=(Token&& o) noexcept {
  if (this != &o) {
    Reset();
    hub_ = std::exchange(o.hub_, nullptr);
    session_ = std::move(o.session_);
    id_ = o.id_;
  }
  return *this;
}

void Hub::Token::Reset() {
  if (hub_ != nullptr) hub_->Remove(session_, id_);
  hub_ = nullptr;
}

Hub::Hub(EventLog& log, Poster post, BatchLimits limits)
    : log_(log), post_(std::move(post)), limits_(limits) {
  commits_ = log_.SubscribeCommits([this](const CommitNotice& notice) {
    // On the log's thread: hand the notice over and return at once.
    post_([this, notice] { OnCommit(notice); });
  });
}

Hub::~Hub() { Stop(); }

void Hub::Stop() { commits_.Reset(); }

Hub::Token Hub::Subscribe(const SessionId& session, BatchCallback on_batch) {
  std::lock_guard lock(mu_);
  auto [it, created] = sessions_.try_emplace(session);
  if (created) {
    // Broadcast from the current tail on; anything earlier is the subscriber's own catch-up.
    auto tail = log_.Tail(session);
    it->second.epoch = tail.ok() ? tail->epoch : Epoch(1);
    it->second.next = tail.ok() ? tail->seq.next() : Seq(1);
  }
  const std::uint64_t id = next_id_++;
  it->second.subscribers.emplace(id, std::make_shared<BatchCallback>(std::move(on_batch)));
  ++stats_.subscribers;
  return Token(this, session, id);
}

void Hub::Remove(const SessionId& session, std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  if (it->second.subscribers.erase(id) > 0) --stats_.subscribers;
  if (it->second.subscribers.empty()) sessions_.erase(it);
}

HubStats Hub::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Hub::OnCommit(const CommitNotice& notice) {
  Epoch epoch;
  Seq next;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(notice.session);
    if (it == sessions_.end()) return;  // nobody listens: read nothing
    epoch = it->second.epoch;
    next = it->second.next;
  }
  std::vector<std::shared_ptr<const EventBatch>> batches;
  if (notice.epoch != epoch) {
    // History was replaced (rewind): tell subscribers, who re-read what they need.
    auto marker = std::make_shared<EventBatch>();
    marker->session = notice.session;
    marker->epoch = notice.epoch;
    marker->json = std::make_shared<const std::string>("[]");
    batches.push_back(std::move(marker));
    epoch = notice.epoch;
    next = notice.tail.next();
  }
  // The commit's own records when it carries them and they reach back to `next` (a commit of this
  // process's appends); else the log is read.
  std::span<const EventRecord> committed;
  if (notice.records && !notice.records->empty() && notice.records->front().epoch == epoch &&
      notice.records->front().seq <= next && next <= notice.tail &&
      notice.tail == notice.records->back().seq) {
    committed = *notice.records;
    committed = committed.subspan(next.value() - committed.front().seq.value());
  }
  while (next <= notice.tail) {
    std::shared_ptr<const EventBatch> batch;
    if (!committed.empty()) {
      const std::size_t count = FitCount(committed, limits_);
      batch = EncodeBatch(notice.session, epoch, committed.first(count));
      committed = committed.subspan(count);
    } else {
      auto read = ReadBatch(log_, notice.session, epoch, next, limits_, nullptr);
      if (!read.ok()) break;  // subscribers repair from the log
      batch = std::move(*read);
    }
    if (batch->count == 0) break;
    next = batch->last.next();
    batches.push_back(std::move(batch));
  }
  std::vector<std::shared_ptr<BatchCallback>> targets;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(notice.session);
    if (it == sessions_.end()) return;
    if (it->second.epoch != epoch || it->second.next < next) {
      it->second.epoch = epoch;
      it->second.next = next;
    }
    for (const auto& [id, cb] : it->second.subscribers) targets.push_back(cb);
    stats_.batches += batches.size();
    stats_.deliveries += batches.size() * targets.size();
  }
  for (const auto& batch : batches)
    for (const auto& cb : targets) (*cb)(batch);
}

}  // namespace agentstream::server
