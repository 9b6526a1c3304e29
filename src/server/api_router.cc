#include "server/api_router.h"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <utility>

#include "api/api_json.h"
#include "core/utf8.h"
#include "search/query.h"
#include "server/notify_routes.h"
#include "server/openapi_document.h"
#include "server/schedule_routes.h"
#include "server/trigger_routes.h"
#include "server/workspace_routes.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

runtime::StatusCallback OkReply(Reply reply) {
  return [reply = std::move(reply)](const Status& status) {
    if (!status.ok()) return reply(ErrorResponse(status));
    reply(JsonResponse(200, R"({"ok":true})"));
  };
}

bool ParseSize(const std::string& text, std::size_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

runtime::Callback<api::AgentSnapshot> SnapshotReply(Reply reply) {
  return [reply = std::move(reply)](Result<api::AgentSnapshot> result) {
    if (!result.ok()) return reply(ErrorResponse(result.status()));
    reply(JsonValueResponse(api::AgentSnapshotToJson(*result)));
  };
}

runtime::Forwarding ForwardingOf(const HttpRequest& request) {
  return request.Header("x-agentstream-forwarded-by").empty() ? runtime::Forwarding::kAllowed
                                                              : runtime::Forwarding::kRefused;
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse JsonValueResponse(const json::value& value, int status) {
  return JsonResponse(status, json::serialize(value));
}

Status NoEndpoint(const HttpRequest& request) {
  return Error(ErrorCode::kNotFound, "no endpoint " + request.method + " " + request.path);
}

HttpResponse ErrorResponse(const Status& status) {
  return JsonValueResponse(api::ErrorToJson(status), api::HttpStatusFor(status.code()));
}

HttpResponse CodedErrorResponse(int status, std::string_view code, std::string_view message) {
  return JsonValueResponse(
      json::object{{"error", json::object{{"code", code}, {"message", SanitizeUtf8(message)}}}},
      status);
}

Result<timeline::PageRequest> ParsePageQuery(const std::map<std::string, std::string>& query) {
  timeline::PageRequest page;
  if (auto it = query.find("direction"); it != query.end()) {
    if (it->second == "tail") {
      page.direction = timeline::PageDirection::kTail;
    } else if (it->second == "before") {
      page.direction = timeline::PageDirection::kBefore;
    } else if (it->second == "after") {
      page.direction = timeline::PageDirection::kAfter;
    } else {
      return Error(ErrorCode::kInvalidArgument, "direction must be one of tail, before, after");
    }
  }
  if (auto it = query.find("cursor"); it != query.end() && !it->second.empty()) {
    Cursor cursor;
    if (!ParseCursor(it->second, &cursor))
      return Error(ErrorCode::kInvalidArgument, "cursor must be EPOCH:SEQ");
    page.cursor = cursor;
  }
  if (page.direction != timeline::PageDirection::kTail && !page.cursor)
    return Error(ErrorCode::kInvalidArgument, "direction before/after needs a cursor");
  if (auto it = query.find("limit"); it != query.end()) {
    if (!ParseSize(it->second, &page.max_items) || page.max_items < 1 ||
        page.max_items > timeline::kMaxPageItems)
      return Error(ErrorCode::kInvalidArgument, "limit must be an integer from 1 to 500");
  }
  if (auto it = query.find("maxBytes"); it != query.end()) {
    if (!ParseSize(it->second, &page.max_bytes) || page.max_bytes < 1024 ||
        page.max_bytes > (std::size_t{4} << 20))
      return Error(ErrorCode::kInvalidArgument, "maxBytes must be from 1024 to 4194304");
  }
  return page;
}

Result<SearchQuery> ParseSearchQuery(const std::map<std::string, std::string>& query) {
  SearchQuery search;
  const auto q = query.find("q");
  if (q == query.end()) return Error(ErrorCode::kInvalidArgument, "a search needs q=WORDS");
  AS_ASSIGN_OR_RETURN(search.words, QueryWords(q->second));
  if (auto it = query.find("agent"); it != query.end() && !it->second.empty())
    search.session = SessionId(it->second);
  if (auto it = query.find("limit"); it != query.end()) {
    if (!ParseSize(it->second, &search.limit) || search.limit < 1 || search.limit > kMaxSearchHits)
      return Error(ErrorCode::kInvalidArgument,
                   "limit must be an integer from 1 to " + std::to_string(kMaxSearchHits));
  }
  return search;
}

json::object SearchResultToJson(const SearchResult& result) {
  json::array hits;
  for (const SearchHit& hit : result.hits) {
    hits.push_back(json::object{{"agent", hit.session.str()},
                                {"cursor", FormatCursor(hit.cursor)},
                                {"time", hit.time},
                                {"kind", hit.kind},
                                {"snippet", hit.snippet}});
  }
  return json::object{{"hits", std::move(hits)}, {"truncated", result.truncated}};
}

Result<EventsQuery> ResolveEventsQuery(EventLog& log, const SessionId& session,
                                       const HttpRequest& request) {
  EventsQuery q;
  q.session = session;
  if (auto it = request.query.find("live"); it != request.query.end()) {
    if (it->second == "long-poll") {
      q.live = LiveMode::kLongPoll;
    } else if (it->second == "sse") {
      q.live = LiveMode::kSse;
    } else {
      return Error(ErrorCode::kInvalidArgument, "live must be long-poll or sse");
    }
  }
  AS_ASSIGN_OR_RETURN(Cursor tail, log.Tail(session));
  const auto it = request.query.find("offset");
  const std::string offset = it == request.query.end() ? "-1" : it->second;
  if (offset == "-1" || offset.empty()) {
    q.after = Cursor{tail.epoch, Seq(0)};
  } else if (offset == "now") {
    q.after = tail;
  } else {
    Cursor cursor;
    if (!ParseCursor(offset, &cursor))
      return Error(ErrorCode::kInvalidArgument,
                   "offset must be -1, now, a Stream-Next-Offset or EPOCH:SEQ");
    if (cursor.epoch > tail.epoch) {
      return Error(ErrorCode::kInvalidArgument, "offset " + offset + " is of epoch " +
                                                    std::to_string(cursor.epoch.value()) +
                                                    ", past the tail " + FormatCursor(tail));
    } else if (cursor.epoch < tail.epoch) {
      q.after = Cursor{tail.epoch, Seq(0)};
      q.reset = true;
    } else if (cursor.seq > tail.seq) {
      return Error(ErrorCode::kInvalidArgument,
                   "offset " + offset + " is past the tail " + FormatCursor(tail));
    } else {
      q.after = cursor;
    }
  }
  return q;
}

HttpResponse EventsResponse(const EventsQuery& query, const EventBatch& batch, bool has_newer) {
  HttpResponse response = JsonResponse(200, *batch.json);
  const Cursor next = batch.count > 0 ? Cursor{batch.epoch, batch.last} : query.after;
  response.headers.emplace_back("Stream-Next-Offset", FormatStreamOffset(next));
  if (!has_newer) response.headers.emplace_back("Stream-Up-To-Date", "true");
  if (query.reset) response.headers.emplace_back("Stream-Reset", "true");
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

ApiRouter::ApiRouter(runtime::AgentManager& agents, EventLog& log, TimelineService& timeline,
                     Metrics& metrics, Hub& hub, BatchLimits read_limits,
                     ConsumerRoutes* consumer_routes, WorkspaceRoutes* workspace_routes,
                     NotifyRoutes* notify_routes, CatalogSource catalog,
                     TriggerRoutes* trigger_routes, ScheduleRoutes* schedule_routes)
    : agents_(agents),
      log_(log),
      timeline_(timeline),
      metrics_(metrics),
      hub_(hub),
      read_limits_(read_limits),
      consumer_routes_(consumer_routes),
      workspace_routes_(workspace_routes),
      notify_routes_(notify_routes),
      catalog_(std::move(catalog)),
      trigger_routes_(trigger_routes),
      schedule_routes_(schedule_routes) {}

std::string ApiRouter::RouteOf(const HttpRequest& request) {
  const std::vector<std::string> seg = PathSegments(request.path);
  if (seg.size() == 1 &&
      (seg[0] == "healthz" || seg[0] == "metrics" || seg[0] == "ws" || seg[0] == "mcp"))
    return "/" + seg[0];
  if (seg.size() >= 2 && seg[0] == "v1" && seg[1] == "consumers") {
    if (seg.size() == 2) return "/v1/consumers";
    if (seg.size() == 3) return "/v1/consumers/{id}";
    if (seg.size() == 4 && seg[3] == "resume") return "/v1/consumers/{id}/resume";
    return "other";
  }
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "worktrees") return "/v1/worktrees";
  if (seg.size() == 4 && seg[0] == "v1" && seg[1] == "devices" && seg[3] == "notifications")
    return "/v1/devices/{id}/notifications";
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "notifications" && seg[2] == "vapid")
    return "/v1/notifications/vapid";
  // Pairing and devices (device_routes.h).
  if (seg.size() == 2 && seg[0] == "v1" &&
      (seg[1] == "pairings" || seg[1] == "whoami" || seg[1] == "devices"))
    return "/v1/" + seg[1];
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "pairings" && seg[2] == "exchange")
    return "/v1/pairings/exchange";
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "devices") return "/v1/devices/{id}";
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "search") return "/v1/search";
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "openapi.json") return "/v1/openapi.json";
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "catalog") return "/v1/catalog";
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "imports") return "/v1/imports";
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "triggers") return "/v1/triggers/{id}";
  if (seg.size() >= 2 && seg[0] == "v1" && seg[1] == "schedules") {
    if (seg.size() == 2) return "/v1/schedules";
    if (seg.size() == 3) return "/v1/schedules/{id}";
    if (seg.size() == 4 && (seg[3] == "pause" || seg[3] == "resume"))
      return "/v1/schedules/{id}/" + seg[3];
    return "other";
  }
  if (seg.size() < 2 || seg[0] != "v1" || seg[1] != "agents") return "other";
  if (seg.size() == 2) return "/v1/agents";
  if (seg.size() == 3) return "/v1/agents/{id}";
  if (seg.size() == 4) return "/v1/agents/{id}/" + seg[3];
  if (seg.size() == 5 && (seg[3] == "permissions" || seg[3] == "messages"))
    return "/v1/agents/{id}/" + seg[3] + "/{key}";
  if (seg.size() == 5 && seg[3] == "git" &&
      (seg[4] == "commit" || seg[4] == "merge" || seg[4] == "push" || seg[4] == "pr" ||
       seg[4] == "discard"))
    return "/v1/agents/{id}/git/" + seg[4];
  return "other";
}

