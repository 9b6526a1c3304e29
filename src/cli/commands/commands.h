// The client commands of `agentstream` (docs/cli.md): each talks to a running daemon over HTTP
// (`--url`, `--token`), prints what a person needs (or the daemon's JSON with `--json`) and
// returns the process exit code: kExitOk, kExitError (an error from the daemon or the
// connection, or a turn that did not complete for `send --wait`), kExitUsage (bad arguments).
//
// Errors are printed to stderr as one line "agentstream: ..."; data goes to stdout.
// Threading: each function runs on the calling thread and returns when the command is done
// (`follow` runs until interrupted).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/transport.h"

namespace agentstream::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct ClientContext {
  client::TransportOptions http;  // the daemon's URL and token, time limits
  bool json = false;              // print the daemon's JSON (one value per line)
};

struct NewAgentOptions {
  std::string provider;
  std::string cwd;  // empty: the current directory
  std::optional<std::string> model, mode, title;
  bool worktree = false;     // run it in a git worktree of its own (docs/workspaces.md)
  std::string branch, base;  // the worktree's new branch and its base; empty: the defaults
};

// agents rm: close, and with `remove_worktree` remove its worktree (`force`: even with
// uncommitted changes).
struct RemoveAgentOptions {
  std::string agent;
  bool remove_worktree = false;
  bool force = false;
};

struct DiffOptions {
  std::string agent;
  std::string against;  // empty: the worktree's base
};

// agentstream git commit|merge|push|discard AGENT.
struct GitCommandOptions {
  std::string action;
  std::string agent;
  std::optional<std::string> message;  // commit
  std::optional<std::string> into;     // merge
  bool no_ff = false;                  // merge
  std::string remote = "origin";       // push, pr
  std::optional<std::string> title;    // pr
  std::optional<std::string> body;     // pr
  std::optional<std::string> base;     // pr
};

struct SendOptions {
  std::string agent;
  std::string text;
  bool wait = false;                    // follow the started turn until it ends
  std::string while_running = "queue";  // queue | interrupt | steer
  std::string client_id;                // empty: a fresh random id
};

struct SearchOptions {
  std::string query;
  std::string agent;  // empty: every agent
  int limit = 20;
};

struct HistoryOptions {
  std::string agent;
  std::string before, after;  // at most one: a cursor EPOCH:SEQ
  int limit = 50;
};

struct FollowOptions {
  std::string agent;
  std::string from;    // empty: from the beginning of the session
  bool plain = false;  // no ANSI and no inline prompt, even on a terminal
};

// `import claude|codex`: the CLI's transcripts the daemon finds, each with something new imported
// (docs/import.md).
struct ImportOptions {
  std::string source;   // claude | codex
  std::string project;  // only this working directory's transcripts
  std::string since;    // only files modified since: YYYY-MM-DD (UTC) or milliseconds
};

int ListAgents(const ClientContext& context, bool include_closed);
int Import(const ClientContext& context, const ImportOptions& options);
// --since's value in milliseconds since the epoch: a date YYYY-MM-DD (UTC midnight) or a number.
std::optional<std::int64_t> ParseSinceDate(const std::string& text);
// `agents catalog`: the daemon's ACP catalog, whether each agent is installed there and proven.
int ListCatalog(const ClientContext& context);
int NewAgent(const ClientContext& context, const NewAgentOptions& options);
int ShowAgent(const ClientContext& context, const std::string& agent);
int RemoveAgent(const ClientContext& context, const RemoveAgentOptions& options);
// The agent's changes: the unified diff (or the JSON form with --json).
int Diff(const ClientContext& context, const DiffOptions& options);
// Every agent's worktree with its branch and state.
int ListWorktrees(const ClientContext& context);
// A git action on an agent's worktree; exit 1 when git would not (a merge's conflict, a refused
// push), with what happened on stdout.
int GitAction(const ClientContext& context, const GitCommandOptions& options);
int Send(const ClientContext& context, const SendOptions& options);
int History(const ClientContext& context, const HistoryOptions& options);
int Interrupt(const ClientContext& context, const std::string& agent);
// approve (allow = true) or deny.
int AnswerPermission(const ClientContext& context, const std::string& agent,
                     const std::string& request, bool allow, const std::string& message);
int Fork(const ClientContext& context, const std::string& agent, const std::string& cursor);
int Rename(const ClientContext& context, const std::string& agent, const std::string& title);
int Search(const ClientContext& context, const SearchOptions& options);
int Rewind(const ClientContext& context, const std::string& agent, const std::string& cursor);
int SetMode(const ClientContext& context, const std::string& agent, const std::string& mode);
int SetModel(const ClientContext& context, const std::string& agent, const std::string& model);
int SetThinking(const ClientContext& context, const std::string& agent, const std::string& option);
int Follow(const ClientContext& context, const FollowOptions& options);

}  // namespace agentstream::cli
