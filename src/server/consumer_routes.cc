#include "server/consumer_routes.h"

#include <utility>

#include "api/api_json.h"
#include "api/consumer_json.h"
#include "server/api_router.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

// A Prometheus label value: backslash, quote and newline escaped.
std::string Label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool IsInboxDelivery(const HttpRequest& request) {
  const std::vector<std::string> seg = PathSegments(request.path);
  return request.method == "POST" && seg.size() == 4 && seg[0] == "v1" && seg[1] == "agents" &&
         seg[3] == "inbox";
}

ConsumerRoutes::ConsumerRoutes(consumers::ConsumerService* consumers, Inbox* inbox)
    : consumers_(consumers), inbox_(inbox) {}

bool ConsumerRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                            const std::function<void(HttpResponse)>& reply) {
  if (seg.size() >= 2 && seg[0] == "v1" && seg[1] == "consumers") {
    HandleConsumers(request, seg, reply);
    return true;
  }
  if (seg.size() == 4 && seg[0] == "v1" && seg[1] == "agents" && seg[3] == "inbox") {
    HandleInbox(request, SessionId(seg[2]), reply);
    return true;
  }
  return false;
}

void ConsumerRoutes::HandleConsumers(const HttpRequest& request,
                                     const std::vector<std::string>& seg,
                                     const std::function<void(HttpResponse)>& reply) {
  if (consumers_ == nullptr) {
    return reply(ErrorResponse(
        Error(ErrorCode::kNotFound, "this daemon runs no consumers (" + request.path + ")")));
  }
  if (seg.size() == 2) {
    if (request.method == "GET") {
      Result<std::vector<consumers::ConsumerState>> all = consumers_->List();
      if (!all.ok()) return reply(ErrorResponse(all.status()));
      json::array list;
      for (const consumers::ConsumerState& state : *all)
        list.push_back(api::ConsumerStateToJson(state));
      return reply(JsonValueResponse(json::object{{"consumers", std::move(list)}}));
    }
    if (request.method == "POST") {
      Result<json::value> body = api::ParseJson(request.body);
      if (!body.ok()) return reply(ErrorResponse(body.status()));
      Result<consumers::ConsumerSpec> spec = consumers::ConsumerSpecFromJson(*body);
      if (!spec.ok()) return reply(ErrorResponse(spec.status()));
      Result<consumers::ConsumerState> created = consumers_->Create(std::move(*spec));
      if (!created.ok()) return reply(ErrorResponse(created.status()));
      return reply(JsonValueResponse(api::ConsumerStateToJson(*created), 201));
    }
    return reply(ErrorResponse(NoEndpoint(request)));
  }
  const ConsumerId id(seg[2]);
  if (seg.size() == 3 && request.method == "GET") {
    Result<consumers::ConsumerState> state = consumers_->Get(id);
    if (!state.ok()) return reply(ErrorResponse(state.status()));
    return reply(JsonValueResponse(api::ConsumerStateToJson(*state)));
  }
  if (seg.size() == 3 && request.method == "DELETE") {
    if (Status deleted = consumers_->Delete(id); !deleted.ok())
      return reply(ErrorResponse(deleted));
    return reply(JsonResponse(200, R"({"ok":true})"));
  }
  if (seg.size() == 4 && seg[3] == "resume" && request.method == "POST") {
    std::optional<SessionId> session;
    if (!request.body.empty()) {
      Result<json::value> body = api::ParseJson(request.body);
      if (!body.ok()) return reply(ErrorResponse(body.status()));
      if (!body->is_object())
        return reply(
            ErrorResponse(Error(ErrorCode::kInvalidArgument, "the body is not an object")));
      if (const json::value* s = body->get_object().if_contains("session")) {
        if (!s->is_string()) {
          return reply(
              ErrorResponse(Error(ErrorCode::kInvalidArgument, "session must be a string")));
        }
        session = SessionId(std::string(s->get_string()));
      }
    }
    if (Status resumed = consumers_->Resume(id, session); !resumed.ok())
      return reply(ErrorResponse(resumed));
    return reply(JsonResponse(200, R"({"ok":true})"));
  }
  reply(ErrorResponse(NoEndpoint(request)));
}

void ConsumerRoutes::HandleInbox(const HttpRequest& request, const SessionId& id,
                                 const std::function<void(HttpResponse)>& reply) {
  if (inbox_ == nullptr)
    return reply(ErrorResponse(Error(ErrorCode::kNotFound, "this daemon has no inbox")));
  if (request.method == "GET") {
    return reply(JsonValueResponse(json::object{{"session", id.str()},
                                                {"path", "/v1/agents/" + id.str() + "/inbox"},
                                                {"token", inbox_->TokenFor(id)}}));
  }
  if (request.method != "POST") return reply(ErrorResponse(NoEndpoint(request)));
  inbox_->Accept(id, request.Header("x-agentstream-timestamp"),
                 request.Header("x-agentstream-signature"), request.body,
                 [reply](Result<InboxResult> result) {
                   if (!result.ok()) return reply(ErrorResponse(result.status()));
                   reply(JsonValueResponse(json::object{{"appended", result->appended},
                                                        {"duplicate", result->duplicate},
                                                        {"cursor", FormatCursor(result->cursor)}}));
                 });
}

std::string ConsumerRoutes::RenderMetrics() {
  if (consumers_ == nullptr) return {};
  Result<std::vector<consumers::ConsumerState>> all = consumers_->List();
  if (!all.ok()) return {};
  std::string out =
      "# TYPE agentstream_consumer_lag_events gauge\n"
      "# TYPE agentstream_consumer_lag_seconds gauge\n"
      "# TYPE agentstream_consumer_parked_sessions gauge\n"
      "# TYPE agentstream_consumer_deliveries_total counter\n"
      "# TYPE agentstream_consumer_events_delivered_total counter\n"
      "# TYPE agentstream_consumer_failures_total counter\n";
  for (const consumers::ConsumerState& state : *all) {
    const api::ConsumerLag lag = api::SummarizeLag(state);
    const std::string label = "{consumer=\"" + Label(state.spec.id.str()) + "\"} ";
    out += "agentstream_consumer_lag_events" + label + std::to_string(lag.events) + "\n";
    out += "agentstream_consumer_lag_seconds" + label + std::to_string(lag.seconds) + "\n";
    out += "agentstream_consumer_parked_sessions" + label + std::to_string(lag.parked) + "\n";
    out +=
        "agentstream_consumer_deliveries_total" + label + std::to_string(state.deliveries) + "\n";
    out += "agentstream_consumer_events_delivered_total" + label +
           std::to_string(state.events_delivered) + "\n";
    out += "agentstream_consumer_failures_total" + label + std::to_string(state.failures) + "\n";
  }
  return out;
}

}  // namespace agentstream::server
