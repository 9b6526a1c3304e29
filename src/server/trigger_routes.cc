#include "server/trigger_routes.h"

#include <boost/json.hpp>

#include <algorithm>
#include <memory>
#include <utility>

#include "api/api_json.h"
#include "server/api_router.h"
#include "server/automation_fire.h"
#include "server/workspace_routes.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

constexpr std::string_view kSignatureHeader = "x-hub-signature-256";

Status Unauthorized(std::string message) {
  return Error(ErrorCode::kUnauthenticated, std::move(message));
}

}  // namespace

bool IsTriggerDelivery(const HttpRequest& request) {
  const std::vector<std::string> seg = PathSegments(request.path);
  return request.method == "POST" && seg.size() == 3 && seg[0] == "v1" && seg[1] == "triggers" &&
         !request.Header(kSignatureHeader).empty();
}

// One delivery on its way: what the three steps need and what the reply says.
struct TriggerRoutes::Delivery {
  const Trigger* trigger = nullptr;
  std::string key;  // the delivery id
  std::optional<std::string> event;
  Rendered prompt;
  std::function<void(HttpResponse)> reply;
  std::string id() const { return "trigger:" + trigger->id + ":" + key; }
  void Fail(const Status& status) const { reply(ErrorResponse(status)); }
};

TriggerRoutes::TriggerRoutes(runtime::AgentManager& agents, WorkspaceRoutes* workspaces,
                             std::vector<Trigger> triggers)
    : agents_(agents), workspaces_(workspaces), triggers_(std::move(triggers)) {}

bool TriggerRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                           const std::function<void(HttpResponse)>& reply) {
  if (seg.size() != 3 || seg[0] != "v1" || seg[1] != "triggers") return false;
  if (request.method != "POST") {
    reply(ErrorResponse(Error(ErrorCode::kInvalidArgument, "a trigger takes POST")));
    return true;
  }
  const auto found = std::find_if(triggers_.begin(), triggers_.end(),
                                  [&](const Trigger& t) { return t.id == seg[2]; });
  if (found == triggers_.end()) {
    reply(ErrorResponse(Error(ErrorCode::kNotFound, "no trigger \"" + seg[2] + "\"")));
    return true;
  }
  const Trigger& trigger = *found;
  // A signature, when given, must be right; without one the transport admitted a credential.
  if (const std::string_view signature = request.Header(kSignatureHeader); !signature.empty()) {
    if (trigger.secret.empty()) {
      reply(ErrorResponse(
          Unauthorized("trigger " + trigger.id + " has no secret: sign with none, use a token")));
      return true;
    }
    if (!SignatureMatches(trigger.secret, request.body, signature)) {
      reply(ErrorResponse(Unauthorized("the X-Hub-Signature-256 does not match the body")));
      return true;
    }
  }
  auto delivery = std::make_shared<Delivery>();
  delivery->trigger = &trigger;
  delivery->reply = reply;
  if (const std::string_view event = request.Header("x-github-event"); !event.empty())
    delivery->event = std::string(event);
  // A delivery of an event the trigger does not take (GitHub's "ping" when the hook is made):
  // answered, and nothing happens.
  if (!trigger.events.empty() &&
      (!delivery->event || std::find(trigger.events.begin(), trigger.events.end(),
                                     *delivery->event) == trigger.events.end())) {
    reply(JsonValueResponse(json::object{
        {"trigger", trigger.id}, {"ignored", true}, {"event", delivery->event.value_or("")}}));
    return true;
  }
  Result<std::string> key =
      DeliveryId(request.Header("x-github-delivery"), request.Header("idempotency-key"));
  if (!key.ok()) return delivery->Fail(key.status()), true;
  delivery->key = std::move(*key);
  auto payload = api::ParseJson(request.body);
  if (!payload.ok()) return delivery->Fail(payload.status()), true;
  delivery->prompt = RenderTemplate(trigger.prompt, *payload);
  if (delivery->prompt.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    delivery->Fail(
        Error(ErrorCode::kInvalidArgument, "the trigger's prompt renders empty for this payload"));
    return true;
  }
  AutomationFiring firing;
  firing.key = delivery->id();
  firing.fired = AutomationFired{"trigger", trigger.id, delivery->key, delivery->event,
                                 delivery->prompt.missing};
  firing.prompt = delivery->prompt.text;
  if (trigger.agent) {
    firing.agent = *trigger.agent;
  } else {
    firing.create = AgentTemplateConfig(*trigger.create, *payload);
    firing.worktree = trigger.create->worktree;
  }
  FireAutomation(agents_, workspaces_, std::move(firing),
                 [delivery](Result<AutomationResult> fired) {
                   if (!fired.ok()) return delivery->Fail(fired.status());
                   json::object out = api::SendReplyToJson(fired->sent);
                   out["trigger"] = delivery->trigger->id;
                   out["delivery"] = delivery->key;
                   out["agent"] = fired->agent.str();
                   out["clientMessageId"] = delivery->id();
                   out["duplicate"] = fired->duplicate;
                   json::array missing;
                   for (const std::string& m : delivery->prompt.missing)
                     missing.push_back(json::value(m));
                   out["missingFields"] = std::move(missing);
                   delivery->reply(JsonValueResponse(out));
                 });
  return true;
}

}  // namespace agentstream::server
