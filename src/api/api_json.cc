#include "api/api_json.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "core/json_fields.h"
#include "core/timeline/item.h"
#include "core/utf8.h"

namespace agentstream::api {

namespace json = boost::json;

namespace {

Status Invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

Result<const json::object*> AsObject(const json::value& value, std::string_view what) {
  if (!value.is_object()) return Invalid(std::string(what) + " must be a JSON object");
  return &value.get_object();
}

// A required string member; `allow_empty` false refuses "".
Result<std::string> RequiredString(const json::object& obj, std::string_view name,
                                   bool allow_empty = false) {
  const json::value* v = obj.if_contains(name);
  if (v == nullptr) return Invalid(std::string(name) + " is missing");
  if (!v->is_string()) return Invalid(std::string(name) + " must be a string");
  if (!allow_empty && v->get_string().empty())
    return Invalid(std::string(name) + " must not be empty");
  return std::string(v->get_string());
}

// An optional string member: absent or null yields nullopt.
Result<std::optional<std::string>> OptionalString(const json::object& obj, std::string_view name) {
  const json::value* v = obj.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::string>();
  if (!v->is_string()) return Invalid(std::string(name) + " must be a string");
  return std::optional<std::string>(std::string(v->get_string()));
}

Result<bool> OptionalBool(const json::object& obj, std::string_view name) {
  const json::value* v = obj.if_contains(name);
  if (v == nullptr || v->is_null()) return false;
  if (!v->is_bool()) return Invalid(std::string(name) + " must be a boolean");
  return v->get_bool();
}

Result<Cursor> CursorOf(const json::object& obj, std::string_view name) {
  AS_ASSIGN_OR_RETURN(std::string text, RequiredString(obj, name));
  Cursor cursor;
  if (!ParseCursor(text, &cursor))
    return Invalid(std::string(name) + " must be a cursor EPOCH:SEQ, got \"" + text + "\"");
  return cursor;
}

void PutOptional(json::object& out, std::string_view name, const std::optional<std::string>& v) {
  if (v) out[name] = *v;
}

json::object AttachmentToJson(const Attachment& a) {
  json::object out{{"kind", a.kind}, {"mimeType", a.mime_type}};
  PutOptional(out, "name", a.name);
  PutOptional(out, "uri", a.uri);
  PutOptional(out, "data", a.data);
  return out;
}

// The members of each request body (json_members.h).
constexpr std::string_view kAgentConfigMembers[] = {
    "provider", "cwd", "model", "mode", "title", "clientRequestId", "worktree"};
constexpr std::string_view kWorktreeMembers[] = {"branch", "base"};
constexpr std::string_view kSendMembers[] = {"text", "clientMessageId", "attachments",
                                             "whileRunning"};
constexpr std::string_view kAttachmentMembers[] = {"kind", "mimeType", "name", "uri", "data"};
constexpr std::string_view kPermissionReplyMembers[] = {"decision", "optionId", "message"};

Result<Attachment> AttachmentFromJson(const json::value& value) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "an attachment"));
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(*obj, kAttachmentMembers, "an attachment"));
  Attachment a;
  AS_ASSIGN_OR_RETURN(a.kind, RequiredString(*obj, "kind"));
  AS_ASSIGN_OR_RETURN(a.mime_type, RequiredString(*obj, "mimeType", /*allow_empty=*/true));
  AS_ASSIGN_OR_RETURN(a.name, OptionalString(*obj, "name"));
  AS_ASSIGN_OR_RETURN(a.uri, OptionalString(*obj, "uri"));
  AS_ASSIGN_OR_RETURN(a.data, OptionalString(*obj, "data"));
  return a;
}

template <class E, std::size_t N>
Result<E> EnumFromName(const json::object& obj, std::string_view name,
                       const std::pair<E, std::string_view> (&names)[N], E fallback) {
  const json::value* v = obj.if_contains(name);
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_string()) {
    for (const auto& [value, text] : names)
      if (text == v->get_string()) return value;
  }
  std::string list;
  for (const auto& entry : names) list += (list.empty() ? "" : ", ") + std::string(entry.second);
  return Invalid(std::string(name) + " must be one of " + list);
}

