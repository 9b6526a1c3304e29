#include "workspace/worktree.h"

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

namespace agentstream::workspace {

namespace fs = std::filesystem;

namespace {

// kInvalidArgument unless `path` is absolute and has no "." or ".." component.
Status CheckCwd(const std::string& path) {
  if (path.empty() || path.front() != '/')
    return Error(ErrorCode::kInvalidArgument, "cwd must be an absolute path for a worktree");
  for (const fs::path& part : fs::path(path)) {
    if (part == ".." || part == ".")
      return Error(ErrorCode::kInvalidArgument,
                   "cwd " + path + " must not contain \".\" or \"..\" components");
  }
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    return Error(ErrorCode::kInvalidArgument, "cwd " + path + " is not a directory");
  return Status::Ok();
}

// A ref given by a client is never taken for an option.
Status CheckRef(std::string_view what, const std::string& ref) {
  if (ref.empty() || ref.front() == '-' || ref.find('\0') != std::string::npos)
    return Error(ErrorCode::kInvalidArgument,
                 std::string(what) + " \"" + ref + "\" is not a valid ref");
  return Status::Ok();
}

}  // namespace

std::string_view WorktreeStateName(WorktreeState state) {
  switch (state) {
    case WorktreeState::kPresent:
      return "present";
    case WorktreeState::kRemoved:
      return "removed";
    case WorktreeState::kMissing:
      break;
  }
  return "missing";
}

Status CheckBranchName(const Git& git, const std::string& name) {
  AS_RETURN_IF_ERROR(CheckRef("branch", name));
  AS_ASSIGN_OR_RETURN(GitOutput checked, git.Run("/", {"check-ref-format", "--branch", name}));
  if (checked.exit_code != 0)
    return Error(ErrorCode::kInvalidArgument, "branch \"" + name + "\" is not a valid name");
  return Status::Ok();
}

Worktrees::Worktrees(Git git, std::string root) : git_(std::move(git)), root_(std::move(root)) {}

Result<std::string> Worktrees::ResolveCommit(const std::string& dir, const std::string& ref) const {
  AS_RETURN_IF_ERROR(CheckRef("base", ref));
  AS_ASSIGN_OR_RETURN(GitOutput resolved, git_.Run(dir, {"rev-parse", "--verify", "--quiet",
                                                         "--end-of-options", ref + "^{commit}"}));
  if (resolved.exit_code != 0 || resolved.out.size() < 41)
    return Error(ErrorCode::kInvalidArgument, "base \"" + ref + "\" is not a commit of " + dir);
  return resolved.out.substr(0, resolved.out.find('\n'));
}

Result<Workspace> Worktrees::Create(const std::string& cwd, const WorktreeRequest& request,
                                    const std::string& name) const {
  AS_RETURN_IF_ERROR(CheckCwd(cwd));
  AS_ASSIGN_OR_RETURN(GitOutput top, git_.Run(cwd, {"rev-parse", "--show-toplevel"}));
  if (top.exit_code != 0 || top.out.empty())
    return Error(ErrorCode::kInvalidArgument, "cwd " + cwd + " is not in a git repository");
  const std::string repository = top.out.substr(0, top.out.find('\n'));
  const std::string branch = request.branch.value_or("agentstream/" + name);
  return Add(repository, branch, request.base.value_or("HEAD"), name);
}

Result<Workspace> Worktrees::Branch(const Workspace& parent, const std::string& name) const {
  std::error_code ec;
  if (!fs::is_directory(parent.repository, ec))
    return Error(ErrorCode::kInvalidArgument,
                 "the repository " + parent.repository + " of the parent's worktree is gone");
  return Add(parent.repository, "agentstream/" + name, parent.branch, name);
}

Result<Workspace> Worktrees::Add(const std::string& repository, const std::string& branch,
                                 const std::string& base, const std::string& name) const {
  AS_RETURN_IF_ERROR(CheckBranchName(git_, branch));
  AS_ASSIGN_OR_RETURN(std::string commit, ResolveCommit(repository, base));
  AS_ASSIGN_OR_RETURN(GitOutput exists, git_.Run(repository, {"rev-parse", "--verify", "--quiet",
                                                              "refs/heads/" + branch}));
  if (exists.exit_code == 0)
    return Error(ErrorCode::kAlreadyExists, "branch \"" + branch + "\" exists in " + repository);
  const std::string path = (fs::path(root_) / name).string();
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return Error(ErrorCode::kIoError, "cannot create " + root_ + ": " + ec.message());
  if (fs::exists(path, ec))
    return Error(ErrorCode::kAlreadyExists, "the worktree directory " + path + " exists");
  AS_ASSIGN_OR_RETURN(GitOutput added, git_.Run(repository, {"worktree", "add", "--quiet", "-b",
                                                             branch, "--", path, commit}));
  if (added.exit_code != 0) {
    fs::remove_all(path, ec);
    return Error(ErrorCode::kInvalidArgument, "git worktree add failed: " + GitMessage(added));
  }
  return Workspace{path, branch, base, commit, repository};
}

Result<bool> Worktrees::HasChanges(const Workspace& workspace, std::string* summary) const {
  AS_ASSIGN_OR_RETURN(GitOutput status, git_.Run(workspace.path, {"status", "--porcelain=v1"},
                                                 std::size_t{64} << 10));
  if (status.exit_code != 0)
    return Error(ErrorCode::kInvalidArgument,
                 "git status failed in " + workspace.path + ": " + GitMessage(status));
  if (summary != nullptr) {
    *summary = status.out.substr(0, 512);
    while (!summary->empty() && summary->back() == '\n') summary->pop_back();
  }
  return !status.out.empty();
}

Status Worktrees::Remove(const Workspace& workspace, bool force) const {
  if (StateOf(workspace) == WorktreeState::kMissing) {
    (void)git_.Run(workspace.repository, {"worktree", "prune"});
    return Status::Ok();
  }
  std::string changes;
  AS_ASSIGN_OR_RETURN(bool dirty, HasChanges(workspace, &changes));
  if (dirty && !force) {
    return Error(ErrorCode::kConflict, "the worktree " + workspace.path +
                                           " has uncommitted changes (pass force=true to "
                                           "discard them):\n" +
                                           changes);
  }
  std::vector<std::string> args{"worktree", "remove"};
  if (force) args.emplace_back("--force");
  args.emplace_back(workspace.path);
  AS_ASSIGN_OR_RETURN(GitOutput removed, git_.Run(workspace.repository, args));
  if (removed.exit_code != 0)
    return Error(ErrorCode::kConflict, "git worktree remove failed: " + GitMessage(removed));
  return Status::Ok();
}

void Worktrees::Discard(const Workspace& workspace) const {
  (void)git_.Run(workspace.repository, {"worktree", "remove", "--force", workspace.path});
  (void)git_.Run(workspace.repository, {"branch", "-D", "--", workspace.branch});
}

WorktreeState Worktrees::StateOf(const Workspace& workspace) const {
  std::error_code ec;
  return fs::exists(fs::path(workspace.path) / ".git", ec) ? WorktreeState::kPresent
                                                           : WorktreeState::kMissing;
}

}  // namespace agentstream::workspace
