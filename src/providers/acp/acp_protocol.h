// The Agent Client Protocol (ACP, schema v1) as plain values: the agent command configuration and
// its named presets (the JSON-RPC 2.0 lines are jsonrpc/json_rpc.h), and AcpUpdateMapper, which
// turns `session/update` notifications and permission requests into normalized provider events.
// No I/O (the provider in acp_provider.h owns the process); see docs/providers.md, "The acp
// provider".
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/turn/provider_event.h"

namespace agentstream::providers::acp {

// How to start one ACP agent: any program that speaks ACP on stdin/stdout works by configuration.
struct AgentCommand {
  std::string name;               // shown as the runtime's provider name ("acp:gemini")
  std::vector<std::string> argv;  // argv[0]: a path or a name looked up on PATH
  // The agent's environment, exactly these "KEY=value" entries. Empty: the daemon's environment.
  std::vector<std::string> env;
  // How long the agent goes on writing its own history after it answered a prompt: closing the
  // agent waits until this long after the last turn ended before it closes stdin, so that a
  // session resumed later has that turn's reply (qwen-code records it after answering).
  std::chrono::milliseconds settle_after_turn{0};
  // How long the agent goes on ending a turn after it answered its prompt with an error: the next
  // prompt is held until this long after such an answer (codex-acp answers a failed prompt before
  // its own turn has ended, and drops a prompt that arrives in between).
  std::chrono::milliseconds settle_after_failed_turn{0};
};

// Named presets: "gemini" (`gemini --acp`, plus `-m MODEL` when a model is given: the CLI's
// default "auto" router is avoided), "opencode" (`opencode acp`), "claude" (the Claude ACP
// adapter `claude-code-acp`), "claude-agent", "codex" (`codex-acp`), "qwen" (`qwen --acp`). The
// Claude adapters and qwen settle for a second after a turn before their stdin closes; codex-acp
// settles for a second after a failed turn before its next prompt. kNotFound
// for another name. `program` overrides argv[0].
Result<AgentCommand> Preset(const std::string& name, const std::optional<std::string>& model,
                            const std::string& program = {});
std::vector<std::string> PresetNames();

// `path` (absolute, as ACP requires) resolved lexically and through existing symlinks; refused
// (kInvalidArgument) unless it lies inside `root` (the session's cwd).
Result<std::string> ConfinePath(const std::string& root, const std::string& path);

// The text of an ACP ContentBlock: text blocks verbatim, resource text, "[image]"-style
// placeholders for binary blocks.
std::string ContentText(const boost::json::value& block);

// A permission option of the agent, by kind.
struct AcpOption {
  std::string id;
  std::string kind;  // allow_once | allow_always | reject_once | reject_always
  std::string name;
};

// Picks the option for `allow`: allow_once, else allow_always (reject_once, else reject_always
// for a denial). Empty when the agent offered no option of that sense.
std::optional<std::string> ChooseOption(const std::vector<AcpOption>& options, bool allow);

// Maps session/update notifications to provider events. Keeps the little state ACP needs for
// that: the open assistant message (chunks carry no start/stop), tool calls already announced,
// their latest content, and the agent's commands and mode. `id_prefix` makes the message ids it
// invents unique across agent processes of one session log.
class AcpUpdateMapper {
 public:
  explicit AcpUpdateMapper(std::string id_prefix) : prefix_(std::move(id_prefix)) {}

  // Events for one `session/update` params object ({sessionId, update:{sessionUpdate, ...}}).
  std::vector<turn::ProviderEvent> Map(const boost::json::value& params);
  // A permission request's toolCall, announced as a tool start unless already known.
  std::vector<turn::ProviderEvent> AnnounceToolCall(const boost::json::object& tool_call);
  // Ends a tool call the client settled itself (a denied permission: some agents send nothing).
  std::vector<turn::ProviderEvent> EndTool(const std::string& id, ToolCallStatus status,
                                           std::string error);
  // Ends the open assistant message (at the end of a turn, before a tool call).
  std::vector<turn::ProviderEvent> CloseMessage(std::optional<std::string> stop_reason);
  // Ends every tool call still open (the turn ended without their completion).
  std::vector<turn::ProviderEvent> CloseTools(ToolCallStatus status);

  struct Command {
    std::string name;
    std::string description;
  };
  const std::vector<Command>& commands() const { return commands_; }
  // The kind a tool call was announced with ("" when unknown).
  std::string KindOf(const std::string& call_id) const {
    auto it = tool_kind_.find(call_id);
    return it == tool_kind_.end() ? std::string() : it->second;
  }
  const std::string& mode() const { return mode_; }
  void set_mode(std::string mode) { mode_ = std::move(mode); }

 private:
  void Chunk(const boost::json::object& u, bool thought, std::vector<turn::ProviderEvent>& out);
  void Tool(const boost::json::object& u, std::vector<turn::ProviderEvent>& out);
  MessageId NewMessageId(std::string_view kind);

  std::string prefix_;
  std::uint64_t next_id_ = 1;
  std::optional<MessageId> open_message_;   // assistant text being streamed
  std::optional<std::string> open_source_;  // the agent's messageId of it, when it gave one
  std::optional<MessageId> open_thought_;
  std::set<std::string> tools_started_, tools_ended_;
  std::map<std::string, std::string> tool_output_;  // latest content text per open tool call
  std::map<std::string, std::string> tool_kind_;    // of the tool calls of the current turn
  std::vector<Command> commands_;
  std::string mode_;
};

}  // namespace agentstream::providers::acp
