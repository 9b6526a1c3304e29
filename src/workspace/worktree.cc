#include "workspace/worktree.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "workspace/refs.h"

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

// The directories under refs/heads/ and logs/refs/heads/ that making `branch` would create (its
// leading components that do not exist yet), deepest first: what a failed create removes again.
std::vector<fs::path> NewRefDirectories(const GitPlace& place, const std::string& branch) {
  std::vector<fs::path> dirs;
  for (const char* base : {"refs/heads", "logs/refs/heads"}) {
    fs::path dir = fs::path(place.common_dir) / base;
    std::size_t slash = branch.find('/');
    std::error_code ec;
    while (slash != std::string::npos) {
      const fs::path prefix = dir / branch.substr(0, slash);
      if (!fs::exists(fs::symlink_status(prefix, ec))) dirs.push_back(prefix);
      slash = branch.find('/', slash + 1);
    }
  }
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return a.native().size() > b.native().size();
  });
  return dirs;
}

// The full id of the object `ref` (an exact ref) names, or nullopt when there is no such ref.
Result<std::optional<std::string>> ShowRef(const Git& git, const GitPlace& place,
                                           const std::string& ref) {
  AS_ASSIGN_OR_RETURN(GitOutput shown, git.Run(place, {"show-ref", "--verify", "--hash", ref}));
  if (shown.exit_code != 0) return std::optional<std::string>();
  return std::optional<std::string>(shown.out.substr(0, shown.out.find('\n')));
}

}  // namespace

Result<std::string> ResolveCommit(const Git& git, const GitPlace& place, std::string_view what,
                                  const std::string& ref) {
  AS_ASSIGN_OR_RETURN(std::string exact, ExactRef(what, ref));
  const auto not_a_commit = [&] {
    return Error(ErrorCode::kInvalidArgument,
                 std::string(what) + " \"" + ref + "\" is not a commit of " + place.work_tree);
  };
  if (exact.rfind("refs/", 0) == 0) {
    AS_ASSIGN_OR_RETURN(std::optional<std::string> object, ShowRef(git, place, exact));
    if (!object) return not_a_commit();
    exact = std::move(*object);
  }
  AS_ASSIGN_OR_RETURN(GitOutput resolved,
                      git.Run(place, {"rev-parse", "--verify", "--quiet", "--end-of-options",
                                      exact + "^{commit}"}));
  const std::string commit = resolved.out.substr(0, resolved.out.find('\n'));
  if (resolved.exit_code != 0 || !IsFullObjectId(commit)) return not_a_commit();
  return commit;
}

Worktrees::Worktrees(Git git, std::string root) : git_(std::move(git)), root_(std::move(root)) {}

Result<Workspace> Worktrees::Create(const std::string& cwd, const WorktreeRequest& request,
                                    const std::string& name) const {
  AS_RETURN_IF_ERROR(CheckCwd(cwd));
  const std::string branch = request.branch.value_or("agentstream/" + name);
  AS_RETURN_IF_ERROR(CheckBranchName(branch));
  if (request.base) AS_RETURN_IF_ERROR(ExactRef("base", *request.base).status());
  AS_ASSIGN_OR_RETURN(std::string top, FindRepositoryTop(cwd));
  AS_ASSIGN_OR_RETURN(GitPlace repository, RepositoryPlace(git_, top));
  return Add(repository, top, branch, request.base.value_or("HEAD"), name);
}

Result<Workspace> Worktrees::Branch(const Workspace& parent, const std::string& name) const {
  std::error_code ec;
  if (!fs::is_directory(parent.repository, ec))
    return Error(ErrorCode::kInvalidArgument,
                 "the repository " + parent.repository + " of the parent's worktree is gone");
  AS_RETURN_IF_ERROR(CheckBranchName(parent.branch));
  AS_ASSIGN_OR_RETURN(GitPlace repository, RepositoryPlace(git_, parent.repository));
  return Add(repository, parent.repository, "agentstream/" + name, parent.branch, name);
}

Result<Workspace> Worktrees::Add(const GitPlace& repository, const std::string& top,
                                 const std::string& branch, const std::string& base,
                                 const std::string& name) const {
  AS_RETURN_IF_ERROR(CheckBranchName(branch));
  AS_ASSIGN_OR_RETURN(std::string commit, ResolveCommit(git_, repository, "base", base));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> existing,
                      ShowRef(git_, repository, "refs/heads/" + branch));
  if (existing)
    return Error(ErrorCode::kAlreadyExists, "branch \"" + branch + "\" exists in " + top);
  const std::string path = (fs::path(root_) / name).string();
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return Error(ErrorCode::kIoError, "cannot create " + root_ + ": " + ec.message());
  if (fs::exists(fs::symlink_status(path, ec)))
    return Error(ErrorCode::kAlreadyExists, "the worktree directory " + path + " exists");
  const std::vector<fs::path> new_dirs = NewRefDirectories(repository, branch);
  AS_ASSIGN_OR_RETURN(GitOutput added, git_.Run(repository, {"worktree", "add", "--quiet", "-b",
                                                             branch, "--", path, commit}));
  if (added.exit_code != 0) {
    fs::remove_all(path, ec);
    (void)git_.Run(repository, {"worktree", "prune"});
    (void)git_.Run(repository, {"update-ref", "-d", "refs/heads/" + branch});
    for (const fs::path& dir : new_dirs) fs::remove(dir, ec);  // only when empty
    return Error(ErrorCode::kInvalidArgument, "git worktree add failed: " + GitMessage(added));
  }
  return Workspace{path, branch, base, commit, top};
}

Result<GitPlace> Worktrees::PlaceOf(const Workspace& workspace) const {
  return WorktreePlace(git_, workspace.repository, workspace.path);
}

Result<bool> Worktrees::HasChanges(const Workspace& workspace, std::string* summary) const {
  AS_ASSIGN_OR_RETURN(GitPlace place, PlaceOf(workspace));
  AS_ASSIGN_OR_RETURN(GitOutput status,
                      git_.Run(place, {"status", "--porcelain=v1", "--ignore-submodules=all"},
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
  AS_ASSIGN_OR_RETURN(GitPlace repository, RepositoryPlace(git_, workspace.repository));
  if (StateOf(workspace) == WorktreeState::kMissing) {
    (void)git_.Run(repository, {"worktree", "prune"});
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
  // --force: the worktree was checked just now, here; git's own check would run `git status`
  // with GIT_DIR taken from the worktree's .git file.
  AS_ASSIGN_OR_RETURN(GitOutput removed, git_.Run(repository, {"worktree", "remove", "--force",
                                                               "--", workspace.path}));
  if (removed.exit_code != 0)
    return Error(ErrorCode::kConflict, "git worktree remove failed: " + GitMessage(removed));
  return Status::Ok();
}

void Worktrees::Discard(const Workspace& workspace) const {
  auto repository = RepositoryPlace(git_, workspace.repository);
  if (!repository.ok()) return;
  (void)git_.Run(*repository, {"worktree", "remove", "--force", "--", workspace.path});
  (void)git_.Run(*repository, {"update-ref", "-d", "refs/heads/" + workspace.branch});
}

WorktreeState Worktrees::StateOf(const Workspace& workspace) const {
  std::error_code ec;
  return fs::exists(fs::symlink_status(fs::path(workspace.path) / ".git", ec))
             ? WorktreeState::kPresent
             : WorktreeState::kMissing;
}

}  // namespace agentstream::workspace
