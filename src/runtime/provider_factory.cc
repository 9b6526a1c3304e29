#include "runtime/provider_factory.h"

#include <unistd.h>

#include <algorithm>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "process/child_process.h"
#include "providers/acp/acp_provider.h"
#include "providers/claude/claude_provider.h"
#include "providers/codex/codex_provider.h"
#include "providers/opencode/opencode_provider.h"

namespace agentstream::runtime {

using providers::scripted::ScriptStep;

namespace {

// `base` (the daemon's own environment when empty, as process::SpawnOptions reads an empty one)
// with `entries` ("KEY=value") set, each replacing the entry of its name; a "KEY=" entry with
// `remove` only takes KEY out.
std::vector<std::string> WithEntries(const std::vector<std::string>& base,
                                     const std::vector<std::string>& entries, bool remove = false) {
  std::vector<std::string> env = base;
  if (env.empty())
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& entry : entries) {
    const std::string name = entry.substr(0, entry.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
    if (!remove) env.push_back(entry);
  }
  return env;
}

// `configured` with AGENTSTREAM_AGENT_ID set to the agent's id, so that what the CLI runs (its
// tools, an `agentstream mcp` server) knows which agent it works for.
std::vector<std::string> EnvironmentFor(const std::vector<std::string>& configured,
                                        const std::optional<SessionId>& agent) {
  constexpr std::string_view kName = "AGENTSTREAM_AGENT_ID=";
  return WithEntries(configured, {std::string(kName) + (agent ? agent->str() : "")}, !agent);
}

bool IsPresetName(const std::string& name) {
  const std::vector<std::string> presets = providers::acp::PresetNames();
  return std::find(presets.begin(), presets.end(), name) != presets.end();
}

}  // namespace

std::vector<ScriptStep> DemoResponder(const std::string& prompt, process::Millis chunk_gap) {
  const bool ask = prompt.find("permission") != std::string::npos;
  const std::string file = prompt.size() % 2 == 0 ? "README.md" : "src/main.cc";
  std::vector<ScriptStep> steps;
  steps.push_back(ScriptStep::Text("Let me look at the project first.", 3, chunk_gap));
  boost::json::object input{{"command", "ls"}};
  if (ask) {
    input = boost::json::object{{"command", "touch notes.txt"}};
    steps.push_back(ScriptStep::Permission("Bash", input, "created notes.txt"));
  } else {
    steps.push_back(ScriptStep::Tool("Bash", input, "README.md\nsrc\ntests\n"));
  }
  steps.push_back(ScriptStep::Delay(chunk_gap));
  steps.push_back(ScriptStep::Text("I read " + file + ". Here is what I found: the project " +
                                       "builds with CMake and its tests sit next to the code. " +
                                       "You asked: " + prompt,
                                   6, chunk_gap));
  if (prompt.find("[background]") != std::string::npos) {
    steps.push_back(ScriptStep::Background(
        "wait for the build", process::Millis(200),
        {ScriptStep::Text("The background task finished: the build passed.", 2, chunk_gap)}));
  }
  return steps;
}

DefaultProviderFactory::DefaultProviderFactory(ProviderFactoryOptions options)
    : options_(std::move(options)) {}

Result<std::unique_ptr<providers::AgentProvider>> DefaultProviderFactory::Make(
    const api::AgentConfig& config, const std::optional<providers::PersistenceHandle>& resume,
    process::EventLoop& loop) {
  if (resume && resume->provider != config.provider) {
    return Error(ErrorCode::kInvalidArgument,
                 "the stored runtime handle belongs to provider " + resume->provider);
  }
  if (config.provider == "scripted") {
    const process::Millis gap = options_.scripted_chunk_gap;
    return std::unique_ptr<providers::AgentProvider>(
        std::make_unique<providers::scripted::ScriptedProvider>(
            loop.timers(),
            [gap](const std::string& prompt) { return DemoResponder(prompt, gap); }));
  }
  if (config.provider == "claude") {
    providers::claude::ClaudeOptions options;
    options.launch.program = options_.claude_program;
    options.launch.cwd = config.cwd;
    options.launch.model = config.model;
    options.launch.permission_mode = config.mode;
    options.launch.env = EnvironmentFor(options_.claude_env, config.session_id);
    options.launch.extra_args = options_.claude_extra_args;
    if (resume && !resume->session_id.empty()) {
      options.launch.session_id = resume->session_id;
      options.launch.resume = true;
    }
    options.handshake_timeout = options_.claude_handshake_timeout;
    return std::unique_ptr<providers::AgentProvider>(
        std::make_unique<providers::claude::ClaudeProvider>(loop, std::move(options)));
  }
  if (config.provider == "codex") {
    providers::codex::CodexOptions options;
    options.program = options_.codex_program;
    options.env = EnvironmentFor(options_.codex_env, config.session_id);
    options.cwd = config.cwd;
    options.model = config.model;
    if (config.mode) options.approval_policy = *config.mode;
    if (resume) options.thread_id = resume->session_id;
    return std::unique_ptr<providers::AgentProvider>(
        std::make_unique<providers::codex::CodexProvider>(loop, std::move(options)));
  }
  if (config.provider == "opencode") {
    providers::opencode::OpencodeOptions options;
    options.server.program = options_.opencode_program;
    options.server.env = EnvironmentFor(options_.opencode_env, config.session_id);
    options.cwd = config.cwd;
    options.model = config.model;
    if (config.mode) options.mode = *config.mode;
    if (resume) options.session_id = resume->session_id;
    return std::unique_ptr<providers::AgentProvider>(
        std::make_unique<providers::opencode::OpencodeProvider>(loop, std::move(options)));
  }
  if (config.provider.rfind("acp:", 0) == 0) {
    providers::acp::AcpOptions options;
    const std::string id = config.provider.substr(4);
    const providers::acp::CatalogEntry* listed = options_.acp_catalog.Find(id);
    if (auto it = options_.acp_agents.find(config.provider); it != options_.acp_agents.end()) {
      options.command = it->second;
      options.command.name = config.provider;  // persistence handles carry it
    } else if (listed != nullptr && !IsPresetName(id)) {
      AS_ASSIGN_OR_RETURN(options.command, InstalledCommand(*listed, config.model));
    } else {
      AS_ASSIGN_OR_RETURN(options.command, PresetCommand(id, config.model));
    }
    options.command.env = EnvironmentFor(options.command.env, config.session_id);
    options.cwd = config.cwd;
    options.mode = config.mode;
    if (resume) options.session_id = resume->session_id;
    options.handshake_timeout = options_.acp_handshake_timeout;
    return std::unique_ptr<providers::AgentProvider>(
        std::make_unique<providers::acp::AcpProvider>(loop, std::move(options)));
  }
  return Error(ErrorCode::kInvalidArgument, "unknown provider \"" + config.provider + "\"");
}

std::vector<std::string> DefaultProviderFactory::Names() const {
  std::vector<std::string> names = {"claude", "codex", "opencode", "scripted"};
  for (const std::string& preset : providers::acp::PresetNames()) names.push_back("acp:" + preset);
  const auto add = [&names](std::string name) {
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  };
  for (const auto& [name, command] : options_.acp_agents) add(name);
  for (const providers::acp::CatalogEntry& entry : options_.acp_catalog.entries())
    add("acp:" + entry.id);
  return names;
}

Status DefaultProviderFactory::CanRun(const std::string& provider) const {
  AS_RETURN_IF_ERROR(ProviderFactory::CanRun(provider));
  if (!provider.starts_with("acp:") || options_.acp_agents.contains(provider)) return Status::Ok();
  const std::string id = provider.substr(4);
  const providers::acp::CatalogEntry* listed = options_.acp_catalog.Find(id);
  if (listed == nullptr || IsPresetName(id)) return Status::Ok();
  return InstalledCommand(*listed, std::nullopt).status();
}

Result<providers::acp::AgentCommand> DefaultProviderFactory::PresetCommand(
    const std::string& preset, const std::optional<std::string>& model) const {
  auto program = options_.acp_programs.find(preset);
  AS_ASSIGN_OR_RETURN(
      providers::acp::AgentCommand command,
      providers::acp::Preset(preset, model,
                             program == options_.acp_programs.end() ? "" : program->second));
  command.env = options_.acp_env;
  return command;
}

providers::acp::AgentCommand DefaultProviderFactory::CatalogCommand(
    const providers::acp::CatalogEntry& entry, const std::optional<std::string>& model) const {
  providers::acp::AgentCommand command;
  if (!entry.preset.empty()) {
    if (Result<providers::acp::AgentCommand> preset = PresetCommand(entry.preset, model);
        preset.ok())
      command = std::move(*preset);
  }
  if (command.argv.empty()) {
    command.argv = entry.command;
    command.env = entry.env.empty() ? options_.acp_env : WithEntries(options_.acp_env, entry.env);
  }
  command.name = "acp:" + entry.id;
  return command;
}

Result<providers::acp::AgentCommand> DefaultProviderFactory::InstalledCommand(
    const providers::acp::CatalogEntry& entry, const std::optional<std::string>& model) const {
  providers::acp::AgentCommand command = CatalogCommand(entry, model);
  if (!process::FindProgram(command.argv.front(), command.env)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("acp:{} ({}) is in the ACP catalog but its program {} is not "
                             "installed on this daemon; install it with: {}",
                             entry.id, entry.name, command.argv.front(),
                             providers::acp::InstallHint(entry)));
  }
  return command;
}

