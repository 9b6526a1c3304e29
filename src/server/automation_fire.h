// Fires an automation (a trigger's delivery, a schedule's tick) exactly once by its key
// (docs/automation.md, "Exactly once"). Three steps, each idempotent, so that firing the same key
// again, on any daemon and after a crash at any instant, repeats none of them:
//   1. for a template, the agent is created with the client request id KEY (one agent per key:
//      its session id is derived from it);
//   2. `fired` (automation.fired) is appended to the agent's log under the producer stamp KEY
//      (one event per key);
//   3. the prompt is sent with the client message id KEY (one turn per key; an agent remembers
//      its last 4,096 client message ids).
//
// Threading: Fire() from any thread; `done` runs once, on the AgentManager's thread (or the
// worktree worker's, for a template with a worktree).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "api/agent_types.h"
#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"
#include "runtime/agent_manager.h"

namespace agentstream::server {

class WorkspaceRoutes;

struct AutomationFiring {
  std::string key;  // "trigger:ID:DELIVERY", "schedule:ID:TICK"
  // Where the prompt goes: an existing agent, or a new agent made from `create` (its
  // client_request_id is set to the key), in a worktree of its own when `worktree`.
  std::optional<SessionId> agent;
  std::optional<api::AgentConfig> create;
  bool worktree = false;
  AutomationFired fired;
  std::string prompt;
};

struct AutomationResult {
  SessionId agent;
  api::SendReply sent;
  bool duplicate = false;  // the key had fired before: nothing new was appended
};

// `workspaces` may be null (a template with a worktree is then refused, kInvalidArgument).
void FireAutomation(runtime::AgentManager& agents, WorkspaceRoutes* workspaces,
                    AutomationFiring firing, std::function<void(Result<AutomationResult>)> done);

}  // namespace agentstream::server
