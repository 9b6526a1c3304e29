#include "runtime/session_records.h"

#include <algorithm>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/json_fields.h"
#include "core/turn/turn_state_codec.h"
#include "system/random_id.h"

namespace agentstream::runtime {

namespace json = boost::json;

namespace {

std::optional<json::object> ParseObject(std::string_view text) {
  if (text.empty()) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

std::string StringField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

std::string EncodeStatusRecord(const StatusRecord& record) {
  json::object o;
  if (record.status) o["status"] = std::string(turn::SessionStatusName(*record.status));
  o["closed"] = record.closed;
  if (!record.model.empty()) o["model"] = record.model;
  if (!record.mode.empty()) o["mode"] = record.mode;
  if (record.queued) o["queued"] = true;
  if (!record.imported.empty()) o["imported"] = record.imported;
  return json::serialize(o);
}

StatusRecord DecodeStatusRecord(std::string_view text) {
  StatusRecord record;
  std::optional<json::object> o = ParseObject(text);
  if (!o) return record;
  const std::string status = StringField(*o, "status");
  for (auto s : {turn::SessionStatus::kIdle, turn::SessionStatus::kRunning,
                 turn::SessionStatus::kPermission, turn::SessionStatus::kError}) {
    if (turn::SessionStatusName(s) == status) record.status = s;
  }
  const json::value* closed = o->if_contains("closed");
  record.closed = closed && closed->is_bool() && closed->as_bool();
  record.model = StringField(*o, "model");
  record.mode = StringField(*o, "mode");
  const json::value* queued = o->if_contains("queued");
  record.queued = queued && queued->is_bool() && queued->as_bool();
  record.imported = StringField(*o, "imported");
  return record;
}

bool MayHaveOpenTurn(const StatusRecord& record) {
  return !record.status || record.queued || *record.status == turn::SessionStatus::kRunning ||
         *record.status == turn::SessionStatus::kPermission;
}

std::string EncodeHandle(const providers::PersistenceHandle& handle) {
  return json::serialize(json::object{
      {"provider", handle.provider}, {"sessionId", handle.session_id}, {"cwd", handle.cwd}});
}

std::optional<providers::PersistenceHandle> DecodeHandle(std::string_view text) {
  std::optional<json::object> o = ParseObject(text);
  if (!o) return std::nullopt;
  providers::PersistenceHandle handle{StringField(*o, "provider"), StringField(*o, "sessionId"),
                                      StringField(*o, "cwd")};
  if (handle.provider.empty()) return std::nullopt;
  return handle;
}

Status ForEachEvent(EventLog& log, const SessionId& session, Epoch epoch, Seq from, Seq through,
                    const std::function<void(Event)>& fn) {
  Seq next = std::max(from, Seq(1));
  while (through.value() == 0 || next <= through) {
    const ReadRequest request{session, epoch,     ReadDirection::kForward,
                              next,    kReadPage, std::size_t{16} << 20};
    AS_ASSIGN_OR_RETURN(ReadResult page, log.Read(request));
    for (const EventRecord& record : page.events) {
      if (through.value() != 0 && record.seq > through) return Status::Ok();
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      fn(std::move(event));
    }
    if (page.events.empty() || !page.has_newer) break;
    next = page.events.back().seq.next();
  }
  return Status::Ok();
}

Result<std::vector<Event>> ReadEpoch(EventLog& log, const SessionId& session, Epoch epoch,
                                     Seq through) {
  std::vector<Event> events;
  AS_RETURN_IF_ERROR(ForEachEvent(log, session, epoch, Seq(1), through,
                                  [&](Event e) { events.push_back(std::move(e)); }));
  return events;
}

std::vector<NewEvent> CancelOpenTurns(const turn::TurnState& state, const std::string& reason) {
  std::vector<NewEvent> out;
  for (const auto& [id, run] : state.open) out.push_back(MakeNewEvent(TurnCanceled{reason}, id));
  for (NewEvent& e : CancelQueuedPrompts(state, reason)) out.push_back(std::move(e));
  return out;
}

std::vector<NewEvent> CancelQueuedPrompts(const turn::TurnState& state, const std::string& reason) {
  std::vector<NewEvent> out;
  if (state.pending_after_teardown) {
    out.push_back(
        MakeNewEvent(PromptCanceled{state.pending_after_teardown->client_message_id, reason}));
  }
  for (const turn::SubmitPrompt& p : state.queue)
    out.push_back(MakeNewEvent(PromptCanceled{p.client_message_id, reason}));
  return out;
}

void HistoryFold::Apply(const Event& e) {
  turns.Apply(e);
  if (const auto* created = std::get_if<SessionCreated>(&e.payload)) {
    if (created->model) model = created->model;
    if (created->mode) mode = created->mode;
  } else if (const auto* m = std::get_if<ModelChanged>(&e.payload)) {
    model = m->model;
  } else if (const auto* m = std::get_if<ModeChanged>(&e.payload)) {
    mode = m->mode;
  } else if (const auto* t = std::get_if<ThinkingOptionChanged>(&e.payload)) {
    thinking = t->option;
  } else if (const auto* c = std::get_if<CapabilitiesChanged>(&e.payload)) {
    capabilities = *c;
  }
  through = std::max(through, e.seq);
}

Status FoldHistory(EventLog& log, const SessionId& session, Epoch epoch, Seq through,
                   HistoryFold& fold) {
  return ForEachEvent(log, session, epoch, fold.through.next(), through, [&](const Event& e) {
    fold.Apply(e);
    ++fold.events_read;
  });
}

Result<HistoryFold> LoadHistory(EventLog& log, const SessionId& session, Epoch epoch, Seq through,
                                const std::string& provider) {
  HistoryFold fold;
  AS_ASSIGN_OR_RETURN(std::optional<Checkpoint> stored, log.LoadCheckpoint(session));
  if (stored && stored->epoch == epoch && (through.value() == 0 || stored->seq <= through)) {
    if (Result<HistoryFold> decoded = DecodeCheckpointBody(stored->body, provider); decoded.ok()) {
      fold = std::move(*decoded);
      fold.through = stored->seq;
      fold.from_checkpoint = true;
    }
  }
  if (!fold.from_checkpoint) {
    turn::TurnState initial;
    initial.provider = provider;
    fold.turns = turn::TurnStateFold(std::move(initial));
  }
  AS_RETURN_IF_ERROR(FoldHistory(log, session, epoch, through, fold));
  return fold;
}

Status SaveHistoryCheckpoint(EventLog& log, const SessionId& session, Epoch epoch,
                             const HistoryFold& fold) {
  return log.SaveCheckpoint(session, Checkpoint{epoch, fold.through, EncodeCheckpointBody(fold)});
}

namespace {
constexpr std::int64_t kCheckpointVersion = 1;
}  // namespace

std::string EncodeCheckpointBody(const HistoryFold& fold) {
  json::object o;
  o["v"] = kCheckpointVersion;
  if (fold.model) o["model"] = *fold.model;
  if (fold.mode) o["mode"] = *fold.mode;
  if (fold.thinking) o["thinking"] = *fold.thinking;
  if (fold.capabilities) o["capabilities"] = json_fields::ToJson(*fold.capabilities);
  o["turns"] = turn::TurnStateToJson(fold.turns.state());
  return json::serialize(o);
}

Result<HistoryFold> DecodeCheckpointBody(std::string_view body, const std::string& provider) {
  std::optional<json::object> o = ParseObject(body);
  if (!o) return Error(ErrorCode::kCorruption, "a checkpoint is not a JSON object");
  const json::value* v = o->if_contains("v");
  if (!v || !v->is_int64()) return Error(ErrorCode::kCorruption, "a checkpoint has no version");
  if (v->get_int64() != kCheckpointVersion) {
    return Error(ErrorCode::kUnsupportedVersion,
                 "a checkpoint of version " + std::to_string(v->get_int64()) +
                     "; this build reads version " + std::to_string(kCheckpointVersion));
  }
  const json::value* turns = o->if_contains("turns");
  if (!turns) return Error(ErrorCode::kCorruption, "a checkpoint has no turn state");
  AS_ASSIGN_OR_RETURN(turn::TurnState state, turn::TurnStateFromJson(*turns));
  state.provider = provider;
  HistoryFold fold;
  fold.turns = turn::TurnStateFold(std::move(state));
  if (o->contains("model")) fold.model = StringField(*o, "model");
  if (o->contains("mode")) fold.mode = StringField(*o, "mode");
  if (o->contains("thinking")) fold.thinking = StringField(*o, "thinking");
  if (const json::value* c = o->if_contains("capabilities")) {
    // Unreadable lists are left out: the runtime records its lists again when it is ready.
    CapabilitiesChanged capabilities;
    json_fields::DecodeError err;
    if (json_fields::FromJson(*c, capabilities, err)) fold.capabilities = std::move(capabilities);
  }
  return fold;
}

std::string RandomIds::Next(std::string_view prefix) { return system::RandomId(prefix); }

}  // namespace agentstream::runtime