void ApiRouter::Handle(const HttpRequest& request, Reply reply) {
  const std::vector<std::string> seg = PathSegments(request.path);
  if (seg.size() == 1 && seg[0] == "healthz" && request.method == "GET") {
    const Status health = log_.Health();
    if (!health.ok())
      return reply(ErrorResponse(Error(ErrorCode::kUnavailable, health.ToString())));
    return reply(JsonResponse(200, R"({"status":"ok"})"));
  }
  if (seg.size() == 1 && seg[0] == "metrics" && request.method == "GET") {
    HttpResponse response;
    response.content_type = "text/plain; version=0.0.4";
    response.body = metrics_.Render(hub_.Stats(), log_.Stats());
    if (consumer_routes_ != nullptr) response.body += consumer_routes_->RenderMetrics();
    return reply(std::move(response));
  }
  if (consumer_routes_ != nullptr && consumer_routes_->Handle(request, seg, reply)) return;
  if (workspace_routes_ != nullptr && workspace_routes_->Handle(request, seg, reply)) return;
  if (trigger_routes_ != nullptr && trigger_routes_->Handle(request, seg, reply)) return;
  if (schedule_routes_ != nullptr && schedule_routes_->Handle(request, seg, reply)) return;
  if (notify_routes_ != nullptr && notify_routes_->Handle(request, seg, request.device_id, reply))
    return;
  if (seg.size() >= 2 && seg[0] == "v1" && seg[1] == "agents")
    return HandleAgents(request, seg, std::move(reply));
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "openapi.json" && request.method == "GET")
    return reply(JsonResponse(200, std::string(kOpenApiJson)));
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "catalog" && request.method == "GET" &&
      catalog_)
    return reply(JsonValueResponse(catalog_()));
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "imports")
    return HandleImports(request, std::move(reply));
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "search" && request.method == "GET") {
    auto query = ParseSearchQuery(request.query);
    if (!query.ok()) return reply(ErrorResponse(query.status()));
    auto found = timeline_.Search(*query);
    if (!found.ok()) return reply(ErrorResponse(found.status()));
    return reply(JsonValueResponse(SearchResultToJson(*found)));
  }
  reply(ErrorResponse(NoEndpoint(request)));
}

