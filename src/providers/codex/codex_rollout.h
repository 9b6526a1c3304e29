// A codex CLI session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, one JSON object
// per line: `{"timestamp","type","payload"}`) read as history in provider events, the form the
// turn engine takes. Pure: no I/O.
//
//   session_meta                          the session's id and cwd (the first one)
//   event_msg user_message, or item_completed of a UserMessage item (codex 0.171)
//                                         ProviderUserEcho (the person's text, without the
//                                         context codex adds to the model's input; its message
//                                         id names the line's offset)
//   response_item message (assistant)     ProviderMessageStart, ProviderTextDelta (its output text
//                                         blocks joined), ProviderMessageStop
//   response_item reasoning               ProviderReasoningDelta (its summary), when it has text
//   response_item function_call, custom_tool_call, local_shell_call
//                                         ProviderToolStart (name, input: the arguments as JSON
//                                         when they parse, else as text)
//   response_item *_call_output           ProviderToolEnd (completed, with the output text)
//   event_msg task_complete               ProviderTurnResult completed
//   event_msg turn_aborted                ProviderTurnResult canceled (the reason as its message)
// Other lines (turn_context, token_count, developer and context messages, ...) carry no history:
// they are skipped and counted by type ("turn_context", "event_msg.token_count",
// "response_item.message"); a line that is not a JSON object is skipped and counted. What the
// file names no id of gets one made of its line's offset in the file ("rollout_msg_<offset>"),
// the same on every read of the file, whole or from any line on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/turn/provider_event.h"

namespace agentstream::providers::codex {

struct Rollout {
  std::string session_id;  // "" when no session_meta line names one
  std::string cwd;
  std::vector<turn::ProviderEvent> events;
  std::size_t lines = 0;                       // lines read (an empty one is not counted)
  std::size_t malformed = 0;                   // of those, lines that are not a JSON object
  std::map<std::string, std::size_t> skipped;  // of those, records with no history, by type
};

// Reads every line of `text`, which starts at byte `offset` of its file; a last line without its
// '\n' is read too.
Rollout ParseRollout(std::string_view text, std::uint64_t offset = 0);

}  // namespace agentstream::providers::codex
