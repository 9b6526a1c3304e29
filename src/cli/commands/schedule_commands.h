// `agentstream schedules ...`: schedules that prompt agents on a clock, through the daemon's HTTP
// API (docs/automation.md, "Schedules"; docs/cli.md).
#pragma once

#include <optional>
#include <string>

#include "cli/commands/commands.h"

namespace agentstream::cli {

struct NewScheduleOptions {
  std::string id;
  std::string cron, timezone, every;  // cron (with its time zone) or every
  std::string agent;                  // an existing agent, or a template:
  std::string provider, cwd, model, mode, title;
  bool worktree = false;
  std::string prompt;
  std::string missed;  // "skip" or "run-once"; empty: the daemon's default (skip)
};

int ListSchedules(const ClientContext& context);
int NewSchedule(const ClientContext& context, const NewScheduleOptions& options);
// The schedule with its last firings and their turns' outcomes.
int ShowSchedule(const ClientContext& context, const std::string& id);
int PauseSchedule(const ClientContext& context, const std::string& id, bool paused);
int RemoveSchedule(const ClientContext& context, const std::string& id);

}  // namespace agentstream::cli