constexpr std::pair<turn::SessionStatus, std::string_view> kStatusNames[] = {
    {turn::SessionStatus::kIdle, "idle"},
    {turn::SessionStatus::kRunning, "running"},
    {turn::SessionStatus::kPermission, "permission"},
    {turn::SessionStatus::kError, "error"}};
constexpr std::pair<turn::SubmissionOutcome, std::string_view> kOutcomeNames[] = {
    {turn::SubmissionOutcome::kAccepted, "accepted"},
    {turn::SubmissionOutcome::kQueued, "queued"},
    {turn::SubmissionOutcome::kDuplicate, "duplicate"},
    {turn::SubmissionOutcome::kRejected, "rejected"},
    {turn::SubmissionOutcome::kCanceled, "canceled"}};
constexpr std::pair<turn::WhileRunning, std::string_view> kWhileRunningNames[] = {
    {turn::WhileRunning::kQueue, "queue"},
    {turn::WhileRunning::kInterrupt, "interrupt"},
    {turn::WhileRunning::kSteer, "steer"}};
constexpr std::pair<PermissionDecision, std::string_view> kDecisionNames[] = {
    {PermissionDecision::kAllow, "allow"}, {PermissionDecision::kDeny, "deny"}};

template <class E, std::size_t N>
std::string_view NameOf(E value, const std::pair<E, std::string_view> (&names)[N]) {
  for (const auto& [v, text] : names)
    if (v == value) return text;
  return "unknown";
}

Result<std::vector<QueuedPrompt>> QueueFromJson(const json::object& obj) {
  std::vector<QueuedPrompt> out;
  const json::value* v = obj.if_contains("queue");
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) return Invalid("queue must be an array");
  for (const json::value& entry : v->get_array()) {
    AS_ASSIGN_OR_RETURN(const json::object* e, AsObject(entry, "a queue entry"));
    QueuedPrompt prompt;
    AS_ASSIGN_OR_RETURN(prompt.client_message_id, RequiredString(*e, "clientMessageId"));
    AS_ASSIGN_OR_RETURN(prompt.text, RequiredString(*e, "text", /*allow_empty=*/true));
    out.push_back(std::move(prompt));
  }
  return out;
}

Result<std::vector<PendingPermissionInfo>> PermissionsFromJson(const json::object& obj) {
  std::vector<PendingPermissionInfo> out;
  const json::value* v = obj.if_contains("permissions");
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) return Invalid("permissions must be an array");
  for (const json::value& entry : v->get_array()) {
    AS_ASSIGN_OR_RETURN(const json::object* e, AsObject(entry, "a permission"));
    PendingPermissionInfo info;
    AS_ASSIGN_OR_RETURN(std::string request_id, RequiredString(*e, "requestId"));
    info.request_id = RequestId(std::move(request_id));
    AS_ASSIGN_OR_RETURN(std::optional<std::string> call_id, OptionalString(*e, "callId"));
    if (call_id && !call_id->empty()) info.call_id = ToolCallId(std::move(*call_id));
    AS_ASSIGN_OR_RETURN(info.tool_name, RequiredString(*e, "toolName", /*allow_empty=*/true));
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::optional<HistoryBase>> ForkedFromJson(const json::object& obj) {
  const json::value* v = obj.if_contains("forkedFrom");
  if (v == nullptr || v->is_null()) return std::optional<HistoryBase>();
  AS_ASSIGN_OR_RETURN(const json::object* f, AsObject(*v, "forkedFrom"));
  AS_ASSIGN_OR_RETURN(std::string agent, RequiredString(*f, "agent"));
  AS_ASSIGN_OR_RETURN(Cursor at, CursorOf(*f, "cursor"));
  return std::optional<HistoryBase>(HistoryBase{SessionId(std::move(agent)), at.epoch, at.seq});
}

}  // namespace

