#include "cli/commands/commands.h"

#include <fmt/core.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <functional>

#include "api/api_json.h"
#include "cli/commands/command_util.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

// "modes        default, plan (Plan only)": ids, each with its label when it has one.
void PrintChoices(std::string_view heading, const std::vector<Choice>& choices) {
  if (choices.empty()) return;
  std::string line;
  for (const Choice& c : choices) {
    if (!line.empty()) line += ", ";
    line += c.label.empty() || c.label == c.id ? c.id : c.id + " (" + c.label + ")";
  }
  fmt::print("{:<13}{}\n", heading, line);
}

void PrintCapabilities(const CapabilitiesChanged& c) {
  PrintChoices("modes", c.modes);
  PrintChoices("models", c.models);
  PrintChoices("thinking", c.thinking_options);
  for (const CommandInfo& command : c.commands) {
    fmt::print("command      /{}{}\n", command.name,
               command.description.empty() ? "" : "  " + command.description);
  }
}

void PrintSnapshot(const api::AgentSnapshot& s) {
  fmt::print("id           {}\n", s.id.str());
  fmt::print("provider     {}\n", s.provider);
  fmt::print("cwd          {}\n", s.cwd);
  if (!s.title.empty()) fmt::print("title        {}\n", s.title);
  if (!s.model.empty()) fmt::print("model        {}\n", s.model);
  if (!s.mode.empty()) fmt::print("mode         {}\n", s.mode);
  if (!s.thinking.empty()) fmt::print("thinking     {}\n", s.thinking);
  if (s.capabilities) PrintCapabilities(*s.capabilities);
  fmt::print("status       {}{}\n", api::StatusName(s.status),
             s.active_turn ? " (turn " + s.active_turn->str() + ")" : "");
  fmt::print("cursor       {}\n", FormatCursor(s.cursor));
  for (const auto& queued : s.queue)
    fmt::print("queued       {}: {}\n", queued.client_message_id, queued.text);
  for (const auto& p : s.permissions)
    fmt::print("permission   {} {}\n", p.request_id.str(), p.tool_name);
  if (s.forked_from) {
    fmt::print("forked from  {} at {}\n", s.forked_from->session.str(),
               FormatCursor({s.forked_from->epoch, s.forked_from->seq}));
  }
  if (s.usage && (s.usage->input_tokens > 0 || s.usage->output_tokens > 0 || s.usage->cost_usd)) {
    fmt::print("usage        {} in, {} out, {} cache read, {} cache write tokens{}\n",
               s.usage->input_tokens, s.usage->output_tokens, s.usage->cache_read_tokens,
               s.usage->cache_write_tokens,
               s.usage->cost_usd ? fmt::format(", ${:.4f}", *s.usage->cost_usd) : "");
  }
  if (s.closed) fmt::print("closed       yes\n");
}

// Decodes a snapshot reply; prints it (JSON or text) with `print_text` for the text form.
Status PrintAgentReply(const ClientContext& context, const json::value& reply,
                       const std::function<void(const api::AgentSnapshot&)>& print_text) {
  if (context.json) {
    PrintJson(reply);
    return Status::Ok();
  }
  AS_ASSIGN_OR_RETURN(api::AgentSnapshot snapshot, api::AgentSnapshotFromJson(reply));
  print_text(snapshot);
  return Status::Ok();
}

}  // namespace

int ListAgents(const ClientContext& context, bool include_closed) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("GET", include_closed ? "/v1/agents?closed=true" : "/v1/agents"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::array* agents = reply.if_array();
    if (agents == nullptr && reply.is_object()) {
      if (const json::value* inner = reply.get_object().if_contains("agents"))
        agents = inner->if_array();
    }
    if (agents == nullptr) return Error(ErrorCode::kInvalidArgument, "daemon: agents: not a list");
    for (const json::value& element : *agents) {
      AS_ASSIGN_OR_RETURN(api::AgentSnapshot s, api::AgentSnapshotFromJson(element));
      fmt::print("{}  {:<10} {:<10} {:<8} {}\n", s.id.str(), api::StatusName(s.status), s.provider,
                 FormatCursor(s.cursor), s.title);
    }
    return Status::Ok();
  });
}

