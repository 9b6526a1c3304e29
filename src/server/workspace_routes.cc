#include "server/workspace_routes.h"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <thread>
#include <utility>

#include "api/api_json.h"
#include "api/workspace_json.h"
#include "core/event_codec.h"
#include "core/utf8.h"
#include "runtime/session_records.h"
#include "system/random_id.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxDiffBytes = std::size_t{8} << 20;
constexpr std::size_t kCacheEntries = 4096;  // sessions whose worktree (or none) is remembered

// The workspace.created among `records`, if any.
std::optional<workspace::Workspace> WorkspaceIn(const std::vector<EventRecord>& records) {
  std::optional<workspace::Workspace> found;
  for (const EventRecord& record : records) {
    if (record.kind != static_cast<std::uint16_t>(EventKind::kWorkspaceCreated)) continue;
    Result<Event> event = DecodeRecord(record);
    if (event.ok()) found = std::get<WorkspaceCreated>(event->payload);
  }
  return found;
}

// Whether `records` hold the removal of the worktree at `path`.
bool RemovalIn(const std::vector<EventRecord>& records, const std::string& path) {
  for (const EventRecord& record : records) {
    if (record.kind != static_cast<std::uint16_t>(EventKind::kWorkspaceRemoved)) continue;
    Result<Event> event = DecodeRecord(record);
    if (event.ok() && std::get<WorkspaceRemoved>(event->payload).path == path) return true;
  }
  return false;
}

// The newest events of a session read for its workspace.removed: the removal closes the agent
// first, so it is among the last unless the agent was reopened after.
constexpr std::size_t kRemovalLookback = 16;

Status NoWorktree(const SessionId& id) {
  return Error(ErrorCode::kNotFound, "agent " + id.str() + " has no worktree");
}

// The newest events read for the agent's last message (a commit without a message).
constexpr std::size_t kMessageLookback = 2000;
constexpr std::size_t kMaxSubjectBytes = 1000;  // of a message taken from the agent's words

// The git actions of POST /v1/agents/{id}/git/{action}, and whether each changes the worktree
// (refused while the agent is in a turn).
bool IsGitAction(std::string_view action) {
  return action == "commit" || action == "merge" || action == "push" || action == "pr" ||
         action == "discard";
}
bool TouchesWorktree(std::string_view action) { return action == "commit" || action == "discard"; }

// A member of a git action's body the action does not take.
Status CheckGitActionMembers(std::string_view action, const json::object& body) {
  for (const auto& member : body) {
    const std::string_view key = member.key();
    const bool known =
        (action == "commit" && key == "message") ||
        (action == "merge" && (key == "into" || key == "noFastForward")) ||
        (action == "push" && key == "remote") ||
        (action == "pr" && (key == "title" || key == "body" || key == "base" || key == "remote"));
    if (!known) {
      return Error(ErrorCode::kInvalidArgument,
                   "unknown field \"" + std::string(key) + "\" in git " + std::string(action));
    }
  }
  return Status::Ok();
}

// A member of a git action's body: absent, or a string / a boolean.
Result<std::optional<std::string>> StringMember(const json::object& body, std::string_view key) {
  const json::value* v = body.if_contains(key);
  if (v == nullptr || v->is_null()) return std::optional<std::string>();
  if (!v->is_string())
    return Error(ErrorCode::kInvalidArgument, "\"" + std::string(key) + "\" must be a string");
  return std::optional<std::string>(std::string(v->get_string()));
}
Result<bool> BoolMember(const json::object& body, std::string_view key) {
  const json::value* v = body.if_contains(key);
  if (v == nullptr || v->is_null()) return false;
  if (!v->is_bool())
    return Error(ErrorCode::kInvalidArgument, "\"" + std::string(key) + "\" must be a boolean");
  return v->get_bool();
}

}  // namespace

// One thread running jobs in order, at most `max_pending` waiting.
class WorkspaceRoutes::Worker {
 public:
  explicit Worker(std::size_t max_pending) : max_pending_(max_pending) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Worker() { Stop(); }

  bool Post(std::function<void()> job) {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= max_pending_) return false;
    jobs_.push_back(std::move(job));
    cv_.notify_one();
    return true;
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      jobs_.clear();
      cv_.notify_one();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const std::size_t max_pending_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::thread thread_;
};

WorkspaceRoutes::WorkspaceRoutes(runtime::AgentManager& agents, EventLog& log,
                                 const workspace::Worktrees& worktrees,
                                 const WorkspaceRoutesOptions& options)
    : agents_(agents),
      log_(log),
      worktrees_(worktrees),
      options_(options),
      actions_(worktrees, options.git),
      worker_(std::make_unique<Worker>(options.max_pending)) {}

