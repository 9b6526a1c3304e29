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
//   "codex"     `codex app-server` (CodexProvider), its mode the approval policy; a stored handle
//               resumes the thread (thread/resume).
//   "opencode"  an opencode session in one `opencode serve` shared by all opencode agents
//               (OpencodeProvider), its mode the opencode agent (build | plan), its model
//               "providerID/modelID"; a stored handle reopens the opencode session.
//
// Threading: Make() runs on the manager's loop thread; the factory holds no mutable state.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/event_loop.h"
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

class DefaultProviderFactory final : public ProviderFactory {
 public:
  explicit DefaultProviderFactory(ProviderFactoryOptions options = {});

  // kInvalidArgument for an unknown provider name, or a resume handle of another provider.
  Result<std::unique_ptr<providers::AgentProvider>> Make(
      const api::AgentConfig& config, const std::optional<providers::PersistenceHandle>& resume,
      process::EventLoop& loop) override;
  std::vector<std::string> Names() const override;

 private:
  ProviderFactoryOptions options_;
};

}  // namespace agentstream::runtime
