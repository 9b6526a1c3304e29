#include "cli/client/command_util.h"

#include <fmt/core.h>
#include <boost/json/serialize.hpp>

#include "core/ids.h"

namespace agentstream::cli::client {

namespace json = boost::json;

void PrintError(const Status& status) {
  fmt::print(stderr, "agentstream: {}\n",
             status.message().empty() ? status.ToString() : status.message());
}

void PrintJson(const json::value& value) { fmt::print("{}\n", json::serialize(value)); }

int RunCall(const ClientContext& context, const std::function<Status(DaemonApi&)>& call) {
  auto http = HttpClient::Create(context.http);
  if (!http.ok()) {
    PrintError(http.status());
    return kExitUsage;
  }
  DaemonApi api(**http);
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

std::string NewClientMessageId() { return NewClientId("cli"); }

}  // namespace agentstream::cli::client
