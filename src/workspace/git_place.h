// Where git may run: the repository and worktree places of git.h, located from the file system
// alone and checked, so that no git command ever discovers a repository from a directory an
// agent can write (docs/workspaces.md, "What git is allowed to do").
//
// A linked worktree is two halves that name each other: its `.git` file ("gitdir: PATH") names
// the repository's entry `COMMON/worktrees/NAME`, and that entry's `gitdir` file names the
// worktree's `.git` back. The entry is outside the worktree, where its agent does not write; the
// `.git` file is inside, so it is checked against the entry before every command, and git is
// then pointed at the entry (GIT_DIR), never at the `.git` file.
//
// Blocking (reads small files, and runs `git config` once per repository place); thread-safe.
#pragma once

#include <string>

#include "core/status.h"
#include "workspace/git.h"

namespace agentstream::workspace {

// The top directory of the repository containing `cwd` (an absolute path): the nearest
// directory at or above `cwd`, after symbolic links are resolved, that holds a `.git` directory
// or a `.git` file. kInvalidArgument ("... is not in a git repository") when there is none.
Result<std::string> FindRepositoryTop(const std::string& cwd);

// The repository whose top directory is `top`: GIT_DIR is `top/.git`, or the directory its
// `.git` file names (a repository that is itself a linked worktree or a submodule); the common
// directory is read from `commondir` there; the filter drivers of its configuration are listed
// (one `git config` run). kInvalidArgument when `top` holds no repository.
Result<GitPlace> RepositoryPlace(const Git& git, const std::string& top);

// The worktree at `path` of the repository at `top`, checked as the file comment says. GIT_DIR
// is the repository's entry for it and GIT_WORK_TREE is `path`. kNotFound when `path` has no
// `.git` file; kConflict ("... will not run git there") when the two halves do not name each
// other: the `.git` file is not a plain file, names another directory, or the entry names
// another worktree.
Result<GitPlace> WorktreePlace(const Git& git, const std::string& top, const std::string& path);

}  // namespace agentstream::workspace
