// `agentstream diff`, `agentstream worktrees` and `agentstream git` (docs/workspaces.md).
#include <fmt/core.h>
#include <boost/json/value.hpp>

#include <cstdio>

#include "api/api_json.h"
#include "api/workspace_json.h"
#include "cli/commands/command_util.h"
#include "cli/commands/commands.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"

namespace agentstream::cli {

namespace json = boost::json;

int Diff(const ClientContext& context, const DiffOptions& options) {
  const std::string query = options.against.empty()
                                ? std::string()
                                : "?against=" + client::PercentEncode(options.against);
  const std::string target = client::DaemonApi::AgentPath(options.agent, "/diff" + query);
  if (context.json) {
    return RunCall(context, [&](client::DaemonApi& api) -> Status {
      AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", target));
      PrintJson(reply);
      return Status::Ok();
    });
  }
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(client::HttpResponse response,
                        api.http().Request("GET", target, {}, "text/x-diff"));
    if (response.status < 200 || response.status >= 300) {
      auto parsed = api::ParseJson(response.body);
      const Status status =
          parsed.ok() ? api::ErrorFromJson(*parsed, response.status)
                      : Error(ErrorCode::kInternal, "HTTP " + std::to_string(response.status));
      return Error(status.code(), "daemon: " + status.ToString());
    }
    std::fwrite(response.body.data(), 1, response.body.size(), stdout);
    if (response.Header("Diff-Truncated") == "true")
      fmt::print(stderr, "agentstream: the diff was cut short (its size bound)\n");
    return Status::Ok();
  });
}

int ListWorktrees(const ClientContext& context) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", "/v1/worktrees"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::value* list =
        reply.is_object() ? reply.get_object().if_contains("worktrees") : nullptr;
    if (list == nullptr || !list->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: worktrees: not a list");
    for (const json::value& element : list->get_array()) {
      AS_ASSIGN_OR_RETURN(api::WorktreeEntry entry, api::WorktreeEntryFromJson(element));
      fmt::print("{}  {:<8} {:<7} {}  {}\n", entry.agent.str(), entry.state,
                 entry.closed ? "closed" : "open", entry.workspace.branch, entry.workspace.path);
    }
    return Status::Ok();
  });
}

int GitAction(const ClientContext& context, const GitCommandOptions& options) {
  json::object body;
  if (options.message) body["message"] = *options.message;
  if (options.into) body["into"] = *options.into;
  if (options.no_ff) body["noFastForward"] = true;
  if (options.action == "push" || options.action == "pr") body["remote"] = options.remote;
  if (options.title) body["title"] = *options.title;
  if (options.body) body["body"] = *options.body;
  if (options.base) body["base"] = *options.base;
  bool failed = false;
  const int code = RunCall(context, [&](client::DaemonApi& api) -> Status {
    const json::value request = body;
    AS_ASSIGN_OR_RETURN(
        json::value reply,
        api.Call("POST", client::DaemonApi::AgentPath(options.agent, "/git/" + options.action),
                 &request));
    if (!reply.is_object()) return Error(ErrorCode::kInvalidArgument, "daemon: not an object");
    const json::object& answer = reply.get_object();
    const std::string outcome = MemberText(answer, "outcome");
    failed = outcome == "conflict" || outcome == "refused" || outcome == "failed";
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    std::string line = options.action + " " + outcome;
    if (const std::string commit = MemberText(answer, "commit"); !commit.empty())
      line += " " + commit.substr(0, 12);
    if (const std::string target = MemberText(answer, "target"); !target.empty())
      line += (options.action == "push" ? " to " : " into ") + target;
    if (const std::string url = MemberText(answer, "url"); !url.empty()) line += " " + url;
    if (const std::string message = MemberText(answer, "message"); !message.empty())
      line += ": " + message;
    fmt::print("{}\n", line);
    if (const json::value* files = answer.if_contains("files");
        files != nullptr && files->is_array())
      for (const json::value& file : files->get_array())
        if (file.is_string()) fmt::print("  {}\n", std::string_view(file.get_string()));
    return Status::Ok();
  });
  return code == 0 && failed ? 1 : code;
}

}  // namespace agentstream::cli