Result<json::value> ParseJson(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes)
    return Error(ErrorCode::kTooLarge,
                 "the JSON body is larger than " + std::to_string(max_bytes) + " bytes");
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) return Invalid("the body is not valid JSON: " + ec.message());
  return value;
}

std::string_view StatusName(turn::SessionStatus status) { return NameOf(status, kStatusNames); }
std::string_view OutcomeName(turn::SubmissionOutcome o) { return NameOf(o, kOutcomeNames); }
std::string_view WhileRunningName(turn::WhileRunning m) { return NameOf(m, kWhileRunningNames); }

json::object AgentConfigToJson(const AgentConfig& config) {
  json::object out{{"provider", config.provider}, {"cwd", config.cwd}};
  PutOptional(out, "model", config.model);
  PutOptional(out, "mode", config.mode);
  PutOptional(out, "title", config.title);
  PutOptional(out, "clientRequestId", config.client_request_id);
  return out;
}

Result<AgentConfig> AgentConfigFromJson(const json::value& value, MemberNames envelope) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the agent config"));
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(*obj, kAgentConfigMembers, "the agent config", envelope));
  AgentConfig config;
  AS_ASSIGN_OR_RETURN(config.provider, RequiredString(*obj, "provider"));
  AS_ASSIGN_OR_RETURN(config.cwd, RequiredString(*obj, "cwd"));
  AS_ASSIGN_OR_RETURN(config.model, OptionalString(*obj, "model"));
  AS_ASSIGN_OR_RETURN(config.mode, OptionalString(*obj, "mode"));
  AS_ASSIGN_OR_RETURN(config.title, OptionalString(*obj, "title"));
  AS_ASSIGN_OR_RETURN(config.client_request_id, OptionalString(*obj, "clientRequestId"));
  return config;
}

Result<std::optional<workspace::WorktreeRequest>> WorktreeRequestFromJson(const json::value& body) {
  using Request = std::optional<workspace::WorktreeRequest>;
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(body, "the agent config"));
  const json::value* member = obj->if_contains("worktree");
  if (member == nullptr || member->is_null() || (member->is_bool() && !member->get_bool()))
    return Request();
  if (member->is_bool()) return Request(workspace::WorktreeRequest{});
  if (!member->is_object()) return Invalid("worktree must be true or an object {branch?, base?}");
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(member->get_object(), kWorktreeMembers, "worktree"));
  workspace::WorktreeRequest request;
  AS_ASSIGN_OR_RETURN(request.branch, OptionalString(member->get_object(), "branch"));
  AS_ASSIGN_OR_RETURN(request.base, OptionalString(member->get_object(), "base"));
  for (const auto* field : {&request.branch, &request.base}) {
    if (*field && (*field)->empty()) return Invalid("worktree branch and base must not be empty");
  }
  return Request(std::move(request));
}

json::object WorktreeRequestToJson(const workspace::WorktreeRequest& request) {
  json::object out;
  PutOptional(out, "branch", request.branch);
  PutOptional(out, "base", request.base);
  return out;
}

