#include "jsonrpc/json_rpc.h"

#include <boost/json.hpp>
#include <charconv>

#include "core/json_hygiene.h"

namespace agentstream::jsonrpc {

namespace json = boost::json;

namespace {

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool IsIntegerText(std::string_view t) {
  if (t.starts_with('-')) t.remove_prefix(1);
  if (t.empty() || (t[0] == '0' && t.size() > 1)) return false;
  for (char c : t)
    if (c < '0' || c > '9') return false;
  return true;
}

// `text`, when it is exactly one JSON string: its decoded value.
std::optional<std::string> DecodeString(std::string_view text) {
  if (text.size() < 2 || text.front() != '"') return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_string()) return std::nullopt;
  return std::string(v.as_string());
}

// ---- The raw text of a top-level member of a JSON object text that has parsed -------------------

std::size_t SkipSpace(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) ++i;
  return i;
}

// `t[i]` is the opening quote: the index after the closing one.
std::size_t SkipString(std::string_view t, std::size_t i) {
  for (++i; i < t.size() && t[i] != '"'; ++i)
    if (t[i] == '\\') ++i;
  return i + 1;
}

// The index after the value that starts at `t[i]`.
std::size_t SkipValue(std::string_view t, std::size_t i) {
  if (i >= t.size()) return i;
  if (t[i] == '"') return SkipString(t, i);
  if (t[i] != '{' && t[i] != '[') {  // a number or a literal
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
           t[i] != '\t' && t[i] != '\r' && t[i] != '\n')
      ++i;
    return i;
  }
  int depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = SkipString(t, i);
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return i;
}

// The text of the value of member `name` of the object `t` (JSON that parsed, an object); the
// last one when the name repeats, as the parser keeps it. Keys are compared decoded.
std::optional<std::string_view> MemberText(std::string_view t, std::string_view name) {
  std::optional<std::string_view> found;
  std::size_t i = SkipSpace(t, 0) + 1;  // past '{'
  for (;;) {
    i = SkipSpace(t, i);
    if (i >= t.size() || t[i] != '"') return found;  // '}'
    const std::size_t key_end = SkipString(t, i);
    const std::string_view key = t.substr(i, key_end - i);
    const std::size_t start = SkipSpace(t, SkipSpace(t, key_end) + 1);  // past ':'
    const std::size_t end = SkipValue(t, start);
    const bool match = key.find('\\') == std::string_view::npos
                           ? key.substr(1, key.size() - 2) == name
                           : DecodeString(key) == name;
    if (match) found = t.substr(start, end - start);
    i = SkipSpace(t, end);
    if (i >= t.size() || t[i] != ',') return found;
    ++i;
  }
}

std::string Envelope(const RpcId& id, std::string_view member, const json::value& value) {
  std::string line = R"({"jsonrpc":"2.0","id":)";
  line += id.json();
  line += ",\"";
  line += member;
  line += "\":";
  line += json::serialize(value);
  line += '}';
  return line;
}

RpcRead Fault(int code, std::string message, RpcId id = {}) {
  return RpcRead{std::nullopt, RpcFault{code, std::move(message), std::move(id)}};
}

// A message without a method: a response, which has a result or a (non-null) error.
RpcRead ReadResponse(json::object& o, RpcMessage m) {
  m.kind = RpcMessage::Kind::kResponse;
  if (const json::value* err = o.if_contains("error"); err && !err->is_null()) {
    std::string msg = "error";
    if (err->is_object()) {
      const json::object& eo = err->as_object();
      if (const json::value* c = eo.if_contains("code"); c && c->is_int64())
        m.error_code = c->as_int64();
      msg = Str(eo, "message");
      if (const json::value* d = eo.if_contains("data"); d && !d->is_null())
        msg += " (" + json::serialize(*d).substr(0, 2000) + ")";
    }
    m.error = std::to_string(m.error_code) + ": " + msg;
  } else if (json::value* r = o.if_contains("result")) {
    m.result = std::move(*r);
  } else {
    return Fault(kInvalidRequest, "Invalid Request: an id without a method, a result or an error",
                 std::move(m.id));
  }
  return RpcRead{std::move(m), std::nullopt};
}

}  // namespace

RpcId RpcId::String(std::string_view s) {
  return RpcId(Kind::kString, json::serialize(json::string_view(s.data(), s.size())));
}

