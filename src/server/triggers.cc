#include "server/triggers.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "consumers/signature.h"
#include "core/ascii.h"
#include "core/utf8.h"
#include "server/security.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxIdBytes = 64;
constexpr std::size_t kMaxPathNames = 16;
constexpr std::size_t kMaxEvents = 32;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// A placeholder's path: names of [A-Za-z0-9_-] joined by single dots.
bool IsPath(std::string_view path) {
  std::size_t names = 0;
  while (true) {
    const std::size_t dot = path.find('.');
    const std::string_view name = path.substr(0, dot);
    if (name.empty() || !std::all_of(name.begin(), name.end(), IsNameChar)) return false;
    if (++names > kMaxPathNames) return false;
    if (dot == std::string_view::npos) return true;
    path.remove_prefix(dot + 1);
  }
}

// Calls `each(path)` for every placeholder of `text`, `literal(text)` for the text between;
// kInvalidArgument for a `{{` left open or a placeholder that is not a path.
template <class Literal, class Each>
Status Walk(std::string_view text, Literal literal, Each each) {
  while (!text.empty()) {
    const std::size_t open = text.find("{{");
    literal(text.substr(0, open));
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos)
      return Error(ErrorCode::kInvalidArgument, "a \"{{\" is not closed by \"}}\"");
    std::string_view path = text.substr(open + 2, close - open - 2);
    while (!path.empty() && path.front() == ' ') path.remove_prefix(1);
    while (!path.empty() && path.back() == ' ') path.remove_suffix(1);
    if (!IsPath(path)) {
      return Error(ErrorCode::kInvalidArgument,
                   "\"{{" + BoundUtf8(path, 64).text +
                       "}}\" is not a path of names and indexes joined by dots");
    }
    each(path);
    text.remove_prefix(close + 2);
  }
  return Status::Ok();
}

// The value at `path` in `payload`, or null when it is not there.
const json::value* Lookup(const json::value& payload, std::string_view path) {
  const json::value* at = &payload;
  while (at != nullptr) {
    const std::size_t dot = path.find('.');
    const std::string_view name = path.substr(0, dot);
    if (at->is_object()) {
      at = at->get_object().if_contains(name);
    } else if (at->is_array()) {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), index);
      at = ec == std::errc() && end == name.data() + name.size() && index < at->get_array().size()
               ? &at->get_array()[index]
               : nullptr;
    } else {
      at = nullptr;
    }
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return at;
}

Status Bad(const std::string& where, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, where + ": " + why);
}

Status OnlyMembers(const json::object& o, std::initializer_list<std::string_view> known,
                   const std::string& where) {
  for (const auto& member : o) {
    if (std::find(known.begin(), known.end(), member.key()) == known.end())
      return Bad(where, "unknown member \"" + std::string(member.key()) + "\"");
  }
  return Status::Ok();
}

Result<std::optional<std::string>> OptionalString(const json::object& o, std::string_view key,
                                                  const std::string& where) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return Bad(where, "\"" + std::string(key) + "\" must be a string");
  return std::optional<std::string>(std::string(v->get_string()));
}

}  // namespace

bool IsAutomationId(std::string_view id) {
  return !id.empty() && id.size() <= kMaxIdBytes && std::all_of(id.begin(), id.end(), IsNameChar);
}

Result<AgentTemplate> ParseAgentTemplate(const json::value& v, const std::string& where) {
  if (!v.is_object()) return Bad(where, "\"template\" must be an object");
  const json::object& o = v.get_object();
  AS_RETURN_IF_ERROR(
      OnlyMembers(o, {"provider", "cwd", "worktree", "model", "mode", "title"}, where));
  AgentTemplate t;
  AS_ASSIGN_OR_RETURN(auto provider, OptionalString(o, "provider", where));
  AS_ASSIGN_OR_RETURN(auto cwd, OptionalString(o, "cwd", where));
  if (!provider || provider->empty()) return Bad(where, "the template needs a provider");
  if (!cwd || cwd->empty() || cwd->front() != '/')
    return Bad(where, "the template needs an absolute cwd");
  t.provider = *provider;
  t.cwd = *cwd;
  if (const json::value* w = o.if_contains("worktree")) {
    if (!w->is_bool()) return Bad(where, "\"worktree\" must be true or false");
    t.worktree = w->get_bool();
  }
  AS_ASSIGN_OR_RETURN(t.model, OptionalString(o, "model", where));
  AS_ASSIGN_OR_RETURN(t.mode, OptionalString(o, "mode", where));
  AS_ASSIGN_OR_RETURN(t.title, OptionalString(o, "title", where));
  if (t.title) {
    if (Status s = CheckTemplate(*t.title); !s.ok()) return Bad(where + " title", s.message());
  }
  return t;
}

