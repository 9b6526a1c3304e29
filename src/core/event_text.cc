#include "core/event_text.h"

namespace agentstream {

namespace {
constexpr std::size_t kFilesNamed = 10;
}  // namespace

std::string WorkspaceActionText(const WorkspaceAction& action) {
  std::string text = "git " + action.action + " " + action.outcome;
  if (action.commit) text += " " + action.commit->substr(0, 12);
  if (action.target) text += (action.action == "push" ? " to " : " into ") + *action.target;
  if (action.url) text += " " + *action.url;
  if (action.message) text += ": " + *action.message;
  for (std::size_t i = 0; i < action.files.size() && i < kFilesNamed; ++i)
    text += (i == 0 ? ": " : ", ") + action.files[i];
  if (action.files.size() > kFilesNamed)
    text += " and " + std::to_string(action.files.size() - kFilesNamed) + " more";
  return text;
}

bool WorkspaceActionRefused(const WorkspaceAction& action) {
  return action.outcome == "conflict" || action.outcome == "refused" || action.outcome == "failed";
}

std::string AutomationFiredText(const AutomationFired& fired) {
  std::string text = fired.source + " " + fired.id + ": " +
                     (fired.source == "trigger" ? "delivery " : "tick ") + fired.key;
  if (fired.event) text += " (" + *fired.event + ")";
  for (std::size_t i = 0; i < fired.missing_fields.size(); ++i)
    text += (i == 0 ? "; missing fields: " : ", ") + fired.missing_fields[i];
  return text;
}

}  // namespace agentstream
