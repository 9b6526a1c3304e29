#include "server/ws_app.h"

#include <boost/json/serialize.hpp>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "api/api_json.h"
#include "log/log.h"
#include "notify/routing.h"
#include "server/api_router.h"
#include "server/schedule_routes.h"
#include "server/workspace_routes.h"
#include "system/random_id.h"
#include "system/wall_clock.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

std::string StringOr(const json::object& msg, std::string_view name, std::string fallback = "") {
  const json::value* v = msg.if_contains(name);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::move(fallback);
}

// The members a message carries beside its body's (api_json.h's `envelope`): every message's
// "type" and "id", and the "agent" it is for.
constexpr std::string_view kEnvelope[] = {"type", "id", "agent"};
// permission.reply also names the request it answers.
constexpr std::string_view kPermissionEnvelope[] = {"type", "id", "agent", "requestId"};
// agents.create without an "agent" object carries the config beside "type" and "id".
constexpr std::string_view kCreateEnvelope[] = {"type", "id"};

// An unchanged presence row is written again at most this often (a client's heartbeats come every
// 15 s; its row expires notify::kPresenceExpiryMs after the last write).
constexpr TimestampMs kPresenceRewriteMs = 10000;
// A focused agent id longer than this is not an agent: it is stored as none.
constexpr std::size_t kMaxFocusedAgentBytes = 256;

// Copy the members `keys` of `msg` into `query` as the text of an HTTP query (ParsePageQuery,
// ParseSearchQuery), leaving out an absent or null one; a member of another type is
// kInvalidArgument naming it. An integer beyond 64 bits is copied as its digits, which the query's
// parser refuses, never converted (Boost.JSON's to_number would throw).
Status StringMembers(const json::object& msg, std::initializer_list<const char*> keys,
                     std::map<std::string, std::string>& query) {
  for (const char* key : keys) {
    const json::value* v = msg.if_contains(key);
    if (v == nullptr || v->is_null()) continue;
    if (!v->is_string())
      return Error(ErrorCode::kInvalidArgument, std::string(key) + " must be a string");
    query[key] = std::string(v->get_string());
  }
  return Status::Ok();
}
Status IntegerMembers(const json::object& msg, std::initializer_list<const char*> keys,
                      std::map<std::string, std::string>& query) {
  for (const char* key : keys) {
    const json::value* v = msg.if_contains(key);
    if (v == nullptr || v->is_null()) continue;
    if (v->is_int64())
      query[key] = std::to_string(v->get_int64());
    else if (v->is_uint64())
      query[key] = std::to_string(v->get_uint64());
    else
      return Error(ErrorCode::kInvalidArgument, std::string(key) + " must be an integer");
  }
  return Status::Ok();
}

Result<SessionId> AgentOf(const json::object& msg) {
  const std::string agent = StringOr(msg, "agent");
  if (agent.empty()) return Error(ErrorCode::kInvalidArgument, "agent is missing");
  return SessionId(agent);
}

std::string_view NoticeType(runtime::AgentNotice::Kind kind) {
  switch (kind) {
    case runtime::AgentNotice::Kind::kCreated:
      return "agent.created";
    case runtime::AgentNotice::Kind::kDisposed:
      return "agent.disposed";
    case runtime::AgentNotice::Kind::kStatus:
      return "agent.status";
    case runtime::AgentNotice::Kind::kError:
      return "agent.error";
    case runtime::AgentNotice::Kind::kQueued:
      return "agent.queued";
  }
  return "agent.status";
}

}  // namespace

WsApp::WsApp(runtime::AgentManager& agents, EventLog& log, TimelineService& timeline, Hub& hub,
             Metrics& metrics, WsOutput& out, Poster post, WsLimits limits,
             WorkspaceRoutes* workspaces, ScheduleRoutes* schedules)
    : agents_(agents),
      log_(log),
      timeline_(timeline),
      hub_(hub),
      metrics_(metrics),
      out_(out),
      post_(std::move(post)),
      limits_(limits),
      workspaces_(workspaces),
      schedules_(schedules),
      presence_client_(system::RandomId("conn", 32)) {}