json::object AgentSnapshotToJson(const AgentSnapshot& s) {
  json::array queue;
  for (const auto& q : s.queue)
    queue.push_back(json::object{{"clientMessageId", q.client_message_id}, {"text", q.text}});
  json::array permissions;
  for (const auto& p : s.permissions) {
    json::object entry{{"requestId", p.request_id.str()}, {"toolName", p.tool_name}};
    entry["callId"] = p.call_id ? json::value(p.call_id->str()) : json::value(nullptr);
    permissions.push_back(std::move(entry));
  }
  json::object out{{"id", s.id.str()},
                   {"provider", s.provider},
                   {"cwd", s.cwd},
                   {"title", s.title},
                   {"model", s.model},
                   {"mode", s.mode},
                   {"thinking", s.thinking},
                   {"status", StatusName(s.status)},
                   {"cursor", FormatCursor(s.cursor)},
                   {"queue", std::move(queue)},
                   {"permissions", std::move(permissions)},
                   {"createdAt", s.created_ms},
                   {"loaded", s.loaded},
                   {"closed", s.closed}};
  out["owner"] = s.owner.empty() ? json::value(nullptr) : json::value(s.owner);
  out["usage"] = s.usage ? json_fields::ToJson(*s.usage) : json::value(nullptr);
  out["activeTurn"] = s.active_turn ? json::value(s.active_turn->str()) : json::value(nullptr);
  out["capabilities"] =
      s.capabilities ? json_fields::ToJson(*s.capabilities) : json::value(nullptr);
  if (s.forked_from) {
    out["forkedFrom"] =
        json::object{{"agent", s.forked_from->session.str()},
                     {"cursor", FormatCursor(Cursor{s.forked_from->epoch, s.forked_from->seq})}};
  } else {
    out["forkedFrom"] = nullptr;
  }
  if (!s.imported.empty()) out["imported"] = s.imported;
  return out;
}

Result<AgentSnapshot> AgentSnapshotFromJson(const json::value& value) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the agent snapshot"));
  AgentSnapshot s;
  AS_ASSIGN_OR_RETURN(std::string id, RequiredString(*obj, "id"));
  s.id = SessionId(std::move(id));
  AS_ASSIGN_OR_RETURN(s.provider, RequiredString(*obj, "provider", true));
  AS_ASSIGN_OR_RETURN(s.cwd, RequiredString(*obj, "cwd", true));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> title, OptionalString(*obj, "title"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> model, OptionalString(*obj, "model"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> mode, OptionalString(*obj, "mode"));
  s.title = title.value_or("");
  s.model = model.value_or("");
  s.mode = mode.value_or("");
  AS_ASSIGN_OR_RETURN(std::optional<std::string> thinking, OptionalString(*obj, "thinking"));
  s.thinking = thinking.value_or("");
  AS_ASSIGN_OR_RETURN(s.status, EnumFromName(*obj, "status", kStatusNames, s.status));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> turn, OptionalString(*obj, "activeTurn"));
  if (turn && !turn->empty()) s.active_turn = TurnId(std::move(*turn));
  AS_ASSIGN_OR_RETURN(s.cursor, CursorOf(*obj, "cursor"));
  AS_ASSIGN_OR_RETURN(s.queue, QueueFromJson(*obj));
  AS_ASSIGN_OR_RETURN(s.permissions, PermissionsFromJson(*obj));
  if (const json::value* created = obj->if_contains("createdAt")) {
    if (!created->is_int64() && !created->is_uint64())
      return Invalid("createdAt must be an integer");
    s.created_ms = created->to_number<TimestampMs>();
  }
  AS_ASSIGN_OR_RETURN(s.forked_from, ForkedFromJson(*obj));
  AS_ASSIGN_OR_RETURN(s.loaded, OptionalBool(*obj, "loaded"));
  AS_ASSIGN_OR_RETURN(s.closed, OptionalBool(*obj, "closed"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> owner, OptionalString(*obj, "owner"));
  s.owner = owner.value_or("");
  AS_ASSIGN_OR_RETURN(std::optional<std::string> imported, OptionalString(*obj, "imported"));
  s.imported = imported.value_or("");
  if (const json::value* usage = obj->if_contains("usage"); usage && !usage->is_null()) {
    json_fields::DecodeError error;
    Usage totals;
    if (!json_fields::FromJson(*usage, totals, error))
      return Invalid("usage: " + error.path + " " + error.what);
    s.usage = totals;
  }
  if (const json::value* c = obj->if_contains("capabilities"); c && !c->is_null()) {
    json_fields::DecodeError error;
    CapabilitiesChanged capabilities;
    if (!json_fields::FromJson(*c, capabilities, error))
      return Invalid("capabilities: " + error.path + " " + error.what);
    s.capabilities = std::move(capabilities);
  }
  return s;
}

