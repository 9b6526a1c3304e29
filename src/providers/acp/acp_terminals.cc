#include "providers/acp/acp_terminals.h"

#include <string.h>
#include <unistd.h>

#include "providers/acp/acp_protocol.h"

namespace agentstream::providers::acp {

namespace json = boost::json;

AcpTerminals::AcpTerminals(process::EventLoop& loop, std::string cwd, TerminalLimits limits)
    : loop_(loop), cwd_(std::move(cwd)), limits_(limits) {}

AcpTerminals::~AcpTerminals() = default;  // each ChildProcess kills its process group

json::value AcpTerminals::ExitStatus(const Terminal& t) {
  json::object s;
  s["exitCode"] = t.exit.exit_code >= 0 ? json::value(t.exit.exit_code) : json::value(nullptr);
  const char* name = t.exit.signal > 0 ? ::sigabbrev_np(t.exit.signal) : nullptr;
  s["signal"] = name ? json::value("SIG" + std::string(name)) : json::value(nullptr);
  return s;
}

Result<json::value> AcpTerminals::Create(const json::value& params) {
  if (!params.is_object()) return Error(ErrorCode::kInvalidArgument, "params must be an object");
  const json::object& p = params.as_object();
  const json::value* command = p.if_contains("command");
  if (!command || !command->is_string() || command->as_string().empty())
    return Error(ErrorCode::kInvalidArgument, "terminal/create needs a command");
  if (terminals_.size() >= limits_.max_terminals)
    return Error(ErrorCode::kResourceExhausted,
                 "at most " + std::to_string(limits_.max_terminals) + " terminals");
  process::SpawnOptions spawn;
  // stdout and stderr merged, in order, as a terminal shows them. Without args the command is a
  // shell command line (what agents send for "run this").
  spawn.argv = {"/bin/sh", "-c"};
  const json::value* args = p.if_contains("args");
  if (args && args->is_array() && !args->as_array().empty()) {
    spawn.argv.emplace_back("exec 2>&1; exec \"$0\" \"$@\"");
    spawn.argv.emplace_back(command->as_string());
    for (const json::value& a : args->as_array())
      if (a.is_string()) spawn.argv.emplace_back(a.as_string());
  } else {
    spawn.argv.push_back("exec 2>&1; " + std::string(command->as_string()));
  }
  spawn.cwd = cwd_;
  if (const json::value* c = p.if_contains("cwd"); c && c->is_string()) {
    AS_ASSIGN_OR_RETURN(spawn.cwd, ConfinePath(cwd_, std::string(c->as_string())));
  }
  if (const json::value* env = p.if_contains("env");
      env && env->is_array() && !env->as_array().empty()) {
    for (char** e = environ; *e; ++e) spawn.env.emplace_back(*e);
    for (const json::value& v : env->as_array())
      if (v.is_object() && v.as_object().contains("name") && v.at("name").is_string() &&
          v.as_object().contains("value") && v.at("value").is_string())
        spawn.env.push_back(std::string(v.at("name").as_string()) + "=" +
                            std::string(v.at("value").as_string()));
  }
  auto term = std::make_unique<Terminal>();
  term->limit = limits_.max_output_bytes;
  if (const json::value* l = p.if_contains("outputByteLimit");
      l && l->is_int64() && l->as_int64() >= 0)
    term->limit = std::min(term->limit, static_cast<std::size_t>(l->as_int64()));
  Terminal* t = term.get();
  spawn.max_line_bytes = std::max<std::size_t>(t->limit, 1024);
  auto child = process::ChildProcess::Spawn(
      loop_, spawn,
      {[t](const process::Frame& f) {
         t->output += f.text;
         t->output += '\n';
         if (t->output.size() > t->limit) {
           std::size_t cut = t->output.size() - t->limit;
           // Keep whole UTF-8 characters: skip continuation bytes at the new start.
           while (cut < t->output.size() &&
                  (static_cast<unsigned char>(t->output[cut]) & 0xC0) == 0x80)
             ++cut;
           t->output.erase(0, cut);
           t->truncated = true;
         }
       },
       [t](const process::ExitInfo& e) {
         t->exited = true;
         t->exit = e;
         auto waiters = std::move(t->waiters);
         for (Respond& w : waiters) w(ExitStatus(*t));
       }});
  if (!child.ok()) return child.status();
  t->child = std::move(child).value();
  const std::string id = "term_" + std::to_string(next_++);
  terminals_[id] = std::move(term);
  return json::value(json::object{{"terminalId", id}});
}

void AcpTerminals::Handle(const std::string& method, const json::value& params, Respond respond) {
  if (method == "terminal/create") return respond(Create(params));
  const json::value* idv =
      params.is_object() ? params.as_object().if_contains("terminalId") : nullptr;
  if (!idv || !idv->is_string())
    return respond(Error(ErrorCode::kInvalidArgument, method + " needs a terminalId"));
  auto it = terminals_.find(std::string(idv->as_string()));
  if (it == terminals_.end())
    return respond(Error(ErrorCode::kNotFound, "no terminal " + std::string(idv->as_string())));
  Terminal& t = *it->second;
  if (method == "terminal/output") {
    json::object out{{"output", t.output}, {"truncated", t.truncated}};
    if (t.exited) out["exitStatus"] = ExitStatus(t);
    return respond(json::value(std::move(out)));
  }
  if (method == "terminal/wait_for_exit") {
    if (t.exited) return respond(ExitStatus(t));
    t.waiters.push_back(std::move(respond));
    return;
  }
  if (method == "terminal/kill") {
    if (!t.exited) t.child->Terminate(limits_.kill_plan, nullptr);
    return respond(json::value(json::object{}));
  }
  if (method == "terminal/release") {
    auto waiters = std::move(t.waiters);
    terminals_.erase(it);  // kills the command if it still runs; no handler runs after this
    for (Respond& w : waiters) w(Error(ErrorCode::kNotFound, "terminal released"));
    return respond(json::value(json::object{}));
  }
  respond(Error(ErrorCode::kNotFound, "unknown method " + method));
}

}  // namespace agentstream::providers::acp