std::vector<CatalogAgent> DefaultProviderFactory::Catalog() const {
  std::vector<CatalogAgent> agents;
  for (const providers::acp::CatalogEntry& entry : options_.acp_catalog.entries()) {
    CatalogAgent agent{entry, {}, false};
    providers::acp::AgentCommand command = CatalogCommand(entry, std::nullopt);
    agent.installed = process::FindProgram(command.argv.front(), command.env).has_value();
    agent.command = std::move(command.argv);
    agents.push_back(std::move(agent));
  }
  return agents;
}

boost::json::value CatalogToJson(const std::vector<CatalogAgent>& agents) {
  boost::json::array list;
  for (const CatalogAgent& agent : agents) {
    const providers::acp::CatalogEntry& e = agent.entry;
    boost::json::array command;
    for (const std::string& word : agent.command) command.emplace_back(word);
    list.push_back(boost::json::object{
        {"id", e.id},
        {"provider", "acp:" + e.id},
        {"name", e.name},
        {"version", e.version},
        {"description", e.description},
        {"repository", e.repository},
        {"license", e.license},
        {"distribution", e.distribution},
        {"package", e.package},
        {"install", providers::acp::InstallHint(e)},
        {"command", std::move(command)},
        {"installed", agent.installed},
        {"proven", !e.preset.empty()},
        {"source", e.source},
    });
  }
  return boost::json::object{{"agents", std::move(list)}};
}

}  // namespace agentstream::runtime
