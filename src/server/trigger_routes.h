// TriggerRoutes: POST /v1/triggers/{id}, an outside event (a GitHub webhook, a script with the
// owner's or a device's token) made a prompt (docs/automation.md, "Triggers").
//
// A delivery is authenticated by its X-Hub-Signature-256 (HMAC-SHA256 of the body with the
// trigger's secret, checked here; the transport admits a request that carries one without a
// token, IsTriggerDelivery), or by the credential the transport admitted it with. It is made
// exactly once by its delivery id (X-GitHub-Delivery, else Idempotency-Key), KEY below, on any
// daemon and across crashes, by FireAutomation's three idempotent steps (automation_fire.h)
// under the key "trigger:ID:KEY", each redone by a redelivery.
// A redelivery answers the same agent and client message id, `duplicate: true`.
//
// Threading: Handle() from any thread; the reply runs on the AgentManager's thread (or the
// worktree worker's, for a template with a worktree).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/agent_manager.h"
#include "server/http_types.h"
#include "server/triggers.h"

namespace agentstream::server {

class WorkspaceRoutes;

// True for a POST /v1/triggers/{id} that carries X-Hub-Signature-256: the transport admits it
// without a token, and TriggerRoutes checks the signature.
bool IsTriggerDelivery(const HttpRequest& request);

class TriggerRoutes {
 public:
  // `workspaces` (for templates with a worktree) may be null; both outlive the routes.
  TriggerRoutes(runtime::AgentManager& agents, WorkspaceRoutes* workspaces,
                std::vector<Trigger> triggers);

  // Handles POST /v1/triggers/{id} (true); leaves any other request (false).
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg,
              const std::function<void(HttpResponse)>& reply);

  const std::vector<Trigger>& triggers() const { return triggers_; }

 private:
  struct Delivery;

  runtime::AgentManager& agents_;
  WorkspaceRoutes* workspaces_;
  std::vector<Trigger> triggers_;
};

}  // namespace agentstream::server