int ListCatalog(const ClientContext& context) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", "/v1/catalog"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::value* agents =
        reply.is_object() ? reply.get_object().if_contains("agents") : nullptr;
    if (agents == nullptr || !agents->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: catalog: not a list");
    for (const json::value& element : agents->get_array()) {
      if (!element.is_object()) return Error(ErrorCode::kInvalidArgument, "daemon: catalog entry");
      const json::object& agent = element.get_object();
      const auto text = [&agent](std::string_view key) {
        const json::value* v = agent.if_contains(key);
        return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
      };
      const auto flag = [&agent](std::string_view key) {
        const json::value* v = agent.if_contains(key);
        return v != nullptr && v->is_bool() && v->get_bool();
      };
      const bool installed = flag("installed");
      fmt::print("{:<26} {:<9} {:<6} {} {}{}\n", text("provider"),
                 installed ? "installed" : "missing", flag("proven") ? "proven" : "listed",
                 text("name"), text("version"),
                 installed ? std::string() : "  (" + text("install") + ")");
    }
    return Status::Ok();
  });
}

int NewAgent(const ClientContext& context, const NewAgentOptions& options) {
  // A client request id of its own: a create the transport repeats makes one agent.
  api::AgentConfig config{options.provider, options.cwd,   options.model,
                          options.mode,     options.title, NewClientMessageId()};
  if (config.cwd.empty()) {
    std::error_code ec;
    config.cwd = std::filesystem::current_path(ec).string();
  }
  json::object body = api::AgentConfigToJson(config);
  if (options.worktree) {
    workspace::WorktreeRequest worktree;
    if (!options.branch.empty()) worktree.branch = options.branch;
    if (!options.base.empty()) worktree.base = options.base;
    body["worktree"] = api::WorktreeRequestToJson(worktree);
  }
  const json::value value = std::move(body);
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("POST", "/v1/agents", &value));
    return PrintAgentReply(context, reply,
                           [](const api::AgentSnapshot& s) { fmt::print("{}\n", s.id.str()); });
  });
}

int ShowAgent(const ClientContext& context, const std::string& agent) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", client::DaemonApi::AgentPath(agent)));
    return PrintAgentReply(context, reply, PrintSnapshot);
  });
}

int RemoveAgent(const ClientContext& context, const RemoveAgentOptions& options) {
  const std::string& agent = options.agent;
  std::string query;
  if (options.remove_worktree)
    query = options.force ? "?removeWorktree=true&force=true" : "?removeWorktree=true";
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("DELETE", client::DaemonApi::AgentPath(agent, query)));
    if (context.json) {
      PrintJson(reply.is_null() ? json::value(json::object{{"closed", agent}}) : reply);
    } else {
      fmt::print("closed {}{}\n", agent, options.remove_worktree ? ", worktree removed" : "");
    }
    return Status::Ok();
  });
}

int Interrupt(const ClientContext& context, const std::string& agent) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST", client::DaemonApi::AgentPath(agent, "/interrupt")));
    if (context.json) {
      PrintJson(reply.is_null() ? json::value(json::object{{"interrupted", agent}}) : reply);
    } else {
      fmt::print("interrupt sent to {}\n", agent);
    }
    return Status::Ok();
  });
}

int AnswerPermission(const ClientContext& context, const std::string& agent,
                     const std::string& request, bool allow, const std::string& message) {
  json::object body{{"decision", allow ? "allow" : "deny"}};
  if (!message.empty()) body["message"] = message;
  const json::value value = std::move(body);
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST",
                                 client::DaemonApi::AgentPath(
                                     agent, "/permissions/" + client::PercentEncode(request)),
                                 &value));
    if (context.json) {
      PrintJson(reply.is_null() ? value : reply);
    } else {
      fmt::print("{} {}\n", allow ? "allowed" : "denied", request);
    }
    return Status::Ok();
  });
}