void WsApp::Start() {
  std::weak_ptr<WsApp> weak = weak_from_this();
  Poster post = post_;
  notices_ =
      agents_.WatchNotices([weak, post, interest = interest_](const runtime::AgentNotice& notice) {
        // On the manager's thread: pass over a notice this client does not watch, else encode it
        // there and deliver it on the strand.
        if (!interest->Wants(notice.agent.id)) return;
        json::object msg{{"type", NoticeType(notice.kind)},
                         {"agent", api::AgentSnapshotToJson(notice.agent)}};
        if (!notice.message.empty()) msg["message"] = notice.message;
        auto text = std::make_shared<const std::string>(json::serialize(msg));
        post([weak, text] {
          if (auto self = weak.lock(); self && !self->closed_) self->out_.Send("", text, "");
        });
      });
}

void WsApp::Shutdown() {
  closed_ = true;
  ClearSubs();
  notices_.Reset();
  if (presence_stored_) {
    presence_stored_ = false;
    if (Status s = log_.devices().DropPresence(presence_client_); !s.ok())
      log::Warn("presence.drop_failed", {{"error", s.ToString()}});
  }
}

void WsApp::SendJson(const json::object& msg) {
  if (closed_) return;
  auto text = std::make_shared<const std::string>(json::serialize(msg));
  out_.Send("", std::move(text), "");
}

void WsApp::SendReply(const std::string& id, json::object msg) {
  if (!id.empty()) msg["id"] = id;  // a request without one gets a reply without one
  SendJson(msg);
}

void WsApp::SendError(const std::string& id, const Status& status) {
  json::object msg = api::ErrorToJson(status);
  msg["type"] = "error";
  SendReply(id, std::move(msg));
}

void WsApp::SendOk(const std::string& id) { SendReply(id, json::object{{"type", "ok"}}); }

template <class T>
std::function<void(Result<T>)> WsApp::OnStrand(std::function<void(WsApp&, Result<T>)> fn) {
  return [self = shared_from_this(), fn = std::move(fn)](Result<T> result) {
    auto shared = std::make_shared<Result<T>>(std::move(result));
    self->post_([self, fn, shared] {
      if (!self->closed_) fn(*self, std::move(*shared));
    });
  };
}

std::function<void(Status)> WsApp::OkOnStrand(std::string id) {
  return [self = shared_from_this(), id = std::move(id)](const Status& status) {
    self->post_([self, id, status] {
      if (self->closed_) return;
      if (status.ok()) {
        self->SendOk(id);
      } else {
        self->SendError(id, status);
      }
    });
  };
}

std::function<void(Result<api::AgentSnapshot>)> WsApp::AgentOnStrand(std::string id) {
  return OnStrand<api::AgentSnapshot>([id = std::move(id)](WsApp& self,
                                                           Result<api::AgentSnapshot> r) {
    if (!r.ok()) return self.SendError(id, r.status());
    self.SendReply(id, json::object{{"type", "agent"}, {"agent", api::AgentSnapshotToJson(*r)}});
  });
}

void WsApp::OnBinaryMessage() {
  if (closed_) return;
  SendError("", Error(ErrorCode::kInvalidArgument,
                      "binary frames are not supported: send JSON text frames"));
}

void WsApp::OnMessage(std::string_view text) {
  if (closed_) return;
  auto parsed = api::ParseJson(text, limits_.max_message_bytes);
  if (!parsed.ok()) return SendError("", parsed.status());
  if (!parsed->is_object())
    return SendError("", Error(ErrorCode::kInvalidArgument, "a message must be a JSON object"));
  const json::object& msg = parsed->get_object();
  const std::string id = StringOr(msg, "id");
  static const std::map<std::string, Handler, std::less<>> kHandlers = {
      {"hello", &WsApp::Hello},
      {"agents.list", &WsApp::AgentsList},
      {"agents.create", &WsApp::AgentsCreate},
      {"agents.close", &WsApp::AgentsClose},
      {"agents.rename", &WsApp::AgentsRename},
      {"send", &WsApp::SendPrompt},
      {"interrupt", &WsApp::Interrupt},
      {"permission.reply", &WsApp::PermissionReply},
      {"mode.set", &WsApp::ModeSet},
      {"model.set", &WsApp::ModelSet},
      {"thinking.set", &WsApp::ThinkingSet},
      {"timeline.fetch", &WsApp::TimelineFetch},
      {"search", &WsApp::Search},
      {"subscribe", &WsApp::Subscribe},
      {"unsubscribe", &WsApp::Unsubscribe},
      {"heartbeat", &WsApp::Heartbeat},
      {"fork", &WsApp::ForkOrRewind},
      {"rewind", &WsApp::ForkOrRewind},
      {"git", &WsApp::GitAction},
      {"schedules.list", &WsApp::Schedules},
      {"schedules.create", &WsApp::Schedules},
      {"schedules.show", &WsApp::Schedules},
      {"schedules.pause", &WsApp::Schedules},
      {"schedules.resume", &WsApp::Schedules},
      {"schedules.delete", &WsApp::Schedules},
  };
  const auto it = kHandlers.find(StringOr(msg, "type"));
  if (it == kHandlers.end())
    return SendError(id, Error(ErrorCode::kInvalidArgument,
                               "unknown message type \"" + StringOr(msg, "type") + "\""));
  (this->*(it->second))(msg, id);
}

