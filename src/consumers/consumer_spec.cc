#include "consumers/consumer_spec.h"

#include <algorithm>
#include <boost/json.hpp>

#include "net/http_url.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

constexpr std::pair<SinkKind, std::string_view> kSinkNames[] = {
    {SinkKind::kWebhook, "webhook"},      {SinkKind::kCommand, "command"},
    {SinkKind::kParentSession, "parent"}, {SinkKind::kJsonl, "jsonl"},
    {SinkKind::kNotify, "notify"},
};

Status Bad(const std::string& field, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "consumer field \"" + field + "\" " + why);
}

// Reads an optional string field; `out` is unchanged when absent.
Status ReadString(const json::object& o, std::string_view key, const std::string& path,
                  std::string& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  if (!v->is_string()) return Bad(path, "must be a string");
  out = std::string(v->as_string());
  return Status::Ok();
}

Status ReadStrings(const json::object& o, std::string_view key, const std::string& path,
                   std::size_t max_entries, std::vector<std::string>& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  if (!v->is_array()) return Bad(path, "must be an array of strings");
  if (v->as_array().size() > max_entries)
    return Bad(path, "has more than " + std::to_string(max_entries) + " entries");
  for (const auto& item : v->as_array()) {
    if (!item.is_string()) return Bad(path, "must be an array of strings");
    out.emplace_back(item.as_string());
  }
  return Status::Ok();
}

Status ReadInt(const json::object& o, std::string_view key, const std::string& path,
               std::int64_t min, std::int64_t max, std::int64_t& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  std::int64_t n = 0;
  if (v->is_int64()) {
    n = v->as_int64();
  } else if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(max)) {
    n = static_cast<std::int64_t>(v->as_uint64());
  } else {
    return Bad(path, "must be an integer");
  }
  if (n < min || n > max)
    return Bad(path, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  out = n;
  return Status::Ok();
}

Status ReadBool(const json::object& o, std::string_view key, const std::string& path, bool& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  if (!v->is_bool()) return Bad(path, "must be a boolean");
  out = v->as_bool();
  return Status::Ok();
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxConsumerIdBytes) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

Status ParseSink(const json::value& v, SinkSpec& sink) {
  if (!v.is_object()) return Bad("sink", "must be an object");
  const json::object& o = v.as_object();
  std::string kind;
  AS_RETURN_IF_ERROR(ReadString(o, "kind", "sink.kind", kind));
  const auto* named = std::find_if(std::begin(kSinkNames), std::end(kSinkNames),
                                   [&](const auto& entry) { return entry.second == kind; });
  if (named == std::end(kSinkNames))
    return Bad("sink.kind", "must be one of webhook, command, parent, jsonl, notify");
  sink.kind = named->first;
  AS_RETURN_IF_ERROR(ReadInt(o, "timeoutMs", "sink.timeoutMs", 1, kMaxTimeoutMs, sink.timeout_ms));
  switch (sink.kind) {
    case SinkKind::kWebhook: {
      AS_RETURN_IF_ERROR(ReadString(o, "url", "sink.url", sink.url));
      if (Result<net::HttpUrl> url = net::ParseHttpUrl(sink.url); !url.ok())
        return Bad("sink.url", "must be an http:// or https:// URL");
      AS_RETURN_IF_ERROR(ReadString(o, "secret", "sink.secret", sink.secret));
      if (sink.secret.empty()) return Bad("sink.secret", "is required for a webhook");
      const json::value* headers = o.if_contains("headers");
      if (headers != nullptr && !headers->is_null()) {
        if (!headers->is_object()) return Bad("sink.headers", "must be an object of strings");
        if (headers->as_object().size() > kMaxSinkHeaders)
          return Bad("sink.headers", "has more than " + std::to_string(kMaxSinkHeaders));
        for (const auto& [name, value] : headers->as_object()) {
          if (!value.is_string()) return Bad("sink.headers", "must be an object of strings");
          const std::string n(name), val(value.as_string());
          if (n.empty() || n.find_first_of(":\r\n ") != std::string::npos ||
              val.find_first_of("\r\n") != std::string::npos)
            return Bad("sink.headers." + n, "is not a valid header");
          sink.headers.emplace_back(n, val);
        }
      }
      break;
    }
    case SinkKind::kCommand:
      AS_RETURN_IF_ERROR(ReadStrings(o, "argv", "sink.argv", kMaxCommandArgs, sink.argv));
      if (sink.argv.empty() || sink.argv[0].empty()) return Bad("sink.argv", "must name a program");
      break;
    case SinkKind::kParentSession: {
      std::string parent;
      AS_RETURN_IF_ERROR(ReadString(o, "parent", "sink.parent", parent));
      if (parent.empty()) return Bad("sink.parent", "must name the parent session");
      sink.parent = SessionId(parent);
      break;
    }
    case SinkKind::kJsonl:
      AS_RETURN_IF_ERROR(ReadString(o, "path", "sink.path", sink.path));
      if (sink.path.empty() || sink.path[0] != '/')
        return Bad("sink.path", "must be an absolute file path");
      break;
    case SinkKind::kNotify:
      AS_RETURN_IF_ERROR(ReadString(o, "device", "sink.device", sink.device));
      if (sink.device.empty()) return Bad("sink.device", "must name the device");
      break;
  }
  return Status::Ok();
}

std::string Redact(const std::string& secret) {
  if (secret.size() < 8) return "***";
  return "***" + secret.substr(secret.size() - 2);
}

}  // namespace

std::string_view SinkKindName(SinkKind kind) {
  for (const auto& [k, name] : kSinkNames)
    if (k == kind) return name;
  return "";
}