WorkspaceRoutes::~WorkspaceRoutes() { Stop(); }

void WorkspaceRoutes::Stop() { worker_->Stop(); }

void WorkspaceRoutes::Post(const Reply& reply, std::function<void()> job) {
  if (!worker_->Post(std::move(job))) {
    reply(ErrorResponse(
        Error(ErrorCode::kUnavailable, "too many worktree requests waiting for git (" +
                                           std::to_string(options_.max_pending) + "); retry")));
  }
}

Result<std::optional<workspace::Workspace>> WorkspaceRoutes::Lookup(const SessionId& id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = known_.find(id); it != known_.end()) return it->second;
  }
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  // workspace.created follows session.created (seq 2), or a fork's session.forked.
  ReadRequest read;
  read.session = id;
  read.from = info.forked_from ? info.forked_from->seq.next() : Seq(1);
  read.max_items = 4;
  AS_ASSIGN_OR_RETURN(ReadResult events, log_.Read(read));
  std::optional<workspace::Workspace> found = WorkspaceIn(events.events);
  std::lock_guard lock(mu_);
  if (known_.size() >= kCacheEntries) known_.clear();
  known_[id] = found;
  return found;
}

bool WorkspaceRoutes::RemovedOnRequest(const SessionId& id, const workspace::Workspace& workspace) {
  {
    std::lock_guard lock(mu_);
    if (removed_.count(id) > 0) return true;
  }
  ReadRequest read;
  read.session = id;
  read.direction = ReadDirection::kBackward;
  read.max_items = kRemovalLookback;
  auto events = log_.Read(read);
  if (!events.ok() || !RemovalIn(events->events, workspace.path)) return false;
  std::lock_guard lock(mu_);
  if (removed_.size() >= kCacheEntries) removed_.clear();
  removed_.insert(id);
  return true;
}

bool WorkspaceRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                             const Reply& reply) {
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "worktrees" && request.method == "GET") {
    Post(reply, [this, reply] { List(reply); });
    return true;
  }
  if (seg.size() < 2 || seg[0] != "v1" || seg[1] != "agents") return false;
  if (seg.size() == 2 && request.method == "POST") {
    auto body = api::ParseJson(request.body);
    if (!body.ok()) return false;  // ApiRouter says why
    auto worktree = api::WorktreeRequestFromJson(*body);
    if (worktree.ok() && !*worktree) return false;
    if (!worktree.ok()) return reply(ErrorResponse(worktree.status())), true;
    auto config = api::AgentConfigFromJson(*body);
    if (!config.ok()) return reply(ErrorResponse(config.status())), true;
    if (const std::string_view key = request.Header("idempotency-key");
        !key.empty() && !config->client_request_id)
      config->client_request_id = std::string(key);
    CreateWithWorktree(std::move(*config), std::move(**worktree), SnapshotReply(reply));
    return true;
  }
  if (seg.size() < 3) return false;
  const SessionId id(seg[2]);
  if (seg.size() == 3 && request.method == "DELETE") {
    const Result<bool> remove = QueryFlag(request.query, "removeWorktree");
    const Result<bool> force_flag = QueryFlag(request.query, "force");
    if (!remove.ok() || !force_flag.ok() || !*remove) return false;  // ApiRouter says why
    const bool force = *force_flag;
    Post(reply, [this, id, force, forwarding = ForwardingOf(request), reply] {
      Remove(id, force, forwarding, reply);
    });
    return true;
  }
  if (seg.size() == 5 && seg[3] == "git" && request.method == "POST") {
    auto body = api::ParseJson(request.body.empty() ? "{}" : request.body);
    if (!body.ok()) return reply(ErrorResponse(body.status())), true;
    if (!body->is_object()) {
      return reply(ErrorResponse(
                 Error(ErrorCode::kInvalidArgument, "a git action's body must be an object"))),
             true;
    }
    GitAction(id, seg[4], std::move(body->get_object()), [reply](Result<json::object> done) {
      reply(done.ok() ? JsonValueResponse(*done) : ErrorResponse(done.status()));
    });
    return true;
  }
  if (seg.size() != 4) return false;
  if (seg[3] == "diff" && request.method == "GET") {
    std::optional<std::string> against;
    if (auto it = request.query.find("against"); it != request.query.end()) against = it->second;
    std::size_t max_bytes = options_.diff.max_bytes;
    if (auto it = request.query.find("maxBytes"); it != request.query.end()) {
      const std::string& text = it->second;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), max_bytes);
      if (ec != std::errc() || ptr != text.data() + text.size() || max_bytes < 1024 ||
          max_bytes > kMaxDiffBytes) {
        return reply(ErrorResponse(
                   Error(ErrorCode::kInvalidArgument, "maxBytes must be from 1024 to 8388608"))),
               true;
      }
    }
    const bool text = request.Header("accept").find("text/x-diff") != std::string_view::npos;
    Post(reply, [this, id, against, max_bytes, text, reply] {
      Diff(id, against, max_bytes, text, reply);
    });
    return true;
  }
  if (seg[3] == "fork" && request.method == "POST") {
    auto body = api::ParseJson(request.body.empty() ? "{}" : request.body);
    if (!body.ok()) return false;  // ApiRouter says why
    auto cursor = api::CursorBodyFromJson(*body);
    if (!cursor.ok()) return false;  // ApiRouter says why
    return ForkWithWorktree(id, *cursor, SnapshotReply(reply));
  }
  return false;
}

