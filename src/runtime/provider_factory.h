// DefaultProviderFactory: the providers this daemon offers, by name.
//
//   "scripted"  the built-in ScriptedProvider with DemoResponder (below): deterministic replies
//               that look like a real agent's, for demos and tests.
//   "claude"    the `claude` CLI (ClaudeProvider), started in the session's cwd with its model and
//               permission mode; a stored persistence handle reopens the CLI's session (--resume).
//   "acp:gemini", "acp:opencode", "acp:claude"
//               Agent Client Protocol agents (AcpProvider) from the named presets of
//               providers/acp/acp_protocol.h: `gemini --acp [-m MODEL]`, `opencode acp`,
//               `claude-code-acp`; a stored handle reopens the agent's session (session/load).
//   "acp:NAME"  any other ACP agent configured in ProviderFactoryOptions::acp_agents (argv + env).
//   "acp:ID"    an agent of the ACP catalog (providers/acp/acp_catalog.h) that is installed: a
//   known
//               id runs as its preset, any other by the catalog's command and environment.
//   "codex"     `codex app-server` (CodexProvider), its mode the approval policy; a stored handle
//               resumes the thread (thread/resume).
//   "opencode"  an opencode session in one `opencode serve` shared by all opencode agents
//               (OpencodeProvider), its mode the opencode agent (build | plan), its model
//               "providerID/modelID"; a stored handle reopens the opencode session.
//
// Threading: Make() runs on the manager's loop thread; the factory holds no mutable state.
#pragma once

#include <boost/json/value.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/event_loop.h"
#include "providers/acp/acp_catalog.h"
#include "providers/acp/acp_protocol.h"
#include "providers/scripted/scripted_provider.h"
#include "runtime/agent_manager.h"

namespace agentstream::runtime {

struct ProviderFactoryOptions {
  std::string claude_program = "claude";  // path, or a name looked up on PATH
  // The claude CLI's environment, exactly these "KEY=value" entries (plus the offline-safety
  // entries of claude::BuildEnv). Empty: the daemon's environment.
  std::vector<std::string> claude_env;
  std::vector<std::string> claude_extra_args;
  process::Millis claude_handshake_timeout{60000};
  // ACP agents beyond the presets, by provider name ("acp:NAME"): any program that speaks ACP on
  // stdio works by configuration alone. An entry named like a preset replaces it.
  std::map<std::string, providers::acp::AgentCommand> acp_agents;
  // Program (path or PATH name) of each preset, by preset name ("gemini", ...); default: the
  // preset's own (gemini, opencode, claude-code-acp).
  std::map<std::string, std::string> acp_programs;
  // The environment of preset agents, exactly these "KEY=value" entries. Empty: the daemon's.
  std::vector<std::string> acp_env;
  process::Millis acp_handshake_timeout{90000};
  // The known ACP agents, each the provider "acp:ID" once its program is installed (on the PATH of
  // acp_env, else the daemon's). acp_agents and the presets' own names come first.
  providers::acp::Catalog acp_catalog = providers::acp::Catalog::BuiltIn();
  std::string codex_program = "codex";
  std::vector<std::string> codex_env;  // exactly these entries; empty: the daemon's
  std::string opencode_program = "opencode";
  std::vector<std::string> opencode_env;  // exactly these entries; empty: the daemon's
  // The gap between streamed chunks of the scripted agent's replies.
  process::Millis scripted_chunk_gap{15};
};

// The scripted agent's demo script for `prompt`: a short reasoning line, a tool call with its
// output, and a streamed answer in several chunks; when the prompt contains the word
// "permission", the tool call first asks permission; when it contains "[background]", the answer
// also starts a background task that wakes the agent 200 ms later for an autonomous turn (one
// short message). The same prompt always plays the same script.
std::vector<providers::scripted::ScriptStep> DemoResponder(const std::string& prompt,
                                                           process::Millis chunk_gap);

// An agent of the catalog as this daemon would run it.
struct CatalogAgent {
  providers::acp::CatalogEntry entry;
  std::vector<std::string> command;  // as started here (a preset's program setting applied)
  bool installed = false;            // its program is found
};

// GET /v1/catalog's body: {"agents":[{id, provider, name, version, description, repository,
// license, distribution, package, install, command, installed, proven, source}]} (docs/
// providers.md, "The catalog").
boost::json::value CatalogToJson(const std::vector<CatalogAgent>& agents);

class DefaultProviderFactory final : public ProviderFactory {
 public:
  explicit DefaultProviderFactory(ProviderFactoryOptions options = {});

  // kInvalidArgument for an unknown provider name, or a resume handle of another provider.
  Result<std::unique_ptr<providers::AgentProvider>> Make(
      const api::AgentConfig& config, const std::optional<providers::PersistenceHandle>& resume,
      process::EventLoop& loop) override;
  std::vector<std::string> Names() const override;
  // kInvalidArgument, with the command that installs it, for a catalog agent whose program is
  // not found.
  Status CanRun(const std::string& provider) const override;

  // The catalog, by id, with what is installed now.
  std::vector<CatalogAgent> Catalog() const;

 private:
  // The preset's command with `model`: its program setting (acp_programs) and acp_env applied.
  Result<providers::acp::AgentCommand> PresetCommand(const std::string& preset,
                                                     const std::optional<std::string>& model) const;
  // The command of the catalog agent `entry` with `model`, and its environment.
  providers::acp::AgentCommand CatalogCommand(const providers::acp::CatalogEntry& entry,
                                              const std::optional<std::string>& model) const;
  // CatalogCommand, or kInvalidArgument naming how to install it when its program is not found.
  Result<providers::acp::AgentCommand> InstalledCommand(
      const providers::acp::CatalogEntry& entry, const std::optional<std::string>& model) const;

  ProviderFactoryOptions options_;
};

}  // namespace agentstream::runtime
