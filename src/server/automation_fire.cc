#include "server/automation_fire.h"

#include <memory>
#include <utility>

#include "core/event_codec.h"
#include "server/workspace_routes.h"

namespace agentstream::server {

namespace {

using Done = std::function<void(Result<AutomationResult>)>;

// Steps 2 and 3 on `agent`.
void Prompt(runtime::AgentManager& agents, const std::shared_ptr<AutomationFiring>& firing,
            const SessionId& agent, Done done) {
  ProducerStamp stamp{ProducerId(firing->key), 0, 0};
  std::vector<NewEvent> events;
  events.push_back(MakeNewEvent(firing->fired));
  agents.AppendForeign(
      agent, std::move(events), stamp,
      [&agents, firing, agent, done = std::move(done)](const Result<AppendResult>& recorded) {
        if (!recorded.ok()) return done(recorded.status());
        const bool duplicate = recorded->duplicate;
        api::SendRequest send;
        send.client_message_id = firing->key;
        send.text = firing->prompt;
        agents.Send(agent, std::move(send), [agent, duplicate, done](Result<api::SendReply> sent) {
          if (!sent.ok()) return done(sent.status());
          done(AutomationResult{agent, std::move(*sent), duplicate});
        });
      });
}

}  // namespace

void FireAutomation(runtime::AgentManager& agents, WorkspaceRoutes* workspaces,
                    AutomationFiring firing, Done done) {
  auto shared = std::make_shared<AutomationFiring>(std::move(firing));
  if (shared->agent) return Prompt(agents, shared, *shared->agent, std::move(done));
  if (!shared->create)
    return done(Error(ErrorCode::kInvalidArgument, "an automation needs an agent or a template"));
  api::AgentConfig config = std::move(*shared->create);
  config.client_request_id = shared->key;
  auto created = [&agents, shared, done](Result<api::AgentSnapshot> agent) {
    if (!agent.ok()) return done(agent.status());
    Prompt(agents, shared, agent->id, done);
  };
  if (!shared->worktree) return agents.Create(std::move(config), std::move(created));
  if (workspaces == nullptr)
    return done(Error(ErrorCode::kInvalidArgument, "this daemon makes no worktrees"));
  workspaces->CreateWithWorktree(std::move(config), {}, std::move(created));
}

}  // namespace agentstream::server