void WorkspaceRoutes::GitAction(const SessionId& id, const std::string& action, json::object body,
                                const GitDone& done) {
  if (!IsGitAction(action)) {
    return done(Error(ErrorCode::kNotFound,
                      "no git action \"" + action + "\" (commit, merge, push, pr, discard)"));
  }
  if (Status members = CheckGitActionMembers(action, body); !members.ok()) return done(members);
  agents_.Get(
      id, [this, id, action, body = std::move(body), done](Result<api::AgentSnapshot> agent) {
        if (!agent.ok()) return done(agent.status());
        if (TouchesWorktree(action) && agent->status != turn::SessionStatus::kIdle &&
            agent->status != turn::SessionStatus::kError) {
          return done(Error(ErrorCode::kConflict,
                            "agent " + id.str() + " is in a turn; " + action +
                                " its worktree once the turn ended (or interrupt it)"));
        }
        Reply refuse = [done](const HttpResponse&) {
          done(Error(ErrorCode::kUnavailable, "too many worktree requests waiting for git; retry"));
        };
        Post(refuse, [this, id, action, body, done] { Act(id, action, body, done); });
      });
}

// ---- On the worker ----

void WorkspaceRoutes::CreateWithWorktree(api::AgentConfig config,
                                         workspace::WorktreeRequest request,
                                         const runtime::Callback<api::AgentSnapshot>& done) {
  Reply refuse = [done](const HttpResponse&) {
    done(Error(ErrorCode::kUnavailable, "too many worktree requests waiting for git; retry"));
  };
  Post(refuse, [this, config = std::move(config), request = std::move(request), done]() mutable {
    Create(std::move(config), request, done);
  });
}

void WorkspaceRoutes::Create(api::AgentConfig config, const workspace::WorktreeRequest& request,
                             const runtime::Callback<api::AgentSnapshot>& done) {
  static runtime::RandomIds ids;  // the worker's thread only
  const SessionId id = config.client_request_id
                           ? runtime::SessionIdForRequest(*config.client_request_id)
                           : SessionId(ids.Next("ses"));
  config.session_id = id;
  if (config.client_request_id && log_.GetSession(id).ok()) {
    // A retry: the agent (and worktree) the first request made, as it is now.
    auto existing = Lookup(id);
    if (existing.ok() && *existing) {
      config.cwd = (*existing)->path;
      config.workspace = **existing;
    }
    return agents_.Create(std::move(config), done);
  }
  auto made = worktrees_.Create(config.cwd, request, id.str());
  if (!made.ok()) return done(made.status());
  config.cwd = made->path;
  config.workspace = *made;
  agents_.Create(
      std::move(config), [this, id, ws = *made, done](Result<api::AgentSnapshot> created) {
        // Nothing stays behind when no session was made (answered once it is gone); a session that
        // exists keeps its worktree.
        if (created.ok() || log_.GetSession(id).status().code() != ErrorCode::kNotFound)
          return done(std::move(created));
        Reply refuse = [done, status = created.status()](const HttpResponse&) { done(status); };
        Post(refuse, [this, ws, status = created.status(), done] {
          worktrees_.Discard(ws);
          done(status);
        });
      });
}

