// What the daemon writes to the `claude` CLI (stdin lines of the stream-json control protocol,
// docs/providers.md, "The claude provider"), how it starts it (argv, environment), and where and
// how it reads the CLI's transcript file. Pure functions.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/turn/provider_event.h"

namespace agentstream::providers::claude {

struct LaunchOptions {
  std::string program = "claude";  // path or name of the CLI
  std::string cwd;                 // the agent's working directory (required)
  std::string session_id;          // pinned with --session-id (a new session)
  bool resume = false;             // --resume session_id instead (an existing session)
  std::optional<std::string> model;
  std::optional<std::string> permission_mode;  // default | acceptEdits | bypassPermissions | plan
  std::vector<std::string> extra_args;
  // Environment of the CLI: exactly these entries ("KEY=value"), plus the offline-safety
  // entries of OfflineSafetyEnv() unless already present. Empty: the daemon's environment.
  std::vector<std::string> env;
};

// `claude --output-format stream-json --verbose --input-format stream-json
//  --permission-prompt-tool stdio --include-partial-messages --replay-user-messages
//  (--session-id|--resume) ID ...`
std::vector<std::string> BuildArgv(const LaunchOptions& options);

// The environment: options.env (or the daemon's) plus CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
// DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER (set to 1 unless given), and
// without NODE_OPTIONS.
std::vector<std::string> BuildEnv(const LaunchOptions& options);

// A prompt. `uuid` (optional) comes back in the CLI's replay of the message
// (--replay-user-messages) when the CLI takes the prompt into its conversation.
std::string UserMessageLine(std::string_view text, std::string_view uuid = {});
std::string InitializeLine(std::string_view request_id);
std::string InterruptLine(std::string_view request_id);
std::string SetPermissionModeLine(std::string_view request_id, std::string_view mode);
std::string SetModelLine(std::string_view request_id, std::string_view model);
std::string SetThinkingLine(std::string_view request_id, std::optional<int> max_tokens);
// The answer to a can_use_tool request: allow (with the tool's original input) or deny.
std::string PermissionAllowLine(std::string_view request_id, const boost::json::value& input,
                                std::string_view tool_use_id);
std::string PermissionDenyLine(std::string_view request_id, std::string_view message);
// An error answer to a control request we do not support.
std::string ControlErrorLine(std::string_view request_id, std::string_view error);

// The directory of `cwd`'s transcripts under $HOME/.claude/projects: `cwd` with every
// non-alphanumeric byte as '-'.
std::string ProjectDirName(std::string_view cwd);

// $HOME/.claude/projects/<ProjectDirName(cwd)>/<session_id>.jsonl
std::string TranscriptPath(std::string_view home, std::string_view cwd,
                           std::string_view session_id);

// A transcript file's text (one JSON object per line) read as history.
struct Transcript {
  std::string session_id;  // the first line's sessionId ("" when none names one)
  std::string cwd;         // the first line's cwd
  std::vector<turn::ProviderEvent> events;
  std::size_t lines = 0;      // lines read (an empty one is not counted)
  std::size_t malformed = 0;  // of those, lines that are not a JSON object
  // Of those, records that carry no history, by type (queue-operation, attachment, summary, ...,
  // "user.meta" for the CLI's own meta prompts, "user.sidechain" / "assistant.sidechain" for a
  // sub-agent's records, and any type this build does not know).
  std::map<std::string, std::size_t> skipped;
};

// Reads every line of `text`; a last line without its '\n' is read too. User prompts become
// ProviderUserEcho (their uuid as message id; tool results as ProviderToolEnd), assistant messages
// start, one delta with all their text, stop; tool_use blocks ProviderToolStart.
Transcript ReadTranscript(std::string_view text);

// ReadTranscript's events only: unparseable lines are skipped (a transcript being written may
// end in a partial line).
std::vector<turn::ProviderEvent> ParseTranscript(std::string_view text);

// A fresh random (version 4) UUID, for --session-id.
std::string NewSessionUuid();

}  // namespace agentstream::providers::claude
