#include "core/turn/turn_state_codec.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/json_fields.h"

namespace agentstream::turn {

namespace json = boost::json;

namespace {

constexpr std::pair<RunPhase, std::string_view> kPhases[] = {
    {RunPhase::kQueued, "queued"},       {RunPhase::kAwaitingResponse, "awaiting_response"},
    {RunPhase::kStreaming, "streaming"}, {RunPhase::kFinalizing, "finalizing"},
    {RunPhase::kCompleted, "completed"}, {RunPhase::kInterrupted, "interrupted"},
    {RunPhase::kError, "error"},
};
constexpr std::pair<WhileRunning, std::string_view> kWhileRunning[] = {
    {WhileRunning::kQueue, "queue"},
    {WhileRunning::kInterrupt, "interrupt"},
    {WhileRunning::kSteer, "steer"},
};

template <class E, std::size_t N>
std::string_view NameOf(const std::pair<E, std::string_view> (&names)[N], E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "";
}

template <class Id>
json::array IdArray(const std::vector<Id>& ids) {
  json::array out;
  out.reserve(ids.size());
  for (const Id& id : ids) out.emplace_back(id.str());
  return out;
}

// Keys sorted, so that equal maps encode to equal text.
template <class Map>
json::object SortedMap(const Map& map) {
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(map.size());
  for (const auto& [key, turn] : map) {
    if constexpr (std::is_same_v<std::decay_t<decltype(key)>, std::string>) {
      entries.emplace_back(key, turn.str());
    } else {
      entries.emplace_back(key.str(), turn.str());
    }
  }
  std::sort(entries.begin(), entries.end());
  json::object out;
  out.reserve(entries.size());
  for (auto& [key, turn] : entries) out.emplace(key, turn);
  return out;
}

json::object RunToJson(const Run& run) {
  json::object o;
  o["id"] = run.id.str();
  o["origin"] = json_fields::ToJson(run.origin);
  o["phase"] = NameOf(kPhases, run.phase);
  if (run.client_message_id) o["clientMessageId"] = *run.client_message_id;
  if (run.task_id) o["taskId"] = *run.task_id;
  o["promptText"] = run.prompt_text;
  o["order"] = run.order;
  json::array pending;
  for (const RequestId& r : run.pending_permissions) pending.emplace_back(r.str());
  o["pendingPermissions"] = std::move(pending);
  o["messageIds"] = IdArray(run.message_ids);
  o["callIds"] = IdArray(run.call_ids);
  o["requestIds"] = IdArray(run.request_ids);
  return o;
}

json::object PromptToJson(const SubmitPrompt& prompt) {
  json::object o;
  o["clientMessageId"] = prompt.client_message_id;
  o["text"] = prompt.text;
  o["attachments"] = json_fields::ToJson(prompt.attachments);
  o["whileRunning"] = NameOf(kWhileRunning, prompt.while_running);
  return o;
}

// Reads fields of one object, remembering the first problem as "path: what".
class Reader {
 public:
  Reader(const json::value& value, std::string path) : path_(std::move(path)) {
    if (const json::object* o = value.if_object()) {
      object_ = o;
    } else {
      Fail("must be an object");
    }
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  const json::value* Field(std::string_view name, bool required = true) {
    if (!ok()) return nullptr;
    const json::value* v = object_->if_contains(name);
    if (!v && required) Fail(std::string(name) + " is missing");
    return v;
  }
  std::string String(std::string_view name) {
    const json::value* v = Field(name);
    if (!v) return {};
    if (!v->is_string()) return Fail(std::string(name) + " must be a string"), std::string();
    return std::string(v->get_string());
  }
  std::optional<std::string> OptionalString(std::string_view name) {
    if (!Field(name, false)) return std::nullopt;
    return String(name);
  }
  std::uint64_t Unsigned(std::string_view name) {
    const json::value* v = Field(name);
    if (!v) return 0;
    if (v->is_uint64()) return v->get_uint64();
    if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
    Fail(std::string(name) + " must be an unsigned integer");
    return 0;
  }
  bool Bool(std::string_view name) {
    const json::value* v = Field(name);
    if (!v) return false;
    if (!v->is_bool()) return Fail(std::string(name) + " must be a boolean"), false;
    return v->get_bool();
  }
  const json::array* Array(std::string_view name) {
    const json::value* v = Field(name);
    if (!v) return nullptr;
    if (!v->is_array()) return Fail(std::string(name) + " must be an array"), nullptr;
    return &v->get_array();
  }
  template <class Id>
  std::vector<Id> Ids(std::string_view name) {
    std::vector<Id> out;
    const json::array* a = Array(name);
    if (!a) return out;
    for (const json::value& v : *a) {
      if (!v.is_string()) return Fail(std::string(name) + " must hold strings"), out;
      out.emplace_back(std::string(v.get_string()));
    }
    return out;
  }
  // A map from names to turn ids; `Key` is std::string or an id type.
  template <class Key, class Map>
  void TurnMap(std::string_view name, Map& out) {
    const json::value* v = Field(name);
    if (!v) return;
    if (!v->is_object()) return Fail(std::string(name) + " must be an object");
    for (const auto& [key, turn] : v->get_object()) {
      if (!turn.is_string()) return Fail(std::string(name) + " must map names to turn ids");
      TurnId id(std::string(turn.get_string()));
      if constexpr (std::is_same_v<Key, std::string>) {
        out.emplace(std::string(key), std::move(id));
      } else {
        out.emplace(Key(std::string(key)), std::move(id));
      }
    }
  }
  template <class E, std::size_t N>
  E Enum(std::string_view name, const std::pair<E, std::string_view> (&names)[N]) {
    const std::string text = String(name);
    for (const auto& [v, n] : names)
      if (n == text) return v;
    if (ok()) Fail(std::string(name) + " names no known value: " + text);
    return names[0].first;
  }
  void Fail(std::string what) {
    if (error_.empty()) error_ = path_ + (path_.empty() ? "" : ": ") + std::move(what);
  }

 private:
  std::string path_;
  const json::object* object_ = nullptr;
  std::string error_;
};

Run RunFromJson(const json::value& value, const std::string& path, std::string* error) {
  Reader r(value, path);
  Run run;
  run.id = TurnId(r.String("id"));
  const std::string origin = r.String("origin");
  run.origin = origin == "autonomous" ? TurnOrigin::kAutonomous : TurnOrigin::kForeground;
  if (r.ok() && origin != "autonomous" && origin != "foreground")
    r.Fail("origin names no known value: " + origin);
  run.phase = r.Enum("phase", kPhases);
  run.client_message_id = r.OptionalString("clientMessageId");
  run.task_id = r.OptionalString("taskId");
  run.prompt_text = r.String("promptText");
  run.order = r.Unsigned("order");
  for (RequestId& id : r.Ids<RequestId>("pendingPermissions"))
    run.pending_permissions.insert(std::move(id));
  run.message_ids = r.Ids<MessageId>("messageIds");
  run.call_ids = r.Ids<ToolCallId>("callIds");
  run.request_ids = r.Ids<RequestId>("requestIds");
  if (!r.ok()) *error = r.error();
  return run;
}

SubmitPrompt PromptFromJson(const json::value& value, const std::string& path, std::string* error) {
  Reader r(value, path);
  SubmitPrompt prompt;
  prompt.client_message_id = r.String("clientMessageId");
  prompt.text = r.String("text");
  if (const json::value* attachments = r.Field("attachments")) {
    json_fields::DecodeError err;
    if (!json_fields::FromJson(*attachments, prompt.attachments, err))
      r.Fail("attachments" + (err.path.empty() ? "" : "." + err.path) + " " + err.what);
  }
  prompt.while_running = r.Enum("whileRunning", kWhileRunning);
  if (!r.ok()) *error = r.error();
  return prompt;
}

}  // namespace

json::object TurnStateToJson(const TurnState& state) {
  json::object o;
  json::array open;
  for (const auto& [id, run] : state.open) open.push_back(RunToJson(run));  // std::map: sorted
  o["open"] = std::move(open);
  if (state.foreground) o["foreground"] = state.foreground->str();
  o["nextOrder"] = state.next_order;
  o["byMessage"] = SortedMap(state.by_message);
  o["byCall"] = SortedMap(state.by_call);
  o["byRequest"] = SortedMap(state.by_request);
  o["byTask"] = SortedMap(state.by_task);
  json::array closed;
  for (const Run& run : state.recent_closed) closed.push_back(RunToJson(run));
  o["recentClosed"] = std::move(closed);
  json::array queue;
  for (const SubmitPrompt& p : state.queue) queue.push_back(PromptToJson(p));
  o["queue"] = std::move(queue);
  if (state.pending_after_teardown)
    o["pendingAfterTeardown"] = PromptToJson(*state.pending_after_teardown);
  json::array known;
  state.known_client_ids.ForEach([&](const std::string& id, const TurnId& turn) {
    known.push_back(json::array{json::string(id), json::string(turn.str())});
  });
  o["knownClientIds"] = std::move(known);  // oldest first: the order they are forgotten in
  o["lastPromptText"] = state.last_prompt_text;
  o["errored"] = state.errored;
  return o;
}

Result<TurnState> TurnStateFromJson(const json::value& value) {
  Reader r(value, "");
  TurnState state;
  std::string error;
  if (const json::array* open = r.Array("open")) {
    for (std::size_t i = 0; i < open->size() && error.empty(); ++i) {
      Run run = RunFromJson((*open)[i], "open[" + std::to_string(i) + "]", &error);
      state.open.emplace(run.id, std::move(run));
    }
  }
  if (std::optional<std::string> fg = r.OptionalString("foreground"))
    state.foreground = TurnId(*fg);
  state.next_order = r.Unsigned("nextOrder");
  r.TurnMap<MessageId>("byMessage", state.by_message);
  r.TurnMap<ToolCallId>("byCall", state.by_call);
  r.TurnMap<RequestId>("byRequest", state.by_request);
  r.TurnMap<std::string>("byTask", state.by_task);
  if (const json::array* closed = r.Array("recentClosed")) {
    for (std::size_t i = 0; i < closed->size() && error.empty(); ++i) {
      Run run = RunFromJson((*closed)[i], "recentClosed[" + std::to_string(i) + "]", &error);
      state.closed_ids.insert(run.id);
      state.recent_closed.push_back(std::move(run));
    }
  }
  if (const json::array* queue = r.Array("queue")) {
    for (std::size_t i = 0; i < queue->size() && error.empty(); ++i)
      state.queue.push_back(
          PromptFromJson((*queue)[i], "queue[" + std::to_string(i) + "]", &error));
  }
  if (const json::value* pending = r.Field("pendingAfterTeardown", false))
    state.pending_after_teardown = PromptFromJson(*pending, "pendingAfterTeardown", &error);
  if (const json::array* known = r.Array("knownClientIds")) {
    for (const json::value& pair : *known) {
      const json::array* p = pair.if_array();
      if (!p || p->size() != 2 || !(*p)[0].is_string() || !(*p)[1].is_string()) {
        r.Fail("knownClientIds must hold [clientMessageId, turn] pairs");
        break;
      }
      state.known_client_ids.Set(std::string((*p)[0].get_string()),
                                 TurnId(std::string((*p)[1].get_string())));
    }
  }
  state.last_prompt_text = r.String("lastPromptText");
  state.errored = r.Bool("errored");
  if (error.empty() && !r.ok()) error = r.error();
  if (error.empty() && state.foreground && !state.open.count(*state.foreground))
    error = "foreground names no open run";
  if (!error.empty()) return Error(ErrorCode::kCorruption, "turn state: " + error);
  return state;
}

}  // namespace agentstream::turn
