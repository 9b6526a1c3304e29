// FollowRenderer: turns a session's log events, in log order, into the text `agentstream follow`
// writes to a terminal. Pure: events in, text out; no I/O, no clock. The follow command feeds it
// every event exactly once (it de-duplicates by cursor) and writes what it returns.
//
// What it shows: assistant text as it streams (deltas appended to the same paragraph), reasoning
// prefixed "(thinking)" and dimmed on a terminal, each tool call as one line with its status
// (on a terminal the line shows "running" and is rewritten in place when the call ends, if
// nothing was printed since; otherwise one line when the call ends), user messages ("> "), turn
// boundaries with their outcome, a completed file edit's change as diff lines under its tool line
// (edit_diff.h, bounded), permission requests with the commands that answer them and
// their resolution, plans, errors, notices, mode and model changes, usage.
//
// Bounds: it remembers at most kMaxOpenCalls tool calls and kMaxPending permission requests that
// have not ended (the oldest is forgotten first); tool summaries are cut to kMaxSummaryChars.
//
// Threading: not thread-safe; one renderer per followed session.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/event_codec.h"

namespace agentstream::cli {

struct RenderOptions {
  bool tty = false;                     // ANSI styles and in-place tool-call lines
  std::string agent;                    // the followed agent, for the answer commands shown
  std::string program = "agentstream";  // the command name shown in those commands
  bool interactive = false;             // permissions can be answered inline ([a]llow / [d]eny)
};

// A permission request still waiting for an answer.
struct PendingRequest {
  std::string request_id;
  std::string title;
  friend bool operator==(const PendingRequest&, const PendingRequest&) = default;
};

class FollowRenderer {
 public:
  static constexpr std::size_t kMaxOpenCalls = 1024;
  static constexpr std::size_t kMaxPending = 256;
  static constexpr std::size_t kMaxSummaryChars = 80;

  explicit FollowRenderer(RenderOptions options) : options_(std::move(options)) {}

  // The text for `record`, possibly empty. A record whose payload does not decode renders as a
  // one-line warning naming its cursor; it never stops the renderer. A record of a newer epoch
  // than the last one (the history was rewound) first renders a line saying so.
  std::string Render(const EventRecord& record);

  // Ends a line left open (streaming text, a running tool call) so other output can follow;
  // returns the text to write ("" when no line is open).
  std::string CloseLine();

  // Permission requests seen and not yet resolved, oldest first.
  const std::deque<PendingRequest>& pending() const { return pending_; }

 private:
  enum class Open { kNone, kAssistant, kReasoning, kTool };
  Epoch epoch_;  // of the last record rendered; 0 before the first
  struct Call {
    std::string name;
    std::string summary;
    std::vector<std::string> edit;  // a file edit's lines (edit_diff.h), shown when it completes
  };

  std::string RenderRecord(const EventRecord& record);
  std::string RenderPayload(const Event& event);  // turns, messages, tools, permissions
  std::string RenderOther(const Event& event);    // plans, errors, notices, mode, usage
  std::string RenderSession(const Event& event);  // session, authorization, sub-agent
  std::string Text(const MessageId& id, const std::string& text, Open kind);
  std::string ToolStart(const ToolCallStart& start);
  std::string ToolEnd(const ToolCallEnd& end);
  std::string Permission(const PermissionRequested& request);
  std::string Resolved(const PermissionResolved& resolved);
  std::string TurnLine(const Event& event, const std::string& what);
  std::string Line(const std::string& text, const char* style = nullptr);
  std::string Style(const std::string& text, const char* style) const;

  RenderOptions options_;
  Open open_ = Open::kNone;
  std::string open_id_;  // the message or call id of the open line
  std::map<std::string, Call> calls_;
  std::deque<std::string> call_order_;  // for the bound, oldest first
  std::deque<PendingRequest> pending_;
};

}  // namespace agentstream::cli