json::object AgentTemplateToJson(const AgentTemplate& t) {
  json::object out{{"provider", t.provider}, {"cwd", t.cwd}};
  if (t.worktree) out["worktree"] = true;
  if (t.model) out["model"] = *t.model;
  if (t.mode) out["mode"] = *t.mode;
  if (t.title) out["title"] = *t.title;
  return out;
}

api::AgentConfig AgentTemplateConfig(const AgentTemplate& t, const json::value& fields) {
  api::AgentConfig config;
  config.provider = t.provider;
  config.cwd = t.cwd;
  config.model = t.model;
  config.mode = t.mode;
  if (t.title) {
    std::string title = RenderTemplate(*t.title, fields).text;
    std::replace_if(  // a title is one line
        title.begin(), title.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
    config.title = BoundUtf8(title, kMaxRenderedTitleBytes).text;
  }
  return config;
}

namespace {

Result<Trigger> TriggerOf(const json::value& v, std::size_t index,
                          const std::function<Result<std::string>(const std::string&)>& read_file) {
  std::string where = "trigger " + std::to_string(index);
  if (!v.is_object()) return Bad(where, "not an object");
  const json::object& o = v.get_object();
  AS_ASSIGN_OR_RETURN(auto id, OptionalString(o, "id", where));
  if (!id || !IsAutomationId(*id))
    return Bad(where, "\"id\" must be 1 to 64 letters, digits, '_' or '-'");
  where = "trigger " + *id;
  AS_RETURN_IF_ERROR(OnlyMembers(
      o, {"id", "secret", "secretFile", "agent", "template", "prompt", "events"}, where));
  Trigger t;
  t.id = *id;
  AS_ASSIGN_OR_RETURN(auto secret, OptionalString(o, "secret", where));
  AS_ASSIGN_OR_RETURN(auto secret_file, OptionalString(o, "secretFile", where));
  if (secret && secret_file) return Bad(where, "give \"secret\" or \"secretFile\", not both");
  if (secret_file) {
    Result<std::string> read = read_file(*secret_file);
    if (!read.ok()) return Bad(where, "secretFile: " + read.status().message());
    secret = *read;
    while (!secret->empty() && (secret->back() == '\n' || secret->back() == '\r'))
      secret->pop_back();
  }
  if (secret) {
    if (secret->size() < 16) return Bad(where, "a secret must be at least 16 bytes");
    t.secret = *secret;
  }
  AS_ASSIGN_OR_RETURN(auto agent, OptionalString(o, "agent", where));
  if (agent) t.agent = SessionId(*agent);
  if (const json::value* tpl = o.if_contains("template")) {
    AS_ASSIGN_OR_RETURN(t.create, ParseAgentTemplate(*tpl, where));
  }
  if (t.agent.has_value() == t.create.has_value())
    return Bad(where, "give \"agent\" (an agent's id) or \"template\" (a new agent), one of them");
  AS_ASSIGN_OR_RETURN(auto prompt, OptionalString(o, "prompt", where));
  if (!prompt || prompt->empty()) return Bad(where, "\"prompt\" is required");
  if (Status s = CheckTemplate(*prompt); !s.ok()) return Bad(where + " prompt", s.message());
  t.prompt = *prompt;
  if (const json::value* events = o.if_contains("events")) {
    if (!events->is_array() || events->get_array().size() > kMaxEvents)
      return Bad(where, "\"events\" must be a list of at most 32 event names");
    for (const json::value& e : events->get_array()) {
      if (!e.is_string() || !IsAutomationId(e.get_string()))
        return Bad(where, "an event name must be 1 to 64 letters, digits, '_' or '-'");
      t.events.emplace_back(e.get_string());
    }
  }
  return t;
}

}  // namespace

Status CheckTemplate(std::string_view text) {
  if (text.size() > kMaxTemplateBytes)
    return Error(ErrorCode::kInvalidArgument, "longer than 16 KiB");
  if (!IsValidUtf8(text)) return Error(ErrorCode::kInvalidArgument, "not UTF-8 text");
  std::size_t placeholders = 0;
  AS_RETURN_IF_ERROR(Walk(
      text, [](std::string_view) {}, [&](std::string_view) { ++placeholders; }));
  if (placeholders > kMaxPlaceholders)
    return Error(ErrorCode::kInvalidArgument, "more than 100 placeholders");
  return Status::Ok();
}

Rendered RenderTemplate(std::string_view text, const json::value& payload) {
  Rendered out;
  auto append = [&out](std::string_view piece) {
    if (out.text.size() + piece.size() > kMaxRenderedBytes) {
      out.text += BoundUtf8(piece, kMaxRenderedBytes - out.text.size()).text;
      out.truncated = true;
      return;
    }
    out.text += piece;
  };
  const Status walked = Walk(text, append, [&](std::string_view path) {
    const json::value* v = Lookup(payload, path);
    if (v == nullptr) {
      if (out.missing.size() < kMaxMissingListed &&
          std::find(out.missing.begin(), out.missing.end(), path) == out.missing.end())
        out.missing.emplace_back(path);
      return;
    }
    const std::string value = v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
    BoundedText bounded = BoundUtf8(value, kMaxValueBytes);
    out.truncated = out.truncated || bounded.truncated;
    append(bounded.text);
  });
  (void)walked;  // templates are checked when read (CheckTemplate)
  return out;
}

bool SignatureMatches(std::string_view secret, std::string_view body, std::string_view header) {
  constexpr std::string_view kPrefix = "sha256=";
  if (!header.starts_with(kPrefix)) return false;
  header.remove_prefix(kPrefix.size());
  return ConstantTimeEquals(AsciiLowered(header), consumers::HmacSha256Hex(secret, body));
}

Result<std::string> DeliveryId(std::string_view github_delivery, std::string_view idempotency_key) {
  const std::string_view id = github_delivery.empty() ? idempotency_key : github_delivery;
  if (id.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "a delivery needs its id: X-GitHub-Delivery or Idempotency-Key");
  }
  if (id.size() > kMaxDeliveryIdBytes || std::any_of(id.begin(), id.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f;
      })) {
    return Error(ErrorCode::kInvalidArgument,
                 "a delivery id is 1 to 160 printable ASCII characters without spaces");
  }
  return std::string(id);
}

