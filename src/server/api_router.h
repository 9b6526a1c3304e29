// ApiRouter: the JSON endpoints under /v1 over AgentManager, the log and the timeline
// service (docs/protocol.md lists them with their bodies; docs/openapi.yaml describes them as
// OpenAPI 3.1, served at GET /v1/openapi.json). Transport-free: it takes an
// HttpRequest and answers through a callback, so the Beast layer stays in http_server.cc.
//
// The live reads of GET /v1/agents/{id}/events (long-poll and SSE) need a connection that stays
// open; the transport does those with ResolveEventsQuery + EventsResponse and the hub.
//
// Threading: Handle() may be called from any thread; `reply` runs exactly once, on the calling
// thread or on the AgentManager's thread, and must only hand the response to its connection.
#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <optional>
#include <string>

#include "runtime/agent_manager.h"
#include "search/search.h"
#include "server/consumer_routes.h"
#include "server/http_types.h"
#include "server/hub.h"
#include "server/metrics.h"
#include "timeline/timeline_service.h"

namespace agentstream::server {

using Reply = std::function<void(HttpResponse)>;

// JSON response helpers.
HttpResponse JsonResponse(int status, std::string body);
// `value`, serialized, as a JSON response with `status`.
HttpResponse JsonValueResponse(const boost::json::value& value, int status = 200);
// kNotFound for a request no route answers, naming its method and path.
Status NoEndpoint(const HttpRequest& request);
// `{"error":{"code","message"}}` with the status of the code (api::HttpStatusFor). The message
// is made valid UTF-8 (a client's bytes, such as a path, may be in it).
HttpResponse ErrorResponse(const Status& status);
// The same body for a code outside ErrorCode (the transport's refusals: "unauthorized",
// "forbidden", "not_implemented") with the given status.
HttpResponse CodedErrorResponse(int status, std::string_view code, std::string_view message);
// Replies with the agent's snapshot (api::AgentSnapshotToJson), or the error.
runtime::Callback<api::AgentSnapshot> SnapshotReply(Reply reply);
// A command another daemon forwarded here is answered here, never forwarded on (cluster/
// http_forwarder.h).
runtime::Forwarding ForwardingOf(const HttpRequest& request);

// GET /v1/catalog's body, the known ACP agents (runtime::CatalogToJson); called on the request's
// thread.
using CatalogSource = std::function<boost::json::value()>;

class WorkspaceRoutes;  // workspace_routes.h
class NotifyRoutes;     // notify_routes.h
class TriggerRoutes;    // trigger_routes.h
class ScheduleRoutes;   // schedule_routes.h

enum class LiveMode { kNone, kLongPoll, kSse };

// A parsed `GET /v1/agents/{id}/events?offset=...&live=...`.
struct EventsQuery {
  SessionId session;
  LiveMode live = LiveMode::kNone;
  Cursor after;        // deliver events after this cursor (resolved from the offset)
  bool reset = false;  // the offset named a replaced epoch: `after` is the start of the current
};

// Resolves the offset against the log: "-1" (or absent) is the start of the current epoch,
// "now" its tail, "E:S" the events after that cursor; a cursor of a replaced epoch resolves to
// the start of the current one with `reset` set. kInvalidArgument for a malformed offset or live
// mode, or a cursor past the tail: a seq beyond it, or an epoch after the current one (no client
// was ever given one); kNotFound for an unknown session.
Result<EventsQuery> ResolveEventsQuery(EventLog& log, const SessionId& session,
                                       const HttpRequest& request);

// A catch-up read (one bounded batch) as the Durable Streams JSON-mode response: the array of
// envelopes, Stream-Next-Offset, and Stream-Up-To-Date when the read reached the tail.
HttpResponse EventsResponse(const EventsQuery& query, const EventBatch& batch, bool has_newer);

class ApiRouter {
 public:
  // Every reference must outlive the router.
  ApiRouter(runtime::AgentManager& agents, EventLog& log, TimelineService& timeline,
            Metrics& metrics, Hub& hub, BatchLimits read_limits = {},
            ConsumerRoutes* consumer_routes = nullptr, WorkspaceRoutes* workspace_routes = nullptr,
            NotifyRoutes* notify_routes = nullptr, CatalogSource catalog = nullptr,
            TriggerRoutes* trigger_routes = nullptr, ScheduleRoutes* schedule_routes = nullptr);

  // The route pattern of a request for metrics ("/v1/agents/{id}/messages"), "other" if none.
  static std::string RouteOf(const HttpRequest& request);

  void Handle(const HttpRequest& request, Reply reply);

 private:
  void HandleAgents(const HttpRequest& request, const std::vector<std::string>& seg, Reply reply);
  void HandleAgentAction(const HttpRequest& request, const SessionId& id,
                         const std::vector<std::string>& seg, Reply reply);
  void HandleTimeline(const HttpRequest& request, const SessionId& id, const Reply& reply);
  void HandleEventsRead(const HttpRequest& request, const SessionId& id, const Reply& reply);
  // GET and POST /v1/imports (docs/import.md): the owner's only.
  void HandleImports(const HttpRequest& request, Reply reply);

  runtime::AgentManager& agents_;
  EventLog& log_;
  TimelineService& timeline_;
  Metrics& metrics_;
  Hub& hub_;
  BatchLimits read_limits_;
  ConsumerRoutes* consumer_routes_;    // null: no consumer or inbox endpoints
  WorkspaceRoutes* workspace_routes_;  // null: no worktrees (a create asking for one is refused)
  NotifyRoutes* notify_routes_;        // null: no notification endpoints
  CatalogSource catalog_;              // null: no GET /v1/catalog
  TriggerRoutes* trigger_routes_;      // null: no POST /v1/triggers/{id}
  ScheduleRoutes* schedule_routes_;    // null: no /v1/schedules
};

// Parses the timeline query: direction (tail|before|after), cursor (E:S), limit (1..500),
// maxBytes. kInvalidArgument with the parameter named.
Result<timeline::PageRequest> ParsePageQuery(const std::map<std::string, std::string>& query);
// A search from ?q=WORDS&agent=ID&limit=N (limit 1 to kMaxSearchHits, default 20).
Result<SearchQuery> ParseSearchQuery(const std::map<std::string, std::string>& query);
// {agent, outcome, events, lines, malformed, skipped, importedBytes, bytes}: POST /v1/imports.
boost::json::object ImportReplyToJson(const runtime::ImportReply& reply);
// {hits: [{agent, cursor: "E:S", time, kind, snippet}], truncated}.
boost::json::object SearchResultToJson(const SearchResult& result);

}  // namespace agentstream::server
