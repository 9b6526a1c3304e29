// WorkspaceRoutes: the endpoints of agents' git worktrees (docs/workspaces.md).
//
//   POST   /v1/agents {..., worktree: {branch?, base?}}   make a worktree, start the agent in it
//   POST   /v1/agents/{id}/fork                           of an agent with a worktree: the child
//                                                         gets its own, from the parent's branch
//   DELETE /v1/agents/{id}?removeWorktree=true[&force=true] close, then remove the worktree
//   GET    /v1/agents/{id}/diff[?against=REF&maxBytes=N]  its changes: JSON, or text/x-diff
//   GET    /v1/worktrees                                  every agent's worktree and its state
//   POST   /v1/agents/{id}/git/{commit|merge|push|discard} a git action on its worktree, recorded
//                                                         as the session's workspace.action
//
// Other requests (and a fork of an agent without a worktree, a DELETE without removeWorktree)
// are left to ApiRouter. A session's worktree is read from its log (its workspace.created
// event), so a restarted daemon finds every worktree again; what was read is cached.
//
// Threading: Handle() may be called from any thread. Git runs on one worker thread of the
// routes' own (never on an I/O thread or the manager's), at most `max_pending` requests waiting
// for it (more are answered 503). Stop() before the AgentManager is shut down.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/agent_manager.h"
#include "server/api_router.h"
#include "server/http_types.h"
#include "store/event_log.h"
#include "workspace/diff.h"
#include "workspace/git_actions.h"
#include "workspace/worktree.h"

namespace agentstream::server {

struct WorkspaceRoutesOptions {
  workspace::DiffLimits diff;  // the default bounds of a diff (maxBytes may ask for up to 8 MiB)
  workspace::GitActionOptions git;  // commits' identity, the push timeout, the gh CLI
  std::size_t max_pending = 16;
};

class WorkspaceRoutes {
 public:
  // Every reference must outlive the routes.
  WorkspaceRoutes(runtime::AgentManager& agents, EventLog& log,
                  const workspace::Worktrees& worktrees,
                  const WorkspaceRoutesOptions& options = {});
  ~WorkspaceRoutes();  // Stop()
  WorkspaceRoutes(const WorkspaceRoutes&) = delete;
  WorkspaceRoutes& operator=(const WorkspaceRoutes&) = delete;

  // Handles the request when it is one of the routes above (true); else leaves it (false).
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg, const Reply& reply);

  // The worktree of session `id` as its log records it; nullopt when it has none. kNotFound for
  // an unknown session; the log's errors.
  Result<std::optional<workspace::Workspace>> Lookup(const SessionId& id);

  // Creates an agent in a new worktree as POST /v1/agents {worktree} does (on the worker);
  // `done` runs once, on the worker's or the manager's thread.
  void CreateWithWorktree(api::AgentConfig config, workspace::WorktreeRequest request,
                          const runtime::Callback<api::AgentSnapshot>& done);

  // Forks `parent` at `at` when it has a worktree, giving the child a worktree of its own
  // (docs/workspaces.md); `done` then runs once, on the worker's or the manager's thread. False
  // when it has none: the caller forks it as any other agent.
  bool ForkWithWorktree(const SessionId& parent, Cursor at,
                        const runtime::Callback<api::AgentSnapshot>& done);

  // Runs the git action `action` (commit, merge, push, pr, discard) with its `body` members on the
  // worktree of `id` and records it (docs/workspaces.md, "Git actions"); `done` runs once, with
  // the result as POST /v1/agents/{id}/git/{action} answers it, on the worker's or the manager's
  // thread. kNotFound for another action, an unknown agent or one without a worktree;
  // kInvalidArgument for a member the action does not take; kConflict while a commit or discard
  // would race the agent's turn; git's errors.
  using GitDone = std::function<void(Result<boost::json::object>)>;
  void GitAction(const SessionId& id, const std::string& action, boost::json::object body,
                 const GitDone& done);

  // Finishes the git command that runs and drops the requests still waiting (unanswered).
  // Idempotent.
  void Stop();

 private:
  class Worker;
  // Runs `job` on the worker, or answers 503 when max_pending jobs wait.
  void Post(const Reply& reply, std::function<void()> job);

  void Create(api::AgentConfig config, const workspace::WorktreeRequest& request,
              const runtime::Callback<api::AgentSnapshot>& done);
  void Remove(const SessionId& id, bool force, runtime::Forwarding forwarding, const Reply& reply);
  void Diff(const SessionId& id, const std::optional<std::string>& against, std::size_t max_bytes,
            bool text, const Reply& reply);
  void List(const Reply& reply);
  // A git action (`action`, with the request's `body`) on the worktree of `id`, recorded.
  void Act(const SessionId& id, const std::string& action, const boost::json::object& body,
           const GitDone& done);
  // The first line of the agent's last message, for a commit without a message.
  std::string LastMessageLine(const SessionId& id);
  // Whether the newest events of `id` record the removal of `workspace` (read back once; a
  // removal is final, so a found one is kept).
  bool RemovedOnRequest(const SessionId& id, const workspace::Workspace& workspace);

  runtime::AgentManager& agents_;
  EventLog& log_;
  const workspace::Worktrees& worktrees_;
  WorkspaceRoutesOptions options_;
  workspace::GitActions actions_;
  std::mutex mu_;
  std::map<SessionId, std::optional<workspace::Workspace>> known_;  // guarded by mu_
  std::set<SessionId> removed_;  // sessions whose worktree was removed on request; guarded by mu_
  std::unique_ptr<Worker> worker_;
};

}  // namespace agentstream::server
