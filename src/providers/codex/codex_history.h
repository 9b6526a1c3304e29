// The past of a codex thread as provider events, for StreamHistory() (hydration only): the turns
// `thread/turns/list` returns with `itemsView: "full"` (docs/providers.md, "The codex provider")
// mapped the way CodexProvider maps the same items live, each item complete at once. Pure: no I/O.
//
//   userMessage    -> ProviderUserEcho (its text blocks joined)
//   agentMessage   -> ProviderMessageStart, ProviderTextDelta (the whole text), ProviderMessageStop
//   reasoning      -> ProviderReasoningDelta (summary, else content), when it has text
//   any other item -> ProviderToolStart (name = the item type, title = its command) and
//                     ProviderToolEnd (status and aggregatedOutput, as ToolEndOf says)
// Turn boundaries are not events: the history carries messages and tool calls only.
#pragma once

#include <boost/json/object.hpp>
#include <vector>

#include "core/turn/provider_event.h"

namespace agentstream::providers::codex {

// How a finished codex tool item ends, shared by the live and the history mapping: status
// "completed" or none is completed, "inProgress" (left open by an interrupted turn or a crash)
// canceled, anything else ("failed", "declined") failed with the status as its error.
turn::ProviderToolEnd ToolEndOf(const boost::json::object& item);

// Appends the events of one finished item of a stored turn to `out`. Items without an id are
// skipped, as live.
void AppendItemHistory(const boost::json::object& item, std::vector<turn::ProviderEvent>& out);

// Appends the events of every item of one stored turn (a `Turn` of `thread/turns/list`) to `out`.
void AppendTurnHistory(const boost::json::object& turn, std::vector<turn::ProviderEvent>& out);

}  // namespace agentstream::providers::codex