json::object ImportReplyToJson(const runtime::ImportReply& reply) {
  json::object skipped;
  for (const auto& [type, count] : reply.skipped) skipped[type] = count;
  return json::object{{"agent", api::AgentSnapshotToJson(reply.agent)},
                      {"outcome", runtime::ImportOutcomeName(reply.outcome)},
                      {"events", reply.events},
                      {"lines", reply.lines},
                      {"malformed", reply.malformed},
                      {"skipped", std::move(skipped)},
                      {"importedBytes", reply.imported_bytes},
                      {"bytes", reply.bytes}};
}

namespace {

constexpr std::string_view kImportMembers[] = {"source", "path"};
constexpr std::size_t kDefaultListedTranscripts = 1000;

Result<runtime::ImportSource> SourceOf(std::string_view name) {
  std::optional<runtime::ImportSource> source = runtime::ImportSourceNamed(name);
  if (!source) {
    return Error(ErrorCode::kInvalidArgument,
                 "source must be claude or codex, not \"" + std::string(name) + "\"");
  }
  return *source;
}

// GET /v1/imports' body: the transcripts, each with the agent it was imported as, if any.
Result<json::object> ListImports(EventLog& log, const std::map<std::string, std::string>& query) {
  const auto param = [&](const char* name) {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  };
  AS_ASSIGN_OR_RETURN(runtime::ImportSource source, SourceOf(param("source")));
  std::size_t limit = kDefaultListedTranscripts;
  std::size_t since = 0;
  if (!param("limit").empty() && (!ParseSize(param("limit"), &limit) || limit == 0))
    return Error(ErrorCode::kInvalidArgument, "limit must be a positive integer");
  if (!param("since").empty() && !ParseSize(param("since"), &since))
    return Error(ErrorCode::kInvalidArgument, "since must be milliseconds since the epoch");
  const std::string root = runtime::TranscriptRoot(source);
  bool truncated = false;
  json::array transcripts;
  for (const runtime::TranscriptFile& file : runtime::ListTranscripts(
           source, root, param("project"), static_cast<std::int64_t>(since), limit, &truncated)) {
    json::object entry{{"path", file.path},
                       {"sessionId", file.session_id},
                       {"bytes", file.bytes},
                       {"modifiedMs", file.modified_ms}};
    const SessionId agent = runtime::ImportedSessionId(source, file.session_id);
    if (Result<SessionInfo> info = log.GetSession(agent); info.ok()) {
      entry["agent"] = agent.str();
      // Where the last import stopped, and whether the agent went on here since (an import of
      // it then changes nothing).
      std::int64_t imported = 0;
      bool continued = false;
      if (Result<runtime::LastImported> last = runtime::LastImport(log, *info); last.ok()) {
        if (last->marker) imported = last->marker->offset;
        continued = last->continued;
      }
      entry["continued"] = continued;
      entry["importedBytes"] = imported;
    }
    transcripts.push_back(std::move(entry));
  }
  return json::object{{"source", runtime::ImportSourceName(source)},
                      {"root", root},
                      {"transcripts", std::move(transcripts)},
                      {"truncated", truncated}};
}

}  // namespace

