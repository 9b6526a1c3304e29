// `agentstream check [SESSION]`: runs the invariant checker of the turns (docs/timeline.md:
// a-e) over stored session logs, and two checks of the store: every event was appended by the
// session's owner of the time (o: no event of a stale ownership generation after a takeover), and
// a session nobody runs stores the status its log replays to (s: no stuck "running"; skipped with
// --allow-open). Reports every violation with its cursor.
#pragma once

#include <string>

namespace agentstream::cli {

struct CheckCommand {
  std::string store_url;
  std::string session;      // empty: every stored session
  bool allow_open = false;  // a turn still running at a session's tail is not a violation
  bool json = false;        // one JSON object per violation
};

// Returns the process exit code: 0 when every checked log satisfies the invariants, 1 when any
// violation or unreadable event was found, 2 when the store cannot be opened.
int RunCheck(const CheckCommand& command);

}  // namespace agentstream::cli
