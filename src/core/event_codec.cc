#include "core/event_codec.h"

#include <boost/json.hpp>
#include <string>

#include "core/json_fields.h"

namespace agentstream {

namespace {

namespace json = boost::json;

struct KindEntry {
  EventKind kind;
  std::string_view name;
};

// The names of the wire format. Numbers live in the enum; both are never reused.
constexpr KindEntry kKinds[] = {
    {EventKind::kSessionCreated, "session.created"},
    {EventKind::kSessionForked, "session.forked"},
    {EventKind::kSessionRewound, "session.rewound"},
    {EventKind::kSessionTitled, "session.titled"},
    {EventKind::kSessionImported, "session.imported"},
    {EventKind::kTurnStarted, "turn.started"},
    {EventKind::kTurnCompleted, "turn.completed"},
    {EventKind::kTurnCanceled, "turn.canceled"},
    {EventKind::kTurnFailed, "turn.failed"},
    {EventKind::kUserMessage, "user.message"},
    {EventKind::kPromptQueued, "prompt.queued"},
    {EventKind::kPromptCanceled, "prompt.canceled"},
    {EventKind::kAssistantMessageStart, "assistant.message.start"},
    {EventKind::kAssistantMessageDelta, "assistant.message.delta"},
    {EventKind::kAssistantMessageEnd, "assistant.message.end"},
    {EventKind::kReasoning, "reasoning"},
    {EventKind::kToolCallStart, "tool_call.start"},
    {EventKind::kToolCallOutput, "tool_call.output"},
    {EventKind::kToolCallEnd, "tool_call.end"},
    {EventKind::kPermissionRequested, "permission.requested"},
    {EventKind::kPermissionResolved, "permission.resolved"},
    {EventKind::kPlan, "plan"},
    {EventKind::kModeChanged, "mode.changed"},
    {EventKind::kModelChanged, "model.changed"},
    {EventKind::kThinkingOptionChanged, "thinking_option.changed"},
    {EventKind::kCapabilitiesChanged, "capabilities.changed"},
    {EventKind::kUsage, "usage"},
    {EventKind::kError, "error"},
    {EventKind::kNotice, "notice"},
    {EventKind::kProviderMetadata, "provider.metadata"},
    {EventKind::kAuthorizationRequired, "authorization.required"},
    {EventKind::kAuthorizationCompleted, "authorization.completed"},
    {EventKind::kSubagentEvent, "subagent.event"},
    {EventKind::kWorkspaceCreated, "workspace.created"},
    {EventKind::kWorkspaceRemoved, "workspace.removed"},
    {EventKind::kWorkspaceAction, "workspace.action"},
    {EventKind::kAutomationFired, "automation.fired"},
};

// Decodes the payload alternative whose kind is `kind`.
template <std::size_t I = 0>
bool DecodeAlternative(EventKind kind, const json::value& value, Payload& out,
                       json_fields::DecodeError& err) {
  if constexpr (I == std::variant_size_v<Payload>) {
    return json_fields::Fail(err, "has no decoder");
  } else {
    using Alt = std::variant_alternative_t<I, Payload>;
    if (Alt::kKind != kind) return DecodeAlternative<I + 1>(kind, value, out, err);
    Alt alt;
    if (!json_fields::FromJson(value, alt, err)) return false;
    out = std::move(alt);
    return true;
  }
}

Status InvalidPayload(std::uint16_t kind, const json_fields::DecodeError& err) {
  std::string where = err.path.empty() ? "payload" : "field '" + err.path + "'";
  return Error(
      ErrorCode::kInvalidArgument,
      "payload of " + std::string(EventKindName(EventKind(kind))) + ": " + where + " " + err.what);
}

}  // namespace

std::string_view EventKindName(EventKind kind) {
  for (const auto& entry : kKinds)
    if (entry.kind == kind) return entry.name;
  return {};
}

std::optional<EventKind> EventKindFromName(std::string_view name) {
  for (const auto& entry : kKinds)
    if (entry.name == name) return entry.kind;
  return std::nullopt;
}

bool IsKnownEventKind(std::uint16_t number) {
  return !EventKindName(static_cast<EventKind>(number)).empty();
}

EventKind KindOf(const Payload& payload) {
  return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::kKind; }, payload);
}

std::string EncodePayload(const Payload& payload) {
  return std::visit([](const auto& p) { return json::serialize(json_fields::ToJson(p)); }, payload);
}

NewEvent MakeNewEvent(const Payload& payload, std::optional<TurnId> turn) {
  return NewEvent{KindOf(payload), std::move(turn), EncodePayload(payload)};
}

Result<Payload> DecodePayload(std::uint16_t kind, std::uint32_t format, std::string_view text) {
  if (format > kEventFormatVersion) {
    return Error(ErrorCode::kUnsupportedVersion, "event format " + std::to_string(format) +
                                                     " is newer than this build reads (" +
                                                     std::to_string(kEventFormatVersion) + ")");
  }
  if (format == 0) return Error(ErrorCode::kInvalidArgument, "event format 0 does not exist");
  if (!IsKnownEventKind(kind)) {
    return Error(ErrorCode::kInvalidArgument, "unknown event kind " + std::to_string(kind));
  }
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument, "payload of " +
                                                  std::string(EventKindName(EventKind(kind))) +
                                                  " is not valid JSON: " + ec.message());
  }
  Payload payload;
  json_fields::DecodeError err;
  if (!DecodeAlternative(EventKind(kind), value, payload, err)) return InvalidPayload(kind, err);
  return payload;
}