bool WorkspaceRoutes::ForkWithWorktree(const SessionId& parent, Cursor at,
                                       const runtime::Callback<api::AgentSnapshot>& done) {
  auto workspace = Lookup(parent);
  if (!workspace.ok() || !*workspace) return false;  // a plain fork (or the fork's own error)
  Reply refuse = [done](const HttpResponse&) {
    done(Error(ErrorCode::kUnavailable, "too many worktree requests waiting for git; retry"));
  };
  Post(refuse, [this, parent, ws = std::move(**workspace), at, done] {
    static runtime::RandomIds ids;  // the worker's thread only
    const SessionId child(ids.Next("ses"));
    auto made = worktrees_.Branch(ws, child.str());
    if (!made.ok()) return done(made.status());
    agents_.Fork(
        parent, at,
        [this, child, made = *made, done](Result<api::AgentSnapshot> forked) {
          if (forked.ok() || log_.GetSession(child).status().code() != ErrorCode::kNotFound)
            return done(std::move(forked));
          Reply refuse = [done, status = forked.status()](const HttpResponse&) { done(status); };
          Post(refuse, [this, made, status = forked.status(), done] {
            worktrees_.Discard(made);
            done(status);
          });
        },
        runtime::ForkWorkspace{child, *made});
  });
  return true;
}

void WorkspaceRoutes::Remove(const SessionId& id, bool force, runtime::Forwarding forwarding,
                             const Reply& reply) {
  auto workspace = Lookup(id);
  if (!workspace.ok()) return reply(ErrorResponse(workspace.status()));
  if (!*workspace) return reply(ErrorResponse(NoWorktree(id)));
  if (!force && worktrees_.StateOf(**workspace) == workspace::WorktreeState::kPresent) {
    std::string changes;
    auto dirty = worktrees_.HasChanges(**workspace, &changes);
    if (!dirty.ok()) return reply(ErrorResponse(dirty.status()));
    if (*dirty) {
      return reply(ErrorResponse(
          Error(ErrorCode::kConflict, "the worktree " + (*workspace)->path +
                                          " has uncommitted changes; nothing was closed or removed "
                                          "(force=true discards them):\n" +
                                          changes)));
    }
  }
  agents_.Close(
      id,
      [this, id, ws = **workspace, force, reply](const Status& closed) {
        if (!closed.ok()) return reply(ErrorResponse(closed));
        Post(reply, [this, id, ws, force, reply] {
          if (Status removed = worktrees_.Remove(ws, force); !removed.ok())
            return reply(ErrorResponse(removed));
          // Recorded once: a repeated removal is a duplicate of the same stamp.
          ProducerStamp stamp{ProducerId("workspace:" + id.str()), 0, 0};
          agents_.AppendForeign(id, {MakeNewEvent(WorkspaceRemoved{ws.path, force})}, stamp,
                                [this, id, reply](const Result<AppendResult>& appended) {
                                  if (!appended.ok())
                                    return reply(ErrorResponse(appended.status()));
                                  {
                                    std::lock_guard lock(mu_);
                                    if (removed_.size() >= kCacheEntries) removed_.clear();
                                    removed_.insert(id);
                                  }
                                  agents_.Get(id, SnapshotReply(reply));
                                });
        });
      },
      forwarding);
}

void WorkspaceRoutes::Diff(const SessionId& id, const std::optional<std::string>& against,
                           std::size_t max_bytes, bool text, const Reply& reply) {
  auto workspace = Lookup(id);
  if (!workspace.ok()) return reply(ErrorResponse(workspace.status()));
  if (!*workspace) return reply(ErrorResponse(NoWorktree(id)));
  workspace::DiffLimits limits = options_.diff;
  limits.max_bytes = max_bytes;
  auto diff = workspace::DiffWorktree(worktrees_, **workspace, against, limits);
  if (!diff.ok()) return reply(ErrorResponse(diff.status()));
  HttpResponse response;
  if (text) {
    response.content_type = "text/x-diff";
    response.body = std::move(diff->text);
  } else {
    response = JsonValueResponse(api::DiffToJson(id, **workspace, *diff));
  }
  response.headers.emplace_back("Diff-Truncated", diff->truncated ? "true" : "false");
  response.headers.emplace_back("Cache-Control", "no-store");
  reply(std::move(response));
}

void WorkspaceRoutes::List(const Reply& reply) {
  agents_.List(true, [this, reply](Result<std::vector<api::AgentSnapshot>> agents) {
    if (!agents.ok()) return reply(ErrorResponse(agents.status()));
    Post(reply, [this, agents = std::move(*agents), reply] {
      json::array list;
      for (const api::AgentSnapshot& agent : agents) {
        auto workspace = Lookup(agent.id);
        if (!workspace.ok() || !*workspace) continue;
        workspace::WorktreeState state = worktrees_.StateOf(**workspace);
        if (state == workspace::WorktreeState::kMissing && RemovedOnRequest(agent.id, **workspace))
          state = workspace::WorktreeState::kRemoved;
        list.push_back(api::WorktreeToJson(agent.id, **workspace, state, agent.closed));
      }
      reply(JsonValueResponse(json::object{{"worktrees", std::move(list)}}));
    });
  });
}