json::object SendRequestToJson(const SendRequest& request) {
  json::object out{{"text", request.text},
                   {"clientMessageId", request.client_message_id},
                   {"whileRunning", WhileRunningName(request.while_running)}};
  if (!request.attachments.empty()) {
    json::array attachments;
    for (const Attachment& a : request.attachments) attachments.push_back(AttachmentToJson(a));
    out["attachments"] = std::move(attachments);
  }
  return out;
}

Result<SendRequest> SendRequestFromJson(const json::value& value, MemberNames envelope) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the message"));
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(*obj, kSendMembers, "the message", envelope));
  SendRequest request;
  AS_ASSIGN_OR_RETURN(request.client_message_id, RequiredString(*obj, "clientMessageId"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> text, OptionalString(*obj, "text"));
  request.text = text.value_or("");
  if (const json::value* list = obj->if_contains("attachments"); list && !list->is_null()) {
    if (!list->is_array()) return Invalid("attachments must be an array");
    for (const json::value& entry : list->get_array()) {
      AS_ASSIGN_OR_RETURN(Attachment a, AttachmentFromJson(entry));
      request.attachments.push_back(std::move(a));
    }
  }
  if (request.text.empty() && request.attachments.empty())
    return Invalid("text must not be empty when there are no attachments");
  AS_ASSIGN_OR_RETURN(request.while_running, EnumFromName(*obj, "whileRunning", kWhileRunningNames,
                                                          turn::WhileRunning::kQueue));
  return request;
}

json::object SendReplyToJson(const SendReply& reply) {
  json::object out{{"accepted", reply.accepted},
                   {"outcome", OutcomeName(reply.outcome)},
                   {"cursor", FormatCursor(reply.cursor)},
                   {"message", reply.message}};
  out["turnId"] = reply.turn ? json::value(reply.turn->str()) : json::value(nullptr);
  return out;
}

Result<SendReply> SendReplyFromJson(const json::value& value) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the send reply"));
  SendReply reply;
  AS_ASSIGN_OR_RETURN(reply.accepted, OptionalBool(*obj, "accepted"));
  AS_ASSIGN_OR_RETURN(reply.outcome, EnumFromName(*obj, "outcome", kOutcomeNames,
                                                  turn::SubmissionOutcome::kAccepted));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> turn, OptionalString(*obj, "turnId"));
  if (turn && !turn->empty()) reply.turn = TurnId(std::move(*turn));
  AS_ASSIGN_OR_RETURN(reply.cursor, CursorOf(*obj, "cursor"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> message, OptionalString(*obj, "message"));
  reply.message = message.value_or("");
  return reply;
}

json::object PermissionReplyToJson(const turn::ReplyPermission& reply) {
  json::object out{{"decision", NameOf(reply.decision, kDecisionNames)}};
  PutOptional(out, "optionId", reply.option_id);
  PutOptional(out, "message", reply.message);
  return out;
}

Result<turn::ReplyPermission> PermissionReplyFromJson(const json::value& value,
                                                      RequestId request_id, MemberNames envelope) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the permission reply"));
  AS_RETURN_IF_ERROR(
      RefuseUnknownMembers(*obj, kPermissionReplyMembers, "the permission reply", envelope));
  if (request_id.empty()) return Invalid("requestId must not be empty");
  if (obj->if_contains("decision") == nullptr) return Invalid("decision is missing");
  turn::ReplyPermission reply;
  reply.request_id = std::move(request_id);
  AS_ASSIGN_OR_RETURN(reply.decision,
                      EnumFromName(*obj, "decision", kDecisionNames, PermissionDecision::kDeny));
  AS_ASSIGN_OR_RETURN(reply.option_id, OptionalString(*obj, "optionId"));
  AS_ASSIGN_OR_RETURN(reply.message, OptionalString(*obj, "message"));
  return reply;
}