Status ValidateNewEvent(const NewEvent& event, std::size_t max_payload_bytes) {
  if (event.payload.size() > max_payload_bytes) {
    return Error(ErrorCode::kTooLarge, "event payload is " + std::to_string(event.payload.size()) +
                                           " bytes; the limit is " +
                                           std::to_string(max_payload_bytes));
  }
  if (event.turn && event.turn->empty()) {
    return Error(ErrorCode::kInvalidArgument, "turn id must not be empty");
  }
  auto decoded =
      DecodePayload(static_cast<std::uint16_t>(event.kind), kEventFormatVersion, event.payload);
  return decoded.status();
}

void AddUsage(Usage& sum, const Usage& more) {
  sum.input_tokens += more.input_tokens;
  sum.output_tokens += more.output_tokens;
  sum.cache_read_tokens += more.cache_read_tokens;
  sum.cache_write_tokens += more.cache_write_tokens;
  if (more.cost_usd) sum.cost_usd = sum.cost_usd.value_or(0) + *more.cost_usd;
}

std::optional<Usage> UsageIn(const std::vector<NewEvent>& events) {
  std::optional<Usage> sum;
  for (const NewEvent& event : events) {
    if (event.kind != EventKind::kUsage) continue;
    Result<Payload> payload = DecodePayload(static_cast<std::uint16_t>(EventKind::kUsage),
                                            kEventFormatVersion, event.payload);
    if (!payload.ok()) continue;
    if (!sum) sum = Usage{};
    AddUsage(*sum, std::get<Usage>(*payload));
  }
  return sum;
}

Result<Event> ToEvent(const NewEvent& event, const SessionId& session, Cursor at,
                      TimestampMs time) {
  AS_ASSIGN_OR_RETURN(Payload payload, DecodePayload(static_cast<std::uint16_t>(event.kind),
                                                     kEventFormatVersion, event.payload));
  return Event{session, at.epoch, at.seq, time, event.turn, std::move(payload)};
}

Result<Event> DecodeRecord(const EventRecord& record) {
  auto payload = DecodePayload(record.kind, record.format, record.payload);
  if (!payload.ok()) {
    if (payload.status().code() == ErrorCode::kUnsupportedVersion) return payload.status();
    return Error(ErrorCode::kCorruption, "stored event " + record.session.str() + "@" +
                                             FormatCursor(record.cursor()) + ": " +
                                             payload.status().message());
  }
  return Event{record.session, record.epoch, record.seq,
               record.time,    record.turn,  std::move(payload).value()};
}

json::object EnvelopeToJson(const EventRecord& record) {
  json::object out;
  out["v"] = record.format;
  out["session"] = record.session.str();
  out["epoch"] = record.epoch.value();
  out["seq"] = record.seq.value();
  out["time"] = record.time;
  out["kind"] = EventKindName(EventKind(record.kind));
  if (record.turn) out["turn"] = record.turn->str();
  boost::system::error_code ec;
  json::value payload = json::parse(record.payload, ec);
  out["payload"] = ec ? json::value(nullptr) : std::move(payload);
  return out;
}

std::string EncodeEnvelope(const EventRecord& record) {
  return json::serialize(EnvelopeToJson(record));
}

Result<EventRecord> DecodeEnvelope(std::string_view text) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) {
    return Error(ErrorCode::kInvalidArgument, "event envelope is not a JSON object");
  }
  const json::object& obj = value.get_object();
  auto bad = [](std::string_view field) {
    return Error(ErrorCode::kInvalidArgument,
                 "event envelope: field '" + std::string(field) + "' is missing or malformed");
  };
  const json::value* v = obj.if_contains("v");
  if (v == nullptr || !v->is_number()) return bad("v");
  auto format = v->to_number<std::int64_t>(ec);
  if (ec || format <= 0) return bad("v");
  if (format > kEventFormatVersion) {
    return Error(ErrorCode::kUnsupportedVersion,
                 "event format " + std::to_string(format) + " is newer than this build reads");
  }
  EventRecord record;
  record.format = static_cast<std::uint32_t>(format);
  const json::value* session = obj.if_contains("session");
  if (session == nullptr || !session->is_string() || session->get_string().empty())
    return bad("session");
  record.session = SessionId(std::string(session->get_string()));
  for (auto [name, target] : {std::pair{"epoch", 0}, std::pair{"seq", 1}, std::pair{"time", 2}}) {
    const json::value* n = obj.if_contains(name);
    if (n == nullptr) return bad(name);
    auto number = n->to_number<std::int64_t>(ec);
    if (ec || number < 0) return bad(name);
    if (target == 0) record.epoch = Epoch(number);
    if (target == 1) record.seq = Seq(number);
    if (target == 2) record.time = number;
  }
  const json::value* kind = obj.if_contains("kind");
  if (kind == nullptr || !kind->is_string()) return bad("kind");
  auto parsed_kind = EventKindFromName(kind->get_string());
  if (!parsed_kind) return bad("kind");
  record.kind = static_cast<std::uint16_t>(*parsed_kind);
  if (const json::value* turn = obj.if_contains("turn")) {
    if (!turn->is_string() || turn->get_string().empty()) return bad("turn");
    record.turn = TurnId(std::string(turn->get_string()));
  }
  const json::value* payload = obj.if_contains("payload");
  if (payload == nullptr || !payload->is_object()) return bad("payload");
  record.payload = json::serialize(*payload);
  AS_RETURN_IF_ERROR(DecodePayload(record.kind, record.format, record.payload).status());
  return record;
}

}  // namespace agentstream