Result<std::vector<Trigger>> ParseTriggers(
    std::string_view text,
    const std::function<Result<std::string>(const std::string& path)>& read_file) {
  if (text.size() > kMaxTriggersFileBytes)
    return Error(ErrorCode::kInvalidArgument, "longer than 1 MiB");
  boost::system::error_code ec;
  json::value doc = json::parse(text, ec);
  if (ec) return Error(ErrorCode::kInvalidArgument, "not JSON: " + ec.message());
  if (!doc.is_object()) return Error(ErrorCode::kInvalidArgument, "not a JSON object");
  AS_RETURN_IF_ERROR(OnlyMembers(doc.get_object(), {"triggers"}, "the file"));
  const json::value* list = doc.get_object().if_contains("triggers");
  if (list == nullptr || !list->is_array())
    return Error(ErrorCode::kInvalidArgument, "\"triggers\" must be a list");
  if (list->get_array().size() > kMaxTriggers)
    return Error(ErrorCode::kInvalidArgument, "more than 100 triggers");
  std::vector<Trigger> out;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    AS_ASSIGN_OR_RETURN(Trigger t, TriggerOf(list->get_array()[i], i, read_file));
    if (!ids.insert(t.id).second) return Bad("trigger " + t.id, "a second trigger with this id");
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace agentstream::server