int Fork(const ClientContext& context, const std::string& agent, const std::string& cursor) {
  if (!ValidCursor(cursor, "--at")) return kExitUsage;
  const json::value body = json::object{{"cursor", cursor}};
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST", client::DaemonApi::AgentPath(agent, "/fork"), &body));
    return PrintAgentReply(context, reply,
                           [](const api::AgentSnapshot& s) { fmt::print("{}\n", s.id.str()); });
  });
}

int Rename(const ClientContext& context, const std::string& agent, const std::string& title) {
  const json::value body = json::object{{"title", title}};
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST", client::DaemonApi::AgentPath(agent, "/title"), &body));
    return PrintAgentReply(context, reply, [](const api::AgentSnapshot& s) {
      fmt::print("{}: {}\n", s.id.str(), s.title.empty() ? "(no title)" : s.title);
    });
  });
}

int Search(const ClientContext& context, const SearchOptions& options) {
  std::string target = "/v1/search?q=" + client::PercentEncode(options.query) +
                       "&limit=" + std::to_string(options.limit);
  if (!options.agent.empty()) target += "&agent=" + client::PercentEncode(options.agent);
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", target));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::object* body = reply.if_object();
    const json::value* hits = body != nullptr ? body->if_contains("hits") : nullptr;
    if (hits == nullptr || !hits->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: search: no hits list");
    for (const json::value& hit : hits->get_array()) {
      const json::object* h = hit.if_object();
      if (h == nullptr) continue;
      auto text = [&](const char* key) {
        const json::value* v = h->if_contains(key);
        return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
      };
      // The matches between U+0002 and U+0003, shown as [match]; lines joined.
      std::string snippet;
      for (char c : text("snippet"))
        snippet += c == '\x02' ? "[" : c == '\x03' ? "]" : c == '\n' ? " " : std::string(1, c);
      fmt::print("{} {:<7} {:<17} {}\n", text("agent"), text("cursor"), text("kind"), snippet);
    }
    if (const json::value* more = body->if_contains("truncated");
        more && more->is_bool() && more->get_bool())
      fmt::print(stderr, "agentstream: more hits than --limit {}\n", options.limit);
    return Status::Ok();
  });
}

int Rewind(const ClientContext& context, const std::string& agent, const std::string& cursor) {
  if (!ValidCursor(cursor, "--to")) return kExitUsage;
  const json::value body = json::object{{"cursor", cursor}};
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST", client::DaemonApi::AgentPath(agent, "/rewind"), &body));
    return PrintAgentReply(context, reply, [](const api::AgentSnapshot& s) {
      fmt::print("rewound {}: now at {}\n", s.id.str(), FormatCursor(s.cursor));
    });
  });
}

namespace {

int SetSetting(const ClientContext& context, const std::string& agent, const char* name,
               const std::string& value) {
  const json::value body = json::object{{name, value}};
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(
        json::value reply,
        api.Call("POST", client::DaemonApi::AgentPath(agent, std::string("/") + name), &body));
    if (context.json) {
      PrintJson(reply.is_null() ? body : reply);
    } else {
      fmt::print("{}: {}\n", name, value);
    }
    return Status::Ok();
  });
}

}  // namespace

int SetMode(const ClientContext& context, const std::string& agent, const std::string& mode) {
  return SetSetting(context, agent, "mode", mode);
}

int SetModel(const ClientContext& context, const std::string& agent, const std::string& model) {
  return SetSetting(context, agent, "model", model);
}

int SetThinking(const ClientContext& context, const std::string& agent, const std::string& option) {
  return SetSetting(context, agent, "thinking", option);
}

}  // namespace agentstream::cli