void WsApp::Hello(const json::object&, const std::string& id) {
  json::object features{{"selectiveAgentTimeline", true},
                        {"resumeCursor", true},
                        {"epochReset", true},
                        {"fork", true},
                        {"rewind", true},
                        {"queue", true}};
  json::object limits{{"maxMessageBytes", limits_.max_message_bytes},
                      {"maxQueueBytes", limits_.max_queue_bytes},
                      {"maxFrameEvents", limits_.batch.max_events},
                      {"maxFramePayloadBytes", limits_.batch.max_bytes},
                      {"unsubscribeGraceMs", limits_.unsubscribe_grace.count()},
                      {"maxSubscriptions", limits_.max_subscriptions}};
  json::object msg{{"type", "server_info"},
                   {"server", "agentstream"},
                   {"version", "0.1.0"},
                   {"features", std::move(features)},
                   {"limits", std::move(limits)}};
  SendReply(id, std::move(msg));
}

void WsApp::AgentsList(const json::object& msg, const std::string& id) {
  const json::value* closed = msg.if_contains("includeClosed");
  if (closed != nullptr && !closed->is_bool() && !closed->is_null())
    return SendError(id, Error(ErrorCode::kInvalidArgument, "includeClosed must be a boolean"));
  const bool include_closed = closed != nullptr && closed->is_bool() && closed->get_bool();
  // From now on this client hears of every agent (docs/protocol.md, "Live-only control notices").
  interest_->all.store(true, std::memory_order_relaxed);
  agents_.List(include_closed,
               OnStrand<std::vector<api::AgentSnapshot>>(
                   [id](WsApp& self, Result<std::vector<api::AgentSnapshot>> r) {
                     if (!r.ok()) return self.SendError(id, r.status());
                     json::array list;
                     for (const auto& s : *r) list.push_back(api::AgentSnapshotToJson(s));
                     self.SendReply(id, json::object{{"type", "agents"}, {"agents", list}});
                   }));
}

void WsApp::AgentsCreate(const json::object& msg, const std::string& id) {
  // The config is the "agent" object, else the message itself beside "type" and "id".
  const json::value* config = msg.if_contains("agent");
  if (config != nullptr) {
    if (Status outer = api::RefuseUnknownMembers(msg, kEnvelope, "an agents.create message");
        !outer.ok())
      return SendError(id, outer);
  }
  const json::value body = config != nullptr ? *config : json::value(msg);
  auto parsed = api::AgentConfigFromJson(
      body, config != nullptr ? api::MemberNames() : api::MemberNames(kCreateEnvelope));
  if (!parsed.ok()) return SendError(id, parsed.status());
  auto worktree = api::WorktreeRequestFromJson(body);
  if (!worktree.ok()) return SendError(id, worktree.status());
  if (!*worktree) return agents_.Create(std::move(*parsed), AgentOnStrand(id));
  // In a git worktree of its own (docs/workspaces.md).
  if (workspaces_ == nullptr)
    return SendError(id, Error(ErrorCode::kInvalidArgument, "this daemon makes no worktrees"));
  workspaces_->CreateWithWorktree(std::move(*parsed), std::move(**worktree), AgentOnStrand(id));
}