void ApiRouter::HandleImports(const HttpRequest& request, Reply reply) {
  if (!request.device_id.empty()) {
    return reply(CodedErrorResponse(403, "forbidden",
                                    "importing transcripts is for the owner's token only"));
  }
  if (request.method == "GET") {
    Result<json::object> list = ListImports(log_, request.query);
    if (!list.ok()) return reply(ErrorResponse(list.status()));
    return reply(JsonValueResponse(*list));
  }
  if (request.method != "POST") return reply(ErrorResponse(NoEndpoint(request)));
  auto body = api::ParseJson(request.body);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  if (!body->is_object()) {
    return reply(
        ErrorResponse(Error(ErrorCode::kInvalidArgument, "an import must be a JSON object")));
  }
  const json::object& object = body->as_object();
  if (Status s = api::RefuseUnknownMembers(object, kImportMembers, "an import"); !s.ok())
    return reply(ErrorResponse(s));
  const json::value* source_name = object.if_contains("source");
  const json::value* path = object.if_contains("path");
  if (source_name == nullptr || !source_name->is_string() || path == nullptr ||
      !path->is_string()) {
    return reply(ErrorResponse(
        Error(ErrorCode::kInvalidArgument, "an import needs a source and a path (strings)")));
  }
  Result<runtime::ImportSource> source = SourceOf(source_name->as_string());
  if (!source.ok()) return reply(ErrorResponse(source.status()));
  Result<runtime::TranscriptFile> file = runtime::CheckTranscriptPath(
      *source, runtime::TranscriptRoot(*source), std::string(path->as_string()));
  if (!file.ok()) return reply(ErrorResponse(file.status()));
  agents_.Import(*source, std::move(*file),
                 [reply = std::move(reply)](Result<runtime::ImportReply> result) {
                   if (!result.ok()) return reply(ErrorResponse(result.status()));
                   reply(JsonValueResponse(ImportReplyToJson(*result)));
                 });
}

