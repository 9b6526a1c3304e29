#include "cli/client_cli.h"

#include <CLI/CLI.hpp>

#include <string>
#include <tuple>

#include "acp_server/acp_server.h"
#include "cli/build_info.h"
#include "cli/commands/commands.h"
#include "cli/commands/consumer_commands.h"
#include "cli/commands/device_commands.h"
#include "cli/commands/schedule_commands.h"
#include "mcp_server/mcp_server.h"

namespace agentstream::cli {

struct ClientCommands::State {
  ClientContext context;
  CLI::App* agents = nullptr;
  CLI::App *ls = nullptr, *add = nullptr, *rm = nullptr, *show = nullptr, *rename = nullptr;
  CLI::App* catalog = nullptr;
  CLI::App *send = nullptr, *follow = nullptr, *history = nullptr, *interrupt = nullptr;
  CLI::App* search = nullptr;
  CLI::App *approve = nullptr, *deny = nullptr, *fork = nullptr, *rewind = nullptr;
  CLI::App *mode = nullptr, *model = nullptr, *thinking = nullptr;
  CLI::App *consumers = nullptr, *c_ls = nullptr, *c_new = nullptr, *c_show = nullptr;
  CLI::App *c_rm = nullptr, *c_resume = nullptr, *inbox = nullptr;
  CLI::App *acp = nullptr, *mcp = nullptr;
  CLI::App *diff = nullptr, *worktrees = nullptr, *git = nullptr;
  CLI::App* import = nullptr;
  CLI::App *schedules = nullptr, *s_ls = nullptr, *s_new = nullptr, *s_show = nullptr;
  CLI::App *s_pause = nullptr, *s_resume = nullptr, *s_rm = nullptr;
  NewScheduleOptions new_schedule;
  std::string schedule;
  ImportOptions import_options;
  CLI::App *pair = nullptr, *devices = nullptr, *d_ls = nullptr, *d_rename = nullptr;
  CLI::App* d_revoke = nullptr;
  PairOptions pair_options;
  std::string device;
  CLI::Option* worktree = nullptr;
  RemoveAgentOptions remove_agent;
  DiffOptions diff_options;
  GitCommandOptions git_options;
  acp_server::AcpServerOptions acp_options;
  NewConsumerOptions new_consumer;
  std::string consumer, session;
  bool include_closed = false;
  NewAgentOptions new_agent;
  SendOptions send_options;
  HistoryOptions history_options;
  SearchOptions search_options;
  FollowOptions follow_options;
  std::string agent, request, message, cursor, value;