void WsApp::AgentsClose(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  agents_.Close(*agent, OkOnStrand(id));
}

void WsApp::SendPrompt(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  auto request = api::SendRequestFromJson(msg, kEnvelope);
  if (!request.ok()) return SendError(id, request.status());
  agents_.Send(
      *agent, std::move(*request),
      OnStrand<api::SendReply>([id, agent = *agent](WsApp& self, Result<api::SendReply> r) {
        if (!r.ok()) return self.SendError(id, r.status());
        json::object reply = api::SendReplyToJson(*r);
        reply["type"] = "send.reply";
        reply["agent"] = agent.str();
        self.SendReply(id, std::move(reply));
      }));
}

void WsApp::Interrupt(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  agents_.Interrupt(*agent, OkOnStrand(id));
}

void WsApp::PermissionReply(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  auto reply =
      api::PermissionReplyFromJson(msg, RequestId(StringOr(msg, "requestId")), kPermissionEnvelope);
  if (!reply.ok()) return SendError(id, reply.status());
  agents_.ReplyPermission(*agent, std::move(*reply), OkOnStrand(id));
}

void WsApp::AgentsRename(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  auto title = api::StringBodyFromJson(msg, "title", kEnvelope, /*allow_empty=*/true);
  if (!title.ok()) return SendError(id, title.status());
  agents_.Rename(*agent, std::move(*title), AgentOnStrand(id));
}

void WsApp::ModeSet(const json::object& msg, const std::string& id) {
  SettingSet(msg, id, "mode", &runtime::AgentManager::SetMode);
}

void WsApp::ModelSet(const json::object& msg, const std::string& id) {
  SettingSet(msg, id, "model", &runtime::AgentManager::SetModel);
}

void WsApp::ThinkingSet(const json::object& msg, const std::string& id) {
  SettingSet(msg, id, "thinking", &runtime::AgentManager::SetThinking);
}

void WsApp::SettingSet(const json::object& msg, const std::string& id, std::string_view name,
                       Setter set) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  auto value = api::StringBodyFromJson(msg, name, kEnvelope);
  if (!value.ok()) return SendError(id, value.status());
  (agents_.*set)(*agent, std::move(*value), OkOnStrand(id), runtime::Forwarding::kAllowed);
}

void WsApp::TimelineFetch(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  std::map<std::string, std::string> query;
  Status members = StringMembers(msg, {"direction", "cursor"}, query);
  if (members.ok()) members = IntegerMembers(msg, {"limit", "maxBytes"}, query);
  if (!members.ok()) return SendError(id, members);
  auto request = ParsePageQuery(query);
  if (!request.ok()) return SendError(id, request.status());
  auto page = timeline_.Page(*agent, *request);
  if (!page.ok()) return SendError(id, page.status());
  SendReply(id,
            json::object{
                {"type", "timeline"}, {"agent", agent->str()}, {"page", api::PageToJson(*page)}});
}

void WsApp::Search(const json::object& msg, const std::string& id) {
  std::map<std::string, std::string> query;
  Status members = StringMembers(msg, {"q", "agent"}, query);
  if (members.ok()) members = IntegerMembers(msg, {"limit"}, query);
  if (!members.ok()) return SendError(id, members);
  auto search = ParseSearchQuery(query);
  if (!search.ok()) return SendError(id, search.status());
  auto found = timeline_.Search(*search);
  if (!found.ok()) return SendError(id, found.status());
  json::object reply = SearchResultToJson(*found);
  reply["type"] = "search";
  SendReply(id, std::move(reply));
}

void WsApp::Heartbeat(const json::object& msg, const std::string& id) {
  ReportPresence(msg);  // for notification routing only; never consulted for delivery
  if (!id.empty()) SendOk(id);
}