void ApiRouter::HandleAgents(const HttpRequest& request, const std::vector<std::string>& seg,
                             Reply reply) {
  if (seg.size() == 2) {
    if (request.method == "GET") {
      const Result<bool> closed = QueryFlag(request.query, "closed");
      if (!closed.ok()) return reply(ErrorResponse(closed.status()));
      return agents_.List(*closed, [reply = std::move(reply)](auto result) {
        if (!result.ok()) return reply(ErrorResponse(result.status()));
        json::array list;
        for (const auto& s : *result) list.push_back(api::AgentSnapshotToJson(s));
        reply(JsonValueResponse(json::object{{"agents", std::move(list)}}));
      });
    }
    if (request.method == "POST") {
      auto body = api::ParseJson(request.body);
      if (!body.ok()) return reply(ErrorResponse(body.status()));
      auto config = api::AgentConfigFromJson(*body);
      if (!config.ok()) return reply(ErrorResponse(config.status()));
      // A worktree is made by the WorkspaceRoutes, which took the request if there are any.
      if (auto worktree = api::WorktreeRequestFromJson(*body); !worktree.ok() || *worktree) {
        return reply(ErrorResponse(
            !worktree.ok() ? worktree.status()
                           : Error(ErrorCode::kInvalidArgument, "this daemon makes no worktrees")));
      }
      // The standard header makes the create idempotent as the body's clientRequestId does.
      if (const std::string_view key = request.Header("idempotency-key");
          !key.empty() && !config->client_request_id)
        config->client_request_id = std::string(key);
      return agents_.Create(std::move(*config), SnapshotReply(std::move(reply)));
    }
    return reply(ErrorResponse(NoEndpoint(request)));
  }
  const SessionId id(seg[2]);
  if (seg.size() == 3) {
    if (request.method == "GET") return agents_.Get(id, SnapshotReply(std::move(reply)));
    if (request.method == "DELETE") {
      const Result<bool> remove = QueryFlag(request.query, "removeWorktree");
      const Result<bool> force = QueryFlag(request.query, "force");
      if (!remove.ok() || !force.ok())
        return reply(ErrorResponse(!remove.ok() ? remove.status() : force.status()));
      // The WorkspaceRoutes took removeWorktree=true, if there are any.
      if (*remove)
        return reply(
            ErrorResponse(Error(ErrorCode::kInvalidArgument, "this daemon makes no worktrees")));
      return agents_.Close(
          id,
          [this, id, reply = std::move(reply)](const Status& status) mutable {
            if (!status.ok()) return reply(ErrorResponse(status));
            agents_.Get(id, SnapshotReply(std::move(reply)));
          },
          ForwardingOf(request));
    }
    return reply(ErrorResponse(NoEndpoint(request)));
  }
  HandleAgentAction(request, id, seg, std::move(reply));
}

