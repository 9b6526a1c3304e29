// The JSON shapes of the HTTP and WebSocket surface (docs/protocol.md), shared by the server and
// the CLI client: agent configs and snapshots, submissions and their replies, permission replies,
// errors and timeline pages.
//
// Pure functions over Boost.JSON values: no I/O, thread-safe. Encoders never fail. Decoders
// validate every field they read and return kInvalidArgument with a message that names the field
// ("whileRunning must be one of queue, interrupt, steer").
//
// The decoders of what clients send (agent config with its worktree, send request, permission
// reply, the one-member bodies) are strict: a member they do not define is refused, naming it
// (json_members.h), so that a misspelt option ("worktre") is an error, never a silent default.
// Their `envelope` names the members a transport puts beside the body's own (the WebSocket
// message's "type", "id", "agent"); HTTP bodies have none. The decoders of what the daemon
// answers (snapshots, send replies) ignore unknown members, so that a newer daemon's answer
// still reads.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "api/agent_types.h"
#include "api/json_members.h"
#include "core/ids.h"
#include "core/status.h"
#include "core/timeline/pager.h"
#include "core/turn/command.h"
#include "workspace/workspace_types.h"

namespace agentstream::api {

// Request bodies larger than this are refused before they are parsed (HTTP and WebSocket).
inline constexpr std::size_t kMaxRequestJsonBytes = std::size_t{1} << 20;

// Parses `text` as one JSON value. kInvalidArgument for malformed JSON or text over `max_bytes`.
Result<boost::json::value> ParseJson(std::string_view text,
                                     std::size_t max_bytes = kMaxRequestJsonBytes);

// ---- Agents ----

// {provider, cwd, model?, mode?, title?, clientRequestId?}. provider and cwd are required,
// non-empty strings. The decoder reads a create body: it also accepts `worktree`
// (WorktreeRequestFromJson reads it) and refuses any other member.
boost::json::object AgentConfigToJson(const AgentConfig& config);
Result<AgentConfig> AgentConfigFromJson(const boost::json::value& json, MemberNames envelope = {});

// The `worktree` member of a create body: absent or null (nullopt), true or {} (a worktree with
// the defaults), or {branch?, base?} with non-empty strings and no other member.
// kInvalidArgument otherwise.
Result<std::optional<workspace::WorktreeRequest>> WorktreeRequestFromJson(
    const boost::json::value& body);
boost::json::object WorktreeRequestToJson(const workspace::WorktreeRequest& request);

// {id, provider, cwd, title, model, mode, status: idle|running|permission|error,
//  activeTurn: string|null, cursor: "E:S", queue: [{clientMessageId, text}],
//  permissions: [{requestId, callId, toolName}], createdAt (ms since the epoch),
//  forkedFrom: {agent, cursor}|null, loaded, closed, owner: the daemon running it|null,
//  usage: {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd?}|null}.
boost::json::object AgentSnapshotToJson(const AgentSnapshot& snapshot);
Result<AgentSnapshot> AgentSnapshotFromJson(const boost::json::value& json);

// "idle", "running", "permission", "error".
std::string_view StatusName(turn::SessionStatus status);

// ---- Submissions ----

// {text, clientMessageId, attachments?, whileRunning?: queue|interrupt|steer}. clientMessageId
// is required and non-empty; text may be empty when attachments are given. An attachment is
// {kind, mimeType, name?, uri?, data?}. Strict, as the file comment says.
boost::json::object SendRequestToJson(const SendRequest& request);
Result<SendRequest> SendRequestFromJson(const boost::json::value& json, MemberNames envelope = {});

// {accepted, outcome: accepted|queued|duplicate|rejected|canceled, turnId: string|null,
//  cursor: "E:S", message}.
boost::json::object SendReplyToJson(const SendReply& reply);
Result<SendReply> SendReplyFromJson(const boost::json::value& json);

std::string_view OutcomeName(turn::SubmissionOutcome outcome);
std::string_view WhileRunningName(turn::WhileRunning mode);

// ---- Permissions ----

// {decision: allow|deny, optionId?, message?}. The request id is not part of the body (it is in
// the URL, or the WebSocket message's "requestId", which is then in `envelope`), so the decoder
// takes it. Strict, as the file comment says.
boost::json::object PermissionReplyToJson(const turn::ReplyPermission& reply);
Result<turn::ReplyPermission> PermissionReplyFromJson(const boost::json::value& json,
                                                      RequestId request_id,
                                                      MemberNames envelope = {});

// ---- Small bodies ----

// The non-empty string member `name` of the object `json`; other members are ignored (for
// reading the daemon's answers).
Result<std::string> StringMember(const boost::json::value& json, std::string_view name);
// The cursor member `name` ("EPOCH:SEQ") of the object `json`; other members are ignored.
Result<Cursor> CursorMember(const boost::json::value& json, std::string_view name);
// A request body of the one string member `name` and nothing else (besides `envelope`): {mode},
// {model}, {title}. The string must not be empty unless `allow_empty` (a title: "" clears it).
Result<std::string> StringBodyFromJson(const boost::json::value& json, std::string_view name,
                                       MemberNames envelope = {}, bool allow_empty = false);
// A request body {cursor: "EPOCH:SEQ"} and nothing else (besides `envelope`): fork and rewind.
Result<Cursor> CursorBodyFromJson(const boost::json::value& json, MemberNames envelope = {});

// ---- Errors ----

// {"error":{"code":"not_found","message":"..."}} for a non-OK status; the message is made valid
// UTF-8 (ill-formed sequences replaced by U+FFFD).
boost::json::object ErrorToJson(const Status& status);
// The HTTP status that fits an error code (400, 404, 409, 413, 429, 500, 503, ...); 200 for OK.
int HttpStatusFor(ErrorCode code);
// The Status an error body describes, for clients. A body that is not an error object yields
// a Status with the code that fits `http_status` and the body text as message.
Status ErrorFromJson(const boost::json::value& json, int http_status);
// The ErrorCode named `name` ("not_found"), or kInternal for a name this build does not know.
ErrorCode ErrorCodeFromName(std::string_view name);

// ---- Timeline pages ----

// {epoch, tail, items: [item...], hasOlder, hasNewer, startCursor: "E:S", endCursor: "E:S",
//  reset, bytes}; items as timeline::ItemToJson (docs/timeline.md).
boost::json::object PageToJson(const timeline::Page& page);

}  // namespace agentstream::api
