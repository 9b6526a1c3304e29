// `agentstream import claude|codex` (docs/import.md): lists the transcripts the daemon can import
// (GET /v1/imports) and imports each one with something new (POST /v1/imports), one at a time.
#include <fmt/core.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands/command_util.h"
#include "client/endpoint.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

// An import answers once its whole file is in the log: a large one takes a while.
constexpr std::chrono::minutes kImportTimeout{10};

}  // namespace

std::optional<std::int64_t> ParseSinceDate(const std::string& text) {
  std::int64_t ms = 0;
  const char* end = text.data() + text.size();
  if (auto [ptr, ec] = std::from_chars(text.data(), end, ms); ec == std::errc() && ptr == end)
    return ms >= 0 ? std::optional(ms) : std::nullopt;
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%d", &tm);
  if (rest == nullptr || *rest != '\0') return std::nullopt;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000;
}

int Import(const ClientContext& context, const ImportOptions& options) {
  std::string since;
  if (!options.since.empty()) {
    std::optional<std::int64_t> ms = ParseSinceDate(options.since);
    if (!ms) {
      PrintError(Error(
          ErrorCode::kInvalidArgument,
          "--since takes a date YYYY-MM-DD or milliseconds since the epoch, not " + options.since));
      return kExitUsage;
    }
    since = std::to_string(*ms);
  }
  ClientContext slow = context;
  slow.http.request_timeout = kImportTimeout;
  bool failed = false;
  const int code = RunCall(slow, [&](client::DaemonApi& api) -> Status {
    std::string target =
        "/v1/imports?source=" + client::PercentEncode(options.source) + "&limit=10000";
    if (!options.project.empty()) target += "&project=" + client::PercentEncode(options.project);
    if (!since.empty()) target += "&since=" + since;
    AS_ASSIGN_OR_RETURN(json::value list, api.Call("GET", target));
    const json::value* files =
        list.is_object() ? list.get_object().if_contains("transcripts") : nullptr;
    if (files == nullptr || !files->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: imports: not a list");
    std::vector<std::string> paths;  // with something not imported yet
    for (const json::value& element : files->get_array()) {
      if (!element.is_object()) continue;
      const json::object& file = element.get_object();
      if (file.if_contains("agent") != nullptr &&
          MemberInt(file, "importedBytes") >= MemberInt(file, "bytes"))
        continue;  // nothing new: the daemon would change nothing
      paths.push_back(MemberText(file, "path"));
    }
    const bool terminal = isatty(STDERR_FILENO) != 0;
    std::map<std::string, std::size_t> outcomes;
    std::int64_t malformed = 0;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (terminal) fmt::print(stderr, "\rimporting {}/{} {}\x1b[K", i + 1, paths.size(), paths[i]);
      const json::value body = json::object{{"source", options.source}, {"path", paths[i]}};
      Result<json::value> reply = api.Call("POST", "/v1/imports", &body);
      if (terminal) fmt::print(stderr, "\r\x1b[K");
      if (!reply.ok() || !reply->is_object()) {
        PrintError(Error(
            reply.ok() ? ErrorCode::kInvalidArgument : reply.status().code(),
            paths[i] + ": " + (reply.ok() ? "not an import result" : reply.status().message())));
        failed = true;
        continue;
      }
      json::object& result = reply->get_object();
      const json::value* agent = result.if_contains("agent");
      const std::string id =
          agent != nullptr && agent->is_object() ? MemberText(agent->get_object(), "id") : "";
      ++outcomes[MemberText(result, "outcome")];
      malformed += MemberInt(result, "malformed");
      if (context.json) {
        result["path"] = paths[i];
        PrintJson(result);
      } else {
        fmt::print("{} {} {} events {}\n", id, MemberText(result, "outcome"),
                   MemberInt(result, "events"), paths[i]);
      }
    }
    if (!context.json) {
      fmt::print(
          "imported: {} created, {} appended, {} unchanged, {} continued, {} malformed "
          "lines skipped\n",
          outcomes["created"], outcomes["appended"], outcomes["unchanged"], outcomes["continued"],
          malformed);
    }
    return Status::Ok();
  });
  return code == kExitOk && failed ? kExitError : code;
}

}  // namespace agentstream::cli