void ApiRouter::HandleAgentAction(const HttpRequest& request, const SessionId& id,
                                  const std::vector<std::string>& seg, Reply reply) {
  const std::string& action = seg[3];
  if (request.method == "GET" && seg.size() == 4) {
    if (action == "timeline") return HandleTimeline(request, id, reply);
    if (action == "events") return HandleEventsRead(request, id, reply);
    return reply(ErrorResponse(NoEndpoint(request)));
  }
  if (request.method == "DELETE" && seg.size() == 5 && action == "messages")
    return agents_.CancelQueued(id, seg[4], OkReply(std::move(reply)), ForwardingOf(request));
  if (request.method != "POST") return reply(ErrorResponse(NoEndpoint(request)));
  const runtime::Forwarding forwarding = ForwardingOf(request);
  if (action == "interrupt" && seg.size() == 4)
    return agents_.Interrupt(id, OkReply(reply), forwarding);
  auto body = api::ParseJson(request.body.empty() ? "{}" : request.body);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  if (seg.size() == 5 && action == "permissions") {
    auto answer = api::PermissionReplyFromJson(*body, RequestId(seg[4]));
    if (!answer.ok()) return reply(ErrorResponse(answer.status()));
    return agents_.ReplyPermission(id, std::move(*answer), OkReply(std::move(reply)), forwarding);
  }
  if (seg.size() != 4) return reply(ErrorResponse(NoEndpoint(request)));
  if (action == "messages") {
    auto send = api::SendRequestFromJson(*body);
    if (!send.ok()) return reply(ErrorResponse(send.status()));
    return agents_.Send(
        id, std::move(*send),
        [reply = std::move(reply)](auto result) {
          if (!result.ok()) return reply(ErrorResponse(result.status()));
          reply(JsonValueResponse(api::SendReplyToJson(*result)));
        },
        forwarding);
  }
  if (action == "mode" || action == "model" || action == "thinking") {
    auto value = api::StringBodyFromJson(*body, action);
    if (!value.ok()) return reply(ErrorResponse(value.status()));
    if (action == "mode")
      return agents_.SetMode(id, std::move(*value), OkReply(std::move(reply)), forwarding);
    if (action == "thinking")
      return agents_.SetThinking(id, std::move(*value), OkReply(std::move(reply)), forwarding);
    return agents_.SetModel(id, std::move(*value), OkReply(std::move(reply)), forwarding);
  }
  if (action == "title") {
    auto title = api::StringBodyFromJson(*body, "title", {}, /*allow_empty=*/true);
    if (!title.ok()) return reply(ErrorResponse(title.status()));
    return agents_.Rename(id, std::move(*title), SnapshotReply(std::move(reply)), forwarding);
  }
  if (action == "fork" || action == "rewind") {
    auto cursor = api::CursorBodyFromJson(*body);
    if (!cursor.ok()) return reply(ErrorResponse(cursor.status()));
    if (action == "fork") return agents_.Fork(id, *cursor, SnapshotReply(std::move(reply)));
    return agents_.Rewind(id, *cursor, SnapshotReply(std::move(reply)), forwarding);
  }
  reply(ErrorResponse(NoEndpoint(request)));
}

void ApiRouter::HandleTimeline(const HttpRequest& request, const SessionId& id,
                               const Reply& reply) {
  auto page_request = ParsePageQuery(request.query);
  if (!page_request.ok()) return reply(ErrorResponse(page_request.status()));
  auto page = timeline_.Page(id, *page_request);
  if (!page.ok()) return reply(ErrorResponse(page.status()));
  reply(JsonValueResponse(api::PageToJson(*page)));
}

void ApiRouter::HandleEventsRead(const HttpRequest& request, const SessionId& id,
                                 const Reply& reply) {
  auto query = ResolveEventsQuery(log_, id, request);
  if (!query.ok()) return reply(ErrorResponse(query.status()));
  bool has_newer = false;
  auto batch =
      ReadBatch(log_, id, query->after.epoch, query->after.seq.next(), read_limits_, &has_newer);
  if (!batch.ok()) return reply(ErrorResponse(batch.status()));
  reply(EventsResponse(*query, **batch, has_newer));
}

}  // namespace agentstream::server