std::optional<RpcId> RpcId::FromJson(std::string_view text) {
  if (text == "null") return RpcId();
  if (IsIntegerText(text)) return RpcId(Kind::kInteger, std::string(text));
  if (DecodeString(text)) return RpcId(Kind::kString, std::string(text));
  return std::nullopt;
}

std::optional<RpcId> RpcId::FromValue(const json::value& value) {
  if (value.is_null()) return RpcId();
  if (value.is_string()) return String(value.as_string());
  if (value.is_int64()) return RpcId(value.as_int64());
  if (value.is_uint64()) return RpcId(Kind::kInteger, std::to_string(value.as_uint64()));
  return std::nullopt;
}

std::optional<std::int64_t> RpcId::int64() const {
  if (kind_ != Kind::kInteger) return std::nullopt;
  std::int64_t n = 0;
  const char* end = json_.data() + json_.size();
  auto [ptr, ec] = std::from_chars(json_.data(), end, n);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return n;
}

std::optional<std::string> RpcId::string() const {
  if (kind_ != Kind::kString) return std::nullopt;
  return DecodeString(json_);
}

std::string RpcId::Key() const {
  if (kind_ != Kind::kString || json_.find('\\') == std::string::npos) return json_;
  return json::serialize(json::string(*string()));
}

RpcRead ReadRpc(std::string_view line, bool strict) {
  json::parser parser;
  boost::system::error_code ec;
  const std::size_t at = parser.write(line.data(), line.size(), ec);
  if (ec) {  // ec.message(): the condition only, no source location
    return Fault(kParseError, "Parse error: invalid JSON at byte " + std::to_string(at) + " (" +
                                  ec.message() + ")");
  }
  json::value v = parser.release();
  NullNonFinite(v);
  if (!v.is_object())
    return Fault(kInvalidRequest, v.is_array() ? "Invalid Request: batches are not supported"
                                               : "Invalid Request: not a JSON object");
  json::object& o = v.as_object();
  RpcMessage m;
  const bool has_id = o.contains("id");
  if (has_id) {
    const std::optional<std::string_view> text = MemberText(line, "id");
    std::optional<RpcId> id = text ? RpcId::FromJson(*text) : std::nullopt;
    if (!id)
      return Fault(kInvalidRequest, "Invalid Request: an id is a string, an integer or null");
    m.id = std::move(*id);
  }
  auto invalid = [&m](std::string_view why) {
    return Fault(kInvalidRequest, "Invalid Request: " + std::string(why), std::move(m.id));
  };
  if (strict) {
    const json::value* version = o.if_contains("jsonrpc");
    if (!version || !version->is_string() || version->as_string() != "2.0")
      return invalid("not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\")");
  }
  const json::value* method = o.if_contains("method");
  if (!method) {
    if (!has_id) return invalid("neither a method nor an id");
    return ReadResponse(o, std::move(m));
  }
  if (!method->is_string()) return invalid("the method is not a string");
  m.method = std::string(method->as_string());
  if (json::value* p = o.if_contains("params")) {
    if (strict && !p->is_object() && !p->is_array())
      return invalid("params is neither an object nor an array");
    m.params = std::move(*p);
  }
  m.kind = has_id ? RpcMessage::Kind::kRequest : RpcMessage::Kind::kNotification;
  return RpcRead{std::move(m), std::nullopt};
}

Result<RpcMessage> ParseRpc(std::string_view line) {
  RpcRead read = ReadRpc(line, /*strict=*/false);
  if (read.fault) return Error(ErrorCode::kInvalidArgument, read.fault->message);
  return std::move(*read.message);
}

std::string RequestLine(std::int64_t id, std::string_view method, json::value params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
}

std::string NotificationLine(std::string_view method, json::value params) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

std::string ResultLine(const RpcId& id, const json::value& result) {
  return Envelope(id, "result", result);
}

std::string ErrorLine(const RpcId& id, int code, std::string_view message) {
  return Envelope(id, "error", json::object{{"code", code}, {"message", message}});
}

std::string ErrorLine(const RpcId& id, int code, std::string_view message,
                      const json::value& data) {
  return Envelope(id, "error", json::object{{"code", code}, {"message", message}, {"data", data}});
}

std::string FaultLine(const RpcFault& fault) {
  return ErrorLine(fault.id, fault.code, fault.message);
}

std::string LineWithId(const RpcId& id, const json::object& members) {
  const std::string rest = json::serialize(members);  // "{...}"
  return "{\"id\":" + id.json() + (members.empty() ? "" : ",") + rest.substr(1);
}

}  // namespace agentstream::jsonrpc
