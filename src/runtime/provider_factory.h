// DefaultProviderFactory: the providers this daemon offers, by name.
//
//   "scripted"  the built-in ScriptedProvider with DemoResponder (below): deterministic replies
//               that look like a real agent's, for demos and tests.
//   "claude"    the `claude` CLI (ClaudeProvider), started in the session's cwd with its model and
//               permission mode; a stored persistence handle reopens the CLI's session (--resume).
//
// Threading: Make() runs on the manager's loop thread; the factory holds no mutable state.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/event_loop.h"
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
  // The gap between streamed chunks of the scripted agent's replies.
  process::Millis scripted_chunk_gap{15};
};

// The scripted agent's demo script for `prompt`: a short reasoning line, a tool call with its
// output, and a streamed answer in several chunks; when the prompt contains the word
// "permission", the tool call first asks permission. The same prompt always plays the same script.
std::vector<providers::scripted::ScriptStep> DemoResponder(const std::string& prompt,
                                                           process::Millis chunk_gap);

class DefaultProviderFactory final : public ProviderFactory {
 public:
  explicit DefaultProviderFactory(ProviderFactoryOptions options = {});

  // kInvalidArgument for an unknown provider name, or a resume handle of another provider.
  Result<std::unique_ptr<providers::AgentProvider>> Make(
      const AgentConfig& config, const std::optional<providers::PersistenceHandle>& resume,
      process::EventLoop& loop) override;
  std::vector<std::string> Names() const override { return {"claude", "scripted"}; }

 private:
  ProviderFactoryOptions options_;
};

}  // namespace agentstream::runtime
