// Helpers shared by the client command files (private to src/cli/client/).
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cli/commands/commands.h"
#include "client/daemon_api.h"
#include "core/status.h"

namespace agentstream::cli {

// Prints "agentstream: MESSAGE" to stderr.
void PrintError(const Status& status);
// Prints `value` as one line of JSON to stdout.
void PrintJson(const boost::json::value& value);
// Connects to the daemon and runs `call`; prints its error. Returns kExitOk, kExitError, or
// kExitUsage for a bad --url.
int RunCall(const ClientContext& context, const std::function<Status(client::DaemonApi&)>& call);
// True when `text` is a cursor EPOCH:SEQ; else prints a usage error naming `option`.
bool ValidCursor(const std::string& text, const char* option);
// The member `key` of a daemon's answer as text: a string as it is, any other value as JSON, ""
// when absent.
std::string MemberText(const boost::json::object& o, std::string_view key);
// The integer member `key`; 0 when absent or not an integer.
std::int64_t MemberInt(const boost::json::object& o, std::string_view key);
// A fresh client message id "cli_<16 hex digits>".
std::string NewClientMessageId();

}  // namespace agentstream::cli
