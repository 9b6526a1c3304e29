// Events that every client shows as one line of text: `follow`, and the notice the timeline
// projects each to. Pure.
#pragma once

#include <string>

#include "core/event.h"

namespace agentstream {

// "git merge fast-forward 1a2b3c4d5e6f into main", "git commit committed 1a2b3c4d5e6f: Fix it",
// "git merge conflict into main: 1 file(s) conflict; nothing merged: a.txt" (at most 10 files
// named, then "and N more").
std::string WorkspaceActionText(const WorkspaceAction& action);

// Whether git would not do it (a merge's conflict, a refused push): nothing changed.
bool WorkspaceActionRefused(const WorkspaceAction& action);

// "trigger issues: delivery 72d3162e (issues)", then "; missing fields: issue.labels.0.name"
// (docs/automation.md).
std::string AutomationFiredText(const AutomationFired& fired);

}  // namespace agentstream