void WorkspaceRoutes::Act(const SessionId& id, const std::string& action, const json::object& body,
                          const GitDone& reply) {
  auto workspace = Lookup(id);
  if (!workspace.ok()) return reply(workspace.status());
  if (!*workspace) return reply(NoWorktree(id));
  const workspace::Workspace& ws = **workspace;
  // A merge needs only the branch; the others run in the worktree.
  if (action != "merge" && worktrees_.StateOf(ws) != workspace::WorktreeState::kPresent) {
    return reply(Error(ErrorCode::kConflict, "the worktree " + ws.path + " is gone"));
  }
  Result<workspace::GitActionResult> done = Error(ErrorCode::kInternal, "no action");
  if (action == "commit") {
    auto message = StringMember(body, "message");
    if (!message.ok()) return reply(message.status());
    done = actions_.Commit(ws, *message ? **message : LastMessageLine(id));
  } else if (action == "merge") {
    auto into = StringMember(body, "into");
    auto no_ff = BoolMember(body, "noFastForward");
    if (!into.ok()) return reply(into.status());
    if (!no_ff.ok()) return reply(no_ff.status());
    done = actions_.Merge(ws, *into, *no_ff);
  } else if (action == "push") {
    auto remote = StringMember(body, "remote");
    if (!remote.ok()) return reply(remote.status());
    done = actions_.Push(ws, remote->value_or("origin"));
  } else if (action == "pr") {
    auto title = StringMember(body, "title");
    auto text = StringMember(body, "body");
    auto base = StringMember(body, "base");
    auto remote = StringMember(body, "remote");
    for (const auto* member : {&title, &text, &base, &remote})
      if (!member->ok()) return reply(member->status());
    std::string fallback;
    if (!*title) {  // the agent's words, as one line a title may be
      fallback = LastMessageLine(id);
      std::replace_if(
          fallback.begin(), fallback.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; },
          ' ');
      fallback = BoundUtf8(fallback, workspace::kMaxPullRequestTitleBytes).text;
    }
    done = actions_.PullRequest(ws, remote->value_or("origin"), *base, *title ? **title : fallback,
                                text->value_or(""));
  } else {
    done = actions_.Discard(ws);
  }
  if (!done.ok()) return reply(done.status());
  // Each action is its own producer: recorded once, never taken for a duplicate of another.
  ProducerStamp stamp{ProducerId("git:" + system::RandomHex(16)), 0, 0};
  agents_.AppendForeign(id, {MakeNewEvent(*done)}, stamp,
                        [id, result = *done, reply](const Result<AppendResult>& appended) {
                          if (!appended.ok()) {
                            return reply(Error(appended.status().code(),
                                               "git " + result.action + " " + result.outcome +
                                                   " but was not recorded in the log: " +
                                                   appended.status().message()));
                          }
                          auto fields = json::parse(EncodePayload(result));
                          json::object out = std::move(fields.as_object());
                          out["agent"] = id.str();
                          out["cursor"] = FormatCursor({appended->epoch, appended->last_seq});
                          reply(std::move(out));
                        });
}

std::string WorkspaceRoutes::LastMessageLine(const SessionId& id) {
  ReadRequest read;
  read.session = id;
  read.direction = ReadDirection::kBackward;
  read.max_items = kMessageLookback;
  auto events = log_.Read(read);
  std::optional<MessageId> message;
  std::vector<std::string> deltas;  // the message's deltas, newest first
  if (events.ok()) {
    // The page is oldest first: walk it from the newest event back to the message's start.
    for (auto it = events->events.rbegin(); it != events->events.rend(); ++it) {
      const auto kind = static_cast<EventKind>(it->kind);
      if (kind != EventKind::kAssistantMessageDelta && kind != EventKind::kAssistantMessageStart)
        continue;
      Result<Event> event = DecodeRecord(*it);
      if (!event.ok()) continue;
      if (const auto* d = std::get_if<AssistantMessageDelta>(&event->payload)) {
        if (!message) message = d->message_id;
        if (d->message_id == *message) deltas.push_back(d->text);
      } else if (const auto* s = std::get_if<AssistantMessageStart>(&event->payload);
                 s != nullptr && message && s->message_id == *message) {
        break;
      }
    }
  }
  std::string text;
  for (auto it = deltas.rbegin(); it != deltas.rend(); ++it) text += *it;
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "Changes of agent " + id.str();
  text.erase(0, start);
  text.erase(std::min(text.find('\n'), text.size()));
  return BoundUtf8(text, kMaxSubjectBytes).text;
}

}  // namespace agentstream::server