void WsApp::ReportPresence(const json::object& msg) {
  PresenceRecord row;
  row.client = presence_client_;
  row.device_id = presence_device_;
  const json::value* visible = msg.if_contains("visible");
  row.visible = visible != nullptr && visible->is_bool() && visible->as_bool();
  row.focused_agent = StringOr(msg, "focusedAgent");
  if (row.focused_agent.size() > kMaxFocusedAgentBytes) row.focused_agent.clear();
  const TimestampMs now = system::WallClockMs();
  row.last_activity_ms = now;
  row.expires_ms = now + notify::kPresenceExpiryMs;
  const bool changed = !presence_stored_ || row.visible != presence_.visible ||
                       row.focused_agent != presence_.focused_agent;
  if (!changed && now - presence_.last_activity_ms < kPresenceRewriteMs) return;
  if (Status s = log_.devices().ReportPresence(row); !s.ok()) {
    log::Warn("presence.report_failed", {{"error", s.ToString()}});
    return;
  }
  presence_ = std::move(row);
  presence_stored_ = true;
}

void WsApp::ForkOrRewind(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  auto cursor = api::CursorBodyFromJson(msg, kEnvelope);
  if (!cursor.ok()) return SendError(id, cursor.status());
  if (StringOr(msg, "type") == "fork") {
    // An agent with a worktree: the child gets its own (docs/workspaces.md).
    if (workspaces_ != nullptr && workspaces_->ForkWithWorktree(*agent, *cursor, AgentOnStrand(id)))
      return;
    return agents_.Fork(*agent, *cursor, AgentOnStrand(id));
  }
  agents_.Rewind(*agent, *cursor, AgentOnStrand(id));
}

// A git action on the agent's worktree (docs/workspaces.md): the action's members beside "type",
// "id", "agent" and "action"; answered "git" with the result as HTTP answers it.
void WsApp::GitAction(const json::object& msg, const std::string& id) {
  auto agent = AgentOf(msg);
  if (!agent.ok()) return SendError(id, agent.status());
  if (workspaces_ == nullptr)
    return SendError(id, Error(ErrorCode::kInvalidArgument, "this daemon makes no worktrees"));
  json::object body;
  for (const auto& member : msg) {
    const std::string_view key = member.key();
    if (key != "type" && key != "id" && key != "agent" && key != "action")
      body.emplace(key, member.value());
  }
  workspaces_->GitAction(
      *agent, StringOr(msg, "action"), std::move(body),
      OnStrand<json::object>([id](WsApp& self, Result<json::object> done) {
        if (!done.ok()) return self.SendError(id, done.status());
        self.SendReply(id, json::object{{"type", "git"}, {"result", std::move(*done)}});
      }));
}

// The schedules (docs/automation.md): "schedules.list" answered {"type": "schedules",
// "schedules"}; "schedules.create" with "schedule" (a definition), "schedules.show", ".pause",
// ".resume" with "schedule" (an id), answered {"type": "schedule", "schedule"}; "schedules.delete"
// answered {"type": "schedule.deleted", "schedule": id}. Each blocks for its store round trips.
void WsApp::Schedules(const json::object& msg, const std::string& id) {
  if (schedules_ == nullptr)
    return SendError(id, Error(ErrorCode::kUnavailable, "this daemon serves no schedules"));
  const std::string type = StringOr(msg, "type");
  if (type == "schedules.list") {
    Result<json::array> all = schedules_->List();
    if (!all.ok()) return SendError(id, all.status());
    return SendReply(id, json::object{{"type", "schedules"}, {"schedules", std::move(*all)}});
  }
  Result<json::object> done = Error(ErrorCode::kInvalidArgument, "");
  if (type == "schedules.create") {
    const json::value* definition = msg.if_contains("schedule");
    if (definition == nullptr)
      return SendError(id, Error(ErrorCode::kInvalidArgument, "\"schedule\" is required"));
    done = schedules_->Create(*definition);
  } else {
    const std::string schedule = StringOr(msg, "schedule");
    if (schedule.empty())
      return SendError(id, Error(ErrorCode::kInvalidArgument, "\"schedule\" (an id) is required"));
    if (type == "schedules.delete") {
      const Status deleted = schedules_->Delete(schedule);
      if (!deleted.ok()) return SendError(id, deleted);
      return SendReply(id, json::object{{"type", "schedule.deleted"}, {"schedule", schedule}});
    }
    done = type == "schedules.show" ? schedules_->Show(schedule)
                                    : schedules_->SetPaused(schedule, type == "schedules.pause");
  }
  if (!done.ok()) return SendError(id, done.status());
  SendReply(id, json::object{{"type", "schedule"}, {"schedule", std::move(*done)}});
}

}  // namespace agentstream::server
