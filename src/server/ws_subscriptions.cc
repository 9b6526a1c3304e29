// WsApp's subscriptions: subscribe / unsubscribe with grace, live batches, paced catch-up,
// epoch resets and the slow-client bound.
#include <boost/json/serialize.hpp>

#include "api/api_json.h"
#include "log/log.h"
#include "server/ws_app.h"

namespace agentstream::server {

namespace json = boost::json;

void WsApp::Subscribe(const json::object& msg, const std::string& id) {
  auto agent_or = [&]() -> Result<SessionId> {
    const json::value* v = msg.if_contains("agent");
    if (v == nullptr || !v->is_string() || v->get_string().empty())
      return Error(ErrorCode::kInvalidArgument, "agent is missing");
    return SessionId(std::string(v->get_string()));
  }();
  if (!agent_or.ok()) return SendError(id, agent_or.status());
  const SessionId agent = *agent_or;
  auto tail = log_.Tail(agent);
  if (!tail.ok()) return SendError(id, tail.status());
  Cursor after = *tail;  // no cursor: live from the tail (the client pages history itself)
  if (const json::value* c = msg.if_contains("cursor"); c != nullptr && !c->is_null()) {
    auto cursor = api::CursorMember(msg, "cursor");
    if (!cursor.ok()) return SendError(id, cursor.status());
    if (cursor->epoch == tail->epoch && cursor->seq > tail->seq)
      return SendError(
          id, Error(ErrorCode::kInvalidArgument, "cursor " + FormatCursor(*cursor) +
                                                     " is past the tail " + FormatCursor(*tail)));
    after = *cursor;
  }
  if (subs_.count(agent) == 0 && subs_.size() >= limits_.max_subscriptions)
    return SendError(id, Error(ErrorCode::kResourceExhausted, "too many subscriptions"));
  json::object reply{
      {"type", "subscribed"}, {"agent", agent.str()}, {"cursor", FormatCursor(after)}};
  SendReply(id, std::move(reply));
  Follow(agent, after);
}

void WsApp::Unsubscribe(const json::object& msg, const std::string& id) {
  const json::value* v = msg.if_contains("agent");
  if (v == nullptr || !v->is_string())
    return SendError(id, Error(ErrorCode::kInvalidArgument, "agent is missing"));
  const SessionId agent(std::string(v->get_string()));
  auto it = subs_.find(agent);
  if (it != subs_.end() && !it->second.in_grace) {
    // Kept (and delivering) for the grace period; a subscribe before it ends replaces it.
    it->second.in_grace = true;
    const std::uint64_t generation = it->second.generation;
    std::weak_ptr<WsApp> weak = weak_from_this();
    out_.After(limits_.unsubscribe_grace, [weak, agent, generation] {
      auto self = weak.lock();
      if (!self) return;
      auto sub = self->subs_.find(agent);
      if (sub != self->subs_.end() && sub->second.generation == generation && sub->second.in_grace)
        self->EraseSub(sub);
    });
  }
  if (!id.empty()) SendOk(id);
}

void WsApp::Follow(const SessionId& agent, Cursor after) {
  Sub& sub = subs_[agent];
  interest_->Follow(agent, true);
  sub.token.Reset();
  sub.generation = next_generation_++;
  sub.in_grace = false;
  sub.reader = std::make_unique<LiveReader>(log_, agent, after, limits_.batch);
  std::weak_ptr<WsApp> weak = weak_from_this();
  Poster post = post_;
  const std::uint64_t generation = sub.generation;
  // Register first, then replay: every commit after this point produces a batch, and the
  // reader reads whatever came before from the log.
  sub.token = hub_.Subscribe(
      agent, [weak, post, generation](const std::shared_ptr<const EventBatch>& batch) {
        post([weak, generation, batch] {
          if (auto self = weak.lock(); self && !self->closed_) self->OnBatch(generation, batch);
        });
      });
  Pump(agent);
}

bool WsApp::NoticeInterest::Wants(const SessionId& agent) const {
  if (all.load(std::memory_order_relaxed)) return true;
  std::lock_guard lock(mu);
  return followed.count(agent.str()) > 0;
}

void WsApp::NoticeInterest::Follow(const SessionId& agent, bool on) {
  std::lock_guard lock(mu);
  if (on)
    followed.insert(agent.str());
  else
    followed.erase(agent.str());
}

void WsApp::NoticeInterest::Clear() {
  std::lock_guard lock(mu);
  followed.clear();
}

void WsApp::EraseSub(std::map<SessionId, Sub>::iterator it) {
  interest_->Follow(it->first, false);
  subs_.erase(it);
}

void WsApp::ClearSubs() {
  interest_->Clear();
  subs_.clear();
}

void WsApp::OnBatch(std::uint64_t generation, const std::shared_ptr<const EventBatch>& batch) {
  const SessionId& agent = batch->session;  // a live batch is of the session subscribed to
  auto it = subs_.find(agent);
  if (it == subs_.end() || it->second.generation != generation) return;
  LiveReader& reader = *it->second.reader;
  if (auto deliver = reader.OnLive(batch)) {
    SendBatch(*deliver);
    Overflowing(agent);
    return;
  }
  Pump(agent);
}

void WsApp::SendBatch(const EventBatch& batch) {
  std::call_once(batch.ws_head_once, [&batch] {
    batch.ws_head = R"({"type":"events","agent":)" +
                    json::serialize(json::string(batch.session.str())) + R"(,"epoch":)" +
                    std::to_string(batch.epoch.value()) + R"(,"from":")" +
                    FormatCursor({batch.epoch, batch.first}) + R"(","to":")" +
                    FormatCursor({batch.epoch, batch.last}) + R"(","events":)";
  });
  out_.Send(batch.ws_head, batch.json, "}");
  metrics_.FramesSent(1);
}