Result<ConsumerSpec> ConsumerSpecFromJson(const boost::json::value& v) {
  if (!v.is_object()) return Bad("(body)", "must be a JSON object");
  const json::object& o = v.as_object();
  ConsumerSpec spec;
  std::string id;
  AS_RETURN_IF_ERROR(ReadString(o, "id", "id", id));
  if (!ValidId(id))
    return Bad("id", "must be 1 to " + std::to_string(kMaxConsumerIdBytes) +
                         " characters of [A-Za-z0-9._-]");
  spec.id = ConsumerId(id);
  if (const json::value* f = o.if_contains("filter"); f != nullptr && !f->is_null()) {
    if (!f->is_object()) return Bad("filter", "must be an object");
    const auto& fo = f->as_object();
    AS_RETURN_IF_ERROR(
        ReadStrings(fo, "providers", "filter.providers", kMaxFilterEntries, spec.filter.providers));
    std::vector<std::string> sessions;
    AS_RETURN_IF_ERROR(ReadStrings(fo, "sessions", "filter.sessions", kMaxFilterEntries, sessions));
    for (auto& s : sessions) spec.filter.sessions.emplace_back(std::move(s));
    AS_RETURN_IF_ERROR(
        ReadStrings(fo, "kinds", "filter.kinds", kMaxFilterEntries, spec.filter.kinds));
    for (const auto& kind : spec.filter.kinds)
      if (!EventKindFromName(kind)) return Bad("filter.kinds", "names an unknown kind: " + kind);
  }
  const json::value* sink = o.if_contains("sink");
  if (sink == nullptr) return Bad("sink", "is required");
  AS_RETURN_IF_ERROR(ParseSink(*sink, spec.sink));
  if (const json::value* r = o.if_contains("retry"); r != nullptr && !r->is_null()) {
    if (!r->is_object()) return Bad("retry", "must be an object");
    const auto& ro = r->as_object();
    std::int64_t attempts = spec.retry.max_attempts;
    AS_RETURN_IF_ERROR(
        ReadInt(ro, "maxAttempts", "retry.maxAttempts", 1, kMaxAttemptsLimit, attempts));
    spec.retry.max_attempts = static_cast<int>(attempts);
    AS_RETURN_IF_ERROR(ReadInt(ro, "initialBackoffMs", "retry.initialBackoffMs", 1, kMaxTimeoutMs,
                               spec.retry.initial_backoff_ms));
    AS_RETURN_IF_ERROR(
        ReadInt(ro, "maxBackoffMs", "retry.maxBackoffMs", 1, 3600000, spec.retry.max_backoff_ms));
    if (spec.retry.max_backoff_ms < spec.retry.initial_backoff_ms)
      return Bad("retry.maxBackoffMs", "must be at least retry.initialBackoffMs");
  }
  AS_RETURN_IF_ERROR(ReadBool(o, "coalesce", "coalesce", spec.coalesce));
  AS_RETURN_IF_ERROR(ReadBool(o, "fromNow", "fromNow", spec.from_now));
  return spec;
}

boost::json::object ConsumerSpecToJson(const ConsumerSpec& spec, bool redact_secret) {
  json::object o;
  o["id"] = spec.id.str();
  json::object filter;
  json::array providers, sessions, kinds;
  for (const auto& p : spec.filter.providers) providers.emplace_back(p);
  for (const auto& s : spec.filter.sessions) sessions.emplace_back(s.str());
  for (const auto& k : spec.filter.kinds) kinds.emplace_back(k);
  filter["providers"] = std::move(providers);
  filter["sessions"] = std::move(sessions);
  filter["kinds"] = std::move(kinds);
  o["filter"] = std::move(filter);
  json::object sink;
  sink["kind"] = SinkKindName(spec.sink.kind);
  sink["timeoutMs"] = spec.sink.timeout_ms;
  switch (spec.sink.kind) {
    case SinkKind::kWebhook: {
      sink["url"] = spec.sink.url;
      sink["secret"] = redact_secret ? Redact(spec.sink.secret) : spec.sink.secret;
      json::object headers;
      for (const auto& [name, value] : spec.sink.headers) headers[name] = value;
      sink["headers"] = std::move(headers);
      break;
    }
    case SinkKind::kCommand: {
      json::array argv;
      for (const auto& a : spec.sink.argv) argv.emplace_back(a);
      sink["argv"] = std::move(argv);
      break;
    }
    case SinkKind::kParentSession:
      sink["parent"] = spec.sink.parent.str();
      break;
    case SinkKind::kJsonl:
      sink["path"] = spec.sink.path;
      break;
    case SinkKind::kNotify:
      sink["device"] = spec.sink.device;
      break;
  }
  o["sink"] = std::move(sink);
  o["retry"] = json::object{{"maxAttempts", spec.retry.max_attempts},
                            {"initialBackoffMs", spec.retry.initial_backoff_ms},
                            {"maxBackoffMs", spec.retry.max_backoff_ms}};
  o["coalesce"] = spec.coalesce;
  o["fromNow"] = spec.from_now;
  return o;
}

bool FilterMatchesSession(const ConsumerFilter& filter, const SessionId& session,
                          const std::string& provider) {
  if (!filter.sessions.empty() &&
      std::find(filter.sessions.begin(), filter.sessions.end(), session) == filter.sessions.end())
    return false;
  if (!filter.providers.empty() && std::find(filter.providers.begin(), filter.providers.end(),
                                             provider) == filter.providers.end())
    return false;
  return true;
}

bool FilterMatchesKind(const ConsumerFilter& filter, std::uint16_t kind) {
  if (filter.kinds.empty()) return true;
  const std::string_view name = EventKindName(static_cast<EventKind>(kind));
  return std::find(filter.kinds.begin(), filter.kinds.end(), name) != filter.kinds.end();
}

}  // namespace agentstream::consumers
