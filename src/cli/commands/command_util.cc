#include "cli/commands/command_util.h"

#include <fmt/core.h>
#include <boost/json/serialize.hpp>

#include "core/ids.h"

namespace agentstream::cli {

namespace json = boost::json;

void PrintError(const Status& status) {
  fmt::print(stderr, "agentstream: {}\n",
             status.message().empty() ? status.ToString() : status.message());
}

void PrintJson(const json::value& value) { fmt::print("{}\n", json::serialize(value)); }

int RunCall(const ClientContext& context, const std::function<Status(client::DaemonApi&)>& call) {
  auto http = client::Transport::Create(context.http);
  if (!http.ok()) {
    PrintError(http.status());
    return kExitUsage;
  }
  client::DaemonApi api(**http);
  if (Status status = call(api); !status.ok()) {
    PrintError(status);
    return kExitError;
  }
  return kExitOk;
}

bool ValidCursor(const std::string& text, const char* option) {
  Cursor cursor;
  if (ParseCursor(text, &cursor)) return true;
  fmt::print(stderr, "agentstream: {} takes a cursor EPOCH:SEQ, got \"{}\"\n", option, text);
  return false;
}

std::string MemberText(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

std::int64_t MemberInt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v != nullptr && v->is_int64()) return v->get_int64();
  if (v != nullptr && v->is_uint64() && v->get_uint64() <= INT64_MAX)
    return static_cast<std::int64_t>(v->get_uint64());
  return 0;
}

std::string NewClientMessageId() { return client::NewClientId("cli"); }

}  // namespace agentstream::cli