  void AddAgents(CLI::App& app);        // agents ls|new|catalog|show|rename|rm
  void AddTurnCommands(CLI::App& app);  // send, follow, search, history
  void AddSteering(CLI::App& app);      // interrupt, approve, deny, fork, rewind, mode, model
  void AddConsumers(CLI::App& app);     // consumers ls|new|show|rm|resume, inbox
  void AddAcp(CLI::App& app);           // acp, mcp
  void AddWorkspaces(CLI::App& app);    // diff, worktrees, git
  void AddDevices(CLI::App& app);       // pair, devices ls|rename|revoke
  void AddImport(CLI::App& app);        // import
  void AddSchedules(CLI::App& app);     // schedules ls|new|show|pause|resume|rm
};

namespace {

// A client subcommand: global options given after it reach the app; --json when it prints data.
CLI::App* Command(CLI::App& parent, const char* name, const char* help, bool* json) {
  CLI::App* command = parent.add_subcommand(name, help);
  command->fallthrough();
  if (json != nullptr) command->add_flag("--json", *json, "print the daemon's JSON");
  return command;
}

}  // namespace

void ClientCommands::State::AddAgents(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  s.agents = Command(app, "agents", "list, create, show or close agents (default: ls)", json);
  s.agents->require_subcommand(0, 1);
  s.ls = Command(*s.agents, "ls", "list agents", nullptr);
  s.ls->add_flag("--all", s.include_closed, "include closed agents");
  s.add = Command(*s.agents, "new", "create an agent and print its id", nullptr);
  s.add
      ->add_option("--provider", s.new_agent.provider,
                   "claude, codex, opencode, scripted, acp:ID (agents catalog)")
      ->required();
  s.add->add_option("--cwd", s.new_agent.cwd, "working directory (default: the current one)");
  s.add->add_option("--model", s.new_agent.model, "model");
  s.add->add_option("--mode", s.new_agent.mode, "mode");
  s.add->add_option("--title", s.new_agent.title, "title");
  s.worktree = s.add
                   ->add_option("--worktree", s.new_agent.branch,
                                "run it in a git worktree of its own, on this new branch "
                                "(default: agentstream/AGENT)")
                   ->expected(0, 1);
  s.add->add_option("--base", s.new_agent.base, "the worktree's base commit (default: HEAD)")
      ->needs(s.worktree);
  s.catalog = Command(*s.agents, "catalog",
                      "list the ACP agents the daemon knows: installed or how to install", nullptr);
  s.show = Command(*s.agents, "show", "show an agent's status", nullptr);
  s.show->add_option("agent", s.agent, "agent id")->required();
  s.rename = Command(*s.agents, "rename", "set an agent's title (\"\" clears it)", nullptr);
  s.rename->add_option("agent", s.agent, "agent id")->required();
  s.rename->add_option("title", s.value, "the new title")->required();
  s.rm = Command(*s.agents, "rm", "close an agent (its log stays readable)", nullptr);
  s.rm->add_option("agent", s.remove_agent.agent, "agent id")->required();
  s.rm->add_flag("--remove-worktree", s.remove_agent.remove_worktree,
                 "also remove its worktree (its branch stays)");
  s.rm->add_flag("--force", s.remove_agent.force,
                 "remove the worktree even with uncommitted changes");
}

void ClientCommands::State::AddTurnCommands(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  s.send = Command(app, "send", "send a prompt to an agent", json);
  s.send->add_option("agent", s.send_options.agent, "agent id")->required();
  s.send->add_option("text", s.send_options.text, "the prompt")->required();
  s.send->add_flag("--wait", s.send_options.wait, "wait until the started turn ends");
  s.send
      ->add_option("--while-running", s.send_options.while_running,
                   "when a turn runs: queue, interrupt or steer")
      ->check(CLI::IsMember({"queue", "interrupt", "steer"}))
      ->capture_default_str();
  s.send->add_option("--client-id", s.send_options.client_id,
                     "client message id (a retry with the same id is recorded once)");

  s.follow = Command(app, "follow", "follow an agent's timeline live", json);
  s.follow->add_option("agent", s.follow_options.agent, "agent id")->required();
  s.follow->add_option("--from", s.follow_options.from, "start at this cursor EPOCH:SEQ");
  s.follow->add_flag("--plain", s.follow_options.plain, "no colors, no inline answers");

  s.search = Command(app, "search", "find words in every agent's history, newest first", json);
  s.search->add_option("words", s.search_options.query, "the words to find (all of them)")
      ->required();
  s.search->add_option("--agent", s.search_options.agent, "only this agent's history");
  s.search->add_option("--limit", s.search_options.limit, "hits at most")
      ->check(CLI::Range(1, 200))
      ->capture_default_str();

  s.history = Command(app, "history", "print a page of an agent's timeline", json);
  s.history->add_option("agent", s.history_options.agent, "agent id")->required();
  auto* before = s.history->add_option("--before", s.history_options.before,
                                       "items before this cursor EPOCH:SEQ");
  s.history->add_option("--after", s.history_options.after, "changes after this cursor EPOCH:SEQ")
      ->excludes(before);
  s.history->add_option("--limit", s.history_options.limit, "items per page")
      ->check(CLI::Range(1, 500))
      ->capture_default_str();
}

void ClientCommands::State::AddSteering(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  s.interrupt = Command(app, "interrupt", "interrupt an agent's running turn", json);
  s.interrupt->add_option("agent", s.agent, "agent id")->required();
  for (auto [command, name, help] :
       {std::tuple{&s.approve, "approve", "allow a pending permission request"},
        std::tuple{&s.deny, "deny", "deny a pending permission request"}}) {
    *command = Command(app, name, help, json);
    (*command)->add_option("agent", s.agent, "agent id")->required();
    (*command)->add_option("request", s.request, "permission request id")->required();
    (*command)->add_option("--message", s.message, "a message for the agent");
  }
  s.fork = Command(app, "fork", "fork an agent at a cursor; prints the new agent's id", json);
  s.fork->add_option("agent", s.agent, "agent id")->required();
  s.fork->add_option("--at", s.cursor, "cursor EPOCH:SEQ (a history item's seqEnd)")->required();
  s.rewind = Command(app, "rewind", "rewind an agent's history to a cursor (a new epoch)", json);
  s.rewind->add_option("agent", s.agent, "agent id")->required();
  s.rewind->add_option("--to", s.cursor, "cursor EPOCH:SEQ")->required();
  s.mode = Command(app, "mode", "set an agent's mode", json);
  s.mode->add_option("agent", s.agent, "agent id")->required();
  s.mode->add_option("mode", s.value, "mode")->required();
  s.model = Command(app, "model", "set an agent's model", json);
  s.model->add_option("agent", s.agent, "agent id")->required();
  s.model->add_option("model", s.value, "model")->required();
  s.thinking = Command(app, "thinking", "set an agent's thinking option", json);
  s.thinking->add_option("agent", s.agent, "agent id")->required();
  s.thinking->add_option("option", s.value, "one of the agent's thinking options")->required();
}

void ClientCommands::State::AddConsumers(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  NewConsumerOptions& n = s.new_consumer;
  s.consumers = Command(app, "consumers", "durable consumers: ls, new, show, rm, resume", json);
  s.consumers->require_subcommand(0, 1);
  s.c_ls = Command(*s.consumers, "ls", "list consumers with their lag", nullptr);
  s.c_new = Command(*s.consumers, "new", "create a consumer (exactly one sink)", nullptr);
  s.c_new->add_option("id", n.id, "consumer id");
  s.c_new->add_option("--spec", n.spec_file, "a JSON spec file (the POST /v1/consumers body)");
  s.c_new->add_option("--webhook", n.webhook, "sink: POST each delivery to this http:// URL");
  s.c_new->add_option("--secret", n.secret, "webhook: HMAC-SHA256 signing secret");
  s.c_new->add_option("--header", n.headers, "webhook: extra header \"Name: value\" (repeatable)");
  s.c_new->add_option("--command", n.command, "sink: a command fed JSON lines (argv)")
      ->expected(1, -1);
  s.c_new->add_option("--parent", n.parent, "sink: append to this parent session's log");
  s.c_new->add_option("--jsonl", n.jsonl, "sink: append to this JSONL file");
  s.c_new->add_option("--session", n.sessions, "only this session (repeatable)");
  s.c_new->add_option("--provider", n.providers, "only sessions of this provider (repeatable)");
  s.c_new->add_option("--kind", n.kinds, "only this event kind (repeatable)");
  s.c_new->add_option("--max-attempts", n.max_attempts, "failures before parking")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  s.c_new->add_option("--backoff-ms", n.initial_backoff_ms, "first retry delay")
      ->capture_default_str();
  s.c_new->add_option("--max-backoff-ms", n.max_backoff_ms, "longest retry delay")
      ->capture_default_str();
  s.c_new->add_option("--timeout-ms", n.timeout_ms, "webhook / command time limit")
      ->capture_default_str();
  s.c_new->add_flag("--no-coalesce", n.no_coalesce, "never merge runs of deltas");
  s.c_new->add_flag("--from-now", n.from_now, "start existing sessions at their tail");
  s.c_show = Command(*s.consumers, "show", "a consumer's progress per session", nullptr);
  s.c_show->add_option("consumer", s.consumer, "consumer id")->required();
  s.c_rm = Command(*s.consumers, "rm", "delete a consumer and its positions", nullptr);
  s.c_rm->add_option("consumer", s.consumer, "consumer id")->required();
  s.c_resume = Command(*s.consumers, "resume", "unpark a consumer", nullptr);
  s.c_resume->add_option("consumer", s.consumer, "consumer id")->required();
  s.c_resume->add_option("--session", s.session, "only this session (default: every one)");
  s.inbox = Command(app, "inbox", "print an agent's inbox URL and token", json);
  s.inbox->add_option("agent", s.agent, "agent id")->required();
}

void ClientCommands::State::AddSchedules(CLI::App& app) {
  State& s = *this;
  NewScheduleOptions& n = s.new_schedule;
  s.schedules = Command(app, "schedules",
                        "schedules that prompt agents on a clock: ls, new, show, "
                        "pause, resume, rm",
                        &s.context.json);
  s.schedules->require_subcommand(0, 1);
  s.s_ls = Command(*s.schedules, "ls", "list schedules with their next tick", nullptr);
  s.s_new = Command(*s.schedules, "new", "create a schedule", nullptr);
  s.s_new->add_option("id", n.id, "schedule id (letters, digits, '_', '-')")->required();
  s.s_new->add_option("--cron", n.cron, "a cron expression of five fields: \"0 9 * * 1-5\"");
  s.s_new->add_option("--tz", n.timezone, "the cron expression's time zone (default UTC)");
  s.s_new->add_option("--every", n.every, "or an interval: 90s, 15m, 2h, 1d");
  s.s_new->add_option("--agent", n.agent, "prompt this agent (queued behind its turn)");
  s.s_new->add_option("--provider", n.provider, "or a new agent per tick, of this provider");
  s.s_new->add_option("--cwd", n.cwd, "the new agent's working directory (absolute)");
  s.s_new->add_flag("--worktree", n.worktree, "the new agent works in a git worktree of its own");
  s.s_new->add_option("--model", n.model, "the new agent's model");
  s.s_new->add_option("--mode", n.mode, "the new agent's mode");
  s.s_new->add_option("--title", n.title, "the new agent's title: \"Nightly {{date}}\"");
  s.s_new->add_option("--prompt", n.prompt, "the prompt (a template: {{date}}, {{time}}, {{tick}})")
      ->required();
  s.s_new->add_option("--missed", n.missed,
                      "ticks missed while every daemon was down: skip "
                      "(default) or run-once");
  s.s_show = Command(*s.schedules, "show", "a schedule and its last firings", nullptr);
  s.s_show->add_option("schedule", s.schedule, "schedule id")->required();
  s.s_pause = Command(*s.schedules, "pause", "stop firing a schedule", nullptr);
  s.s_pause->add_option("schedule", s.schedule, "schedule id")->required();
  s.s_resume = Command(*s.schedules, "resume", "fire a paused schedule again from now", nullptr);
  s.s_resume->add_option("schedule", s.schedule, "schedule id")->required();
  s.s_rm = Command(*s.schedules, "rm", "delete a schedule and its firings", nullptr);
  s.s_rm->add_option("schedule", s.schedule, "schedule id")->required();
}

void ClientCommands::State::AddAcp(CLI::App& app) {
  acp = Command(app, "acp", "serve the Agent Client Protocol on stdio for an editor (docs/acp.md)",
                nullptr);
  acp->add_option("--provider", acp_options.provider, "the provider of new sessions")
      ->capture_default_str();
  acp->add_option("--model", acp_options.model, "the model of new sessions");
  acp->add_option("--mode", acp_options.mode, "the mode of new sessions");
  mcp = Command(app, "mcp", "serve the Model Context Protocol on stdio for an agent (docs/mcp.md)",
                nullptr);
}

void ClientCommands::State::AddWorkspaces(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  s.diff = Command(app, "diff", "print the changes in an agent's worktree (a unified diff)", json);
  s.diff->add_option("agent", s.diff_options.agent, "agent id")->required();
  s.diff->add_option("--against", s.diff_options.against,
                     "compare with this commit or branch (default: the worktree's base)");
  s.worktrees = Command(app, "worktrees", "list agents' worktrees and their state", json);
  GitCommandOptions& g = s.git_options;
  s.git = Command(app, "git",
                  "commit, merge, push, open a pull request of or discard an agent's worktree "
                  "changes",
                  json);
  s.git->require_subcommand(1, 1);
  auto action = [&](const char* name, const char* help) {
    CLI::App* command = Command(*s.git, name, help, nullptr);
    command->add_option("agent", g.agent, "agent id")->required();
    command->callback([&g, name] { g.action = name; });
    return command;
  };
  action("commit", "commit every change of the worktree on its branch")
      ->add_option("-m,--message", g.message,
                   "the commit message (default: the first line of the agent's last message)");
  CLI::App* merge = action("merge", "merge the worktree's branch into its base (or --into)");
  merge->add_option("--into", g.into, "the branch to merge into (default: the worktree's base)");
  merge->add_flag("--no-ff", g.no_ff, "a merge commit even when a fast-forward would do");
  action("push", "push the worktree's branch to a remote of the repository")
      ->add_option("--remote", g.remote, "the remote")
      ->capture_default_str();
  CLI::App* pr =
      action("pr", "push the worktree's branch and open a GitHub pull request of it (gh)");
  pr->add_option("--title", g.title,
                 "the pull request's title (default: the first line of the agent's last message)");
  pr->add_option("--body", g.body, "its description");
  pr->add_option("--base", g.base, "the branch it merges into (default: the worktree's base)");
  pr->add_option("--remote", g.remote, "the remote pushed to, a GitHub repository")
      ->capture_default_str();
  action("discard", "drop the worktree's uncommitted changes (ignored files stay)");
}

void ClientCommands::State::AddDevices(CLI::App& app) {
  State& s = *this;
  bool* json = &s.context.json;
  PairOptions& p = s.pair_options;
  s.pair = Command(app, "pair",
                   "pair a phone or another device: print a one-time link and its QR code", json);
  s.pair->add_option("--name", p.name, "the device's name (1 to 64 bytes)")->capture_default_str();
  s.pair->add_option("--expires", p.expires, "the link's lifetime: 10s to 24h (90s, 10m, 2h)")
      ->capture_default_str();
  s.pair->add_option("--public-url", p.public_url,
                     "print the link at this https base URL instead of the daemon's");
  s.pair->add_flag("--no-qr", p.no_qr, "print the link only, no QR code");
  s.devices = Command(app, "devices", "paired devices: ls, rename, revoke (default: ls)", json);
  s.devices->require_subcommand(0, 1);
  s.d_ls = Command(*s.devices, "ls", "list paired devices, revoked ones included", nullptr);
  s.d_rename = Command(*s.devices, "rename", "rename a paired device", nullptr);
  s.d_rename->add_option("device", s.device, "device id (dev_...)")->required();
  s.d_rename->add_option("name", s.value, "its new name")->required();
  s.d_revoke = Command(*s.devices, "revoke",
                       "revoke a paired device: its token stops working and its connections "
                       "close",
                       nullptr);
  s.d_revoke->add_option("device", s.device, "device id (dev_...)")->required();
}

void ClientCommands::State::AddImport(CLI::App& app) {
  import = Command(app, "import",
                   "import the claude or codex CLI's own sessions as agents (docs/import.md)",
                   &context.json);
  import->add_option("source", import_options.source, "claude or codex")
      ->required()
      ->check(CLI::IsMember({"claude", "codex"}));
  import->add_option("--project", import_options.project,
                     "only the sessions of this working directory");
  import->add_option("--since", import_options.since,
                     "only sessions active since this date (YYYY-MM-DD, UTC)");
}

ClientCommands::ClientCommands(CLI::App& app) : state_(std::make_unique<State>()) {
  State& s = *state_;
  app.add_option("--url", s.context.http.url, "the daemon's URL (client commands)")
      ->envname("AGENTSTREAM_URL")
      ->capture_default_str();
  app.add_option("--token", s.context.http.token, "bearer token for the daemon (client commands)")
      ->envname("AGENTSTREAM_TOKEN");

  s.AddAgents(app);
  s.AddTurnCommands(app);
  s.AddSteering(app);
  s.AddConsumers(app);
  s.AddAcp(app);
  s.AddWorkspaces(app);
  s.AddDevices(app);
  s.AddImport(app);
  s.AddSchedules(app);
}

ClientCommands::~ClientCommands() = default;

std::optional<int> ClientCommands::Run() const {
  const State& s = *state_;
  const ClientContext& c = s.context;
  if (*s.agents) {
    if (*s.add) {
      NewAgentOptions options = s.new_agent;
      options.worktree = s.worktree->count() > 0;
      return NewAgent(c, options);
    }
    if (*s.show) return ShowAgent(c, s.agent);
    if (*s.catalog) return ListCatalog(c);
    if (*s.rename) return Rename(c, s.agent, s.value);
    if (*s.rm) return RemoveAgent(c, s.remove_agent);
    return ListAgents(c, s.include_closed);
  }
  if (*s.send) return Send(c, s.send_options);
  if (*s.follow) return Follow(c, s.follow_options);
  if (*s.history) return History(c, s.history_options);
  if (*s.search) return Search(c, s.search_options);
  if (*s.interrupt) return Interrupt(c, s.agent);
  if (*s.approve) return AnswerPermission(c, s.agent, s.request, true, s.message);
  if (*s.deny) return AnswerPermission(c, s.agent, s.request, false, s.message);
  if (*s.fork) return Fork(c, s.agent, s.cursor);
  if (*s.rewind) return Rewind(c, s.agent, s.cursor);
  if (*s.mode) return SetMode(c, s.agent, s.value);
  if (*s.model) return SetModel(c, s.agent, s.value);
  if (*s.thinking) return SetThinking(c, s.agent, s.value);
  if (*s.consumers) {
    if (*s.c_new) return NewConsumer(c, s.new_consumer);
    if (*s.c_show) return ShowConsumer(c, s.consumer);
    if (*s.c_rm) return RemoveConsumer(c, s.consumer);
    if (*s.c_resume) return ResumeConsumer(c, s.consumer, s.session);
    return ListConsumers(c);
  }
  if (*s.inbox) return ShowInbox(c, s.agent);
  if (*s.schedules) {
    if (*s.s_new) return NewSchedule(c, s.new_schedule);
    if (*s.s_show) return ShowSchedule(c, s.schedule);
    if (*s.s_pause) return PauseSchedule(c, s.schedule, true);
    if (*s.s_resume) return PauseSchedule(c, s.schedule, false);
    if (*s.s_rm) return RemoveSchedule(c, s.schedule);
    return ListSchedules(c);
  }
  if (*s.diff) return Diff(c, s.diff_options);
  if (*s.worktrees) return ListWorktrees(c);
  if (*s.git) return GitAction(c, s.git_options);
  if (*s.pair) return Pair(c, s.pair_options);
  if (*s.import) return Import(c, s.import_options);
  if (*s.devices) {
    if (*s.d_rename) return RenameDevice(c, s.device, s.value);
    if (*s.d_revoke) return RevokeDevice(c, s.device);
    return ListDevices(c);
  }
  if (*s.acp) {
    acp_server::AcpServerOptions options = s.acp_options;
    options.http = c.http;
    options.version = GetBuildInfo().version;
    return acp_server::RunAcpServer(options);
  }
  if (*s.mcp) {
    mcp_server::McpServerOptions options;
    options.http = c.http;
    options.version = GetBuildInfo().version;
    // Set by the daemon in the environment of each agent's CLI, which starts this server.
    if (const char* agent = std::getenv("AGENTSTREAM_AGENT_ID")) options.calling_agent = agent;
    return mcp_server::RunMcpServer(options);
  }
  return std::nullopt;
}

}  // namespace agentstream::cli
