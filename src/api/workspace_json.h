// The JSON shapes of agents' worktrees and diffs (docs/workspaces.md), shared by the server and
// the CLI client. Pure functions over Boost.JSON values; encoders never fail, and make every
// string valid UTF-8 (a diff's lines are a file's bytes, which may not be).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/ids.h"
#include "core/status.h"
#include "workspace/workspace_types.h"

namespace agentstream::api {

// {agent, path, branch, base, baseCommit, repository, state: present|missing, closed}.
boost::json::object WorktreeToJson(const SessionId& agent, const workspace::Workspace& workspace,
                                   workspace::WorktreeState state, bool closed);

// One entry of GET /v1/worktrees, read back by the CLI.
struct WorktreeEntry {
  SessionId agent;
  workspace::Workspace workspace;
  std::string state;
  bool closed = false;
};
Result<WorktreeEntry> WorktreeEntryFromJson(const boost::json::value& json);

// {agent, path, branch, base, baseCommit, against, againstCommit, truncated, additions,
//  deletions, files: [{path, oldPath?, status, binary, oldMode?, newMode?, additions, deletions,
//  hunks: [{header, oldStart, oldLines, newStart, newLines, lines: [string]}]}]}.
boost::json::object DiffToJson(const SessionId& agent, const workspace::Workspace& workspace,
                               const workspace::WorktreeDiff& diff);

}  // namespace agentstream::api
