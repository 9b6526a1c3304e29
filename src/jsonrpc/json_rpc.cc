#include "jsonrpc/json_rpc.h"

#include <boost/json.hpp>
#include <exception>

#include "core/json_hygiene.h"

namespace agentstream::jsonrpc {

namespace json = boost::json;

namespace {

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

Result<RpcMessage> ParseRpcValue(json::value v) {
  if (!v.is_object()) return Error(ErrorCode::kInvalidArgument, "not a JSON object");
  json::object& o = v.as_object();
  RpcMessage m;
  const json::value* id = o.if_contains("id");
  const json::value* method = o.if_contains("method");
  if (method) {
    if (!method->is_string()) return Error(ErrorCode::kInvalidArgument, "method is no string");
    m.method = std::string(method->as_string());
    if (json::value* p = o.if_contains("params")) m.params = std::move(*p);
    if (id && !id->is_null()) {
      m.kind = RpcMessage::Kind::kRequest;
      m.id = *id;
    } else {
      m.kind = RpcMessage::Kind::kNotification;
    }
    return m;
  }
  if (!id) return Error(ErrorCode::kInvalidArgument, "neither method nor id");
  m.kind = RpcMessage::Kind::kResponse;
  m.id = *id;
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
  }
  return m;
}

Result<RpcMessage> ParseRpc(std::string_view line) {
  json::value v;
  try {
    v = json::parse(line);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, std::string("not JSON: ") + e.what());
  }
  NullNonFinite(v);
  return ParseRpcValue(std::move(v));
}

std::string RequestLine(std::int64_t id, std::string_view method, json::value params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
}

std::string NotificationLine(std::string_view method, json::value params) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

std::string ResultLine(const json::value& id, json::value result) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string ErrorLine(const json::value& id, int code, std::string_view message) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"error", json::object{{"code", code}, {"message", message}}}});
}

std::string ErrorLine(const json::value& id, int code, std::string_view message, json::value data) {
  return json::serialize(json::object{
      {"jsonrpc", "2.0"},
      {"id", id},
      {"error", json::object{{"code", code}, {"message", message}, {"data", std::move(data)}}}});
}

}  // namespace agentstream::jsonrpc