Result<std::string> StringMember(const json::value& value, std::string_view name) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the body"));
  return RequiredString(*obj, name);
}

Result<Cursor> CursorMember(const json::value& value, std::string_view name) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the body"));
  return CursorOf(*obj, name);
}

Result<std::string> StringBodyFromJson(const json::value& value, std::string_view name,
                                       MemberNames envelope, bool allow_empty) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the body"));
  const std::string_view known[] = {name};
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(*obj, known, "the body", envelope));
  return RequiredString(*obj, name, allow_empty);
}

Result<Cursor> CursorBodyFromJson(const json::value& value, MemberNames envelope) {
  AS_ASSIGN_OR_RETURN(const json::object* obj, AsObject(value, "the body"));
  constexpr std::string_view kKnown[] = {"cursor"};
  AS_RETURN_IF_ERROR(RefuseUnknownMembers(*obj, kKnown, "the body", envelope));
  return CursorOf(*obj, "cursor");
}

json::object ErrorToJson(const Status& status) {
  // A message may quote a client's bytes (a path, an id); JSON text must be valid UTF-8.
  return json::object{{"error", json::object{{"code", ErrorCodeName(status.code())},
                                             {"message", SanitizeUtf8(status.message())}}}};
}

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return 200;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kSequenceGap:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
    case ErrorCode::kFenced:
      return 409;
    case ErrorCode::kTooLarge:
      return 413;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kMisdirected:
      return 421;
    case ErrorCode::kUnsupportedVersion:
    case ErrorCode::kCorruption:
    case ErrorCode::kIoError:
    case ErrorCode::kInternal:
      return 500;
    case ErrorCode::kUnavailable:
      return 503;
  }
  return 500;
}

ErrorCode ErrorCodeFromName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    if (ErrorCodeName(code) == name) return code;
  }
  return ErrorCode::kInternal;
}

Status ErrorFromJson(const json::value& value, int http_status) {
  if (value.is_object()) {
    const json::value* err = value.get_object().if_contains("error");
    if (err != nullptr && err->is_object()) {
      const json::object& e = err->get_object();
      const json::value* code = e.if_contains("code");
      const json::value* message = e.if_contains("message");
      ErrorCode c =
          code && code->is_string() ? ErrorCodeFromName(code->get_string()) : ErrorCode::kInternal;
      if (c == ErrorCode::kOk) c = ErrorCode::kInternal;
      return Error(c, message && message->is_string() ? std::string(message->get_string()) : "");
    }
  }
  ErrorCode c = ErrorCode::kInternal;
  switch (http_status) {
    case 400:
      c = ErrorCode::kInvalidArgument;
      break;
    case 401:
      c = ErrorCode::kUnauthenticated;
      break;
    case 404:
      c = ErrorCode::kNotFound;
      break;
    case 409:
      c = ErrorCode::kConflict;
      break;
    case 413:
      c = ErrorCode::kTooLarge;
      break;
    case 429:
      c = ErrorCode::kResourceExhausted;
      break;
    case 503:
      c = ErrorCode::kUnavailable;
      break;
    default:
      break;
  }
  return Error(c, "HTTP " + std::to_string(http_status) + ": " + json::serialize(value));
}

json::object PageToJson(const timeline::Page& page) {
  json::array items;
  items.reserve(page.items.size());
  for (const timeline::ProjectedItem& item : page.items)
    items.push_back(timeline::ItemToJson(item));
  return json::object{{"epoch", page.epoch.value()},
                      {"tail", page.tail.value()},
                      {"items", std::move(items)},
                      {"hasOlder", page.has_older},
                      {"hasNewer", page.has_newer},
                      {"startCursor", FormatCursor(page.start_cursor)},
                      {"endCursor", FormatCursor(page.end_cursor)},
                      {"reset", page.reset},
                      {"bytes", page.bytes}};
}

}  // namespace agentstream::api