bool WsApp::Overflowing(const SessionId& agent) {
  if (closed_ || out_.queued_bytes() <= limits_.max_queue_bytes) return false;
  metrics_.SlowClientDropped();
  log::Warn("server.slow_client_dropped", {{"transport", "websocket"},
                                           {"agent", agent.str()},
                                           {"queued_bytes", out_.queued_bytes()},
                                           {"limit", limits_.max_queue_bytes}});
  closed_ = true;
  ClearSubs();
  out_.Close("slow client: more than " + std::to_string(limits_.max_queue_bytes) +
             " bytes queued; resubscribe with your last cursor");
  return true;
}

void WsApp::Pump(const SessionId& agent) {
  auto it = subs_.find(agent);
  while (!closed_ && it != subs_.end()) {
    LiveReader& reader = *it->second.reader;
    if (reader.reset_needed()) return Reset(agent);
    if (!reader.catching_up()) return;
    // Pace replays by the socket: read more only while half the queue bound is free.
    if (out_.queued_bytes() > limits_.max_queue_bytes / 2) return;
    auto batch = reader.Pull();
    if (!batch.ok()) {
      json::object msg = api::ErrorToJson(batch.status());
      msg["type"] = "error";
      msg["agent"] = agent.str();
      SendJson(msg);
      EraseSub(it);
      return;
    }
    if (*batch) SendBatch(**batch);
    if (!*batch && !reader.reset_needed()) return;  // caught up: live from here
  }
}

void WsApp::OnWritten() {
  if (closed_) return;
  std::vector<SessionId> pending;
  for (const auto& [agent, sub] : subs_)
    if (sub.reader->catching_up() || sub.reader->reset_needed()) pending.push_back(agent);
  for (const SessionId& agent : pending) Pump(agent);
}

void WsApp::Reset(const SessionId& agent) {
  // History was replaced: a bounded tail page of the current epoch, then live from its end.
  timeline::PageRequest request;
  request.direction = timeline::PageDirection::kTail;
  request.max_items = 50;
  auto page = timeline_.Page(agent, request);
  if (!page.ok()) {
    SendError("", page.status());
    if (auto it = subs_.find(agent); it != subs_.end()) EraseSub(it);
    return;
  }
  SendJson(json::object{{"type", "reset"},
                        {"agent", agent.str()},
                        {"epoch", page->epoch.value()},
                        {"page", api::PageToJson(*page)}});
  Follow(agent, page->end_cursor);
}

}  // namespace agentstream::server
