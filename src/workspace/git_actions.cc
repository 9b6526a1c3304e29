#include "workspace/git_actions.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "core/utf8.h"
#include "process/run_command.h"
#include "workspace/refs.h"

namespace agentstream::workspace {

namespace {

constexpr std::size_t kMaxIdentityBytes = 256;
constexpr std::size_t kMaxSubjectBytes = 200;  // a message's first line, as recorded
constexpr std::size_t kMaxRemoteNameBytes = 100;
constexpr std::string_view kHeads = "refs/heads/";

// Settings of a command that writes commits: no signing program, the identity given.
std::vector<std::string> CommitSettings(const GitIdentity& who) {
  return {"-c", "commit.gpgSign=false",    "-c", "tag.gpgSign=false",
          "-c", "user.name=" + who.name,   "-c", "user.email=" + who.email,
          "-c", "user.useConfigOnly=false"};
}

// What a command that answers one value printed (`git config --get`, `git symbolic-ref -q`):
// its stdout without the trailing newline, or "" when it exited non-zero (no such value).
std::string ValueOf(const GitOutput& output) {
  std::string value = output.exit_code == 0 ? output.out : std::string();
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

// `settings`, then `args`: one git command line.
std::vector<std::string> With(std::vector<std::string> settings,
                              std::initializer_list<std::string> args) {
  settings.insert(settings.end(), args.begin(), args.end());
  return settings;
}

std::string FirstLine(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == ' ')) text.remove_prefix(1);
  return BoundUtf8(text.substr(0, text.find('\n')), kMaxSubjectBytes).text;
}

std::string ShortBranch(std::string_view ref) {
  if (ref.starts_with(kHeads)) ref.remove_prefix(kHeads.size());
  return std::string(ref);
}

bool HasControl(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// A URL git may push to here: an absolute path or file://, https://, ssh:// or scp-like
// "[user@]host:path". Transport helpers ("ext::", "fd::", a "vcs" of a remote) and plain http are
// not.
bool PushableUrl(std::string_view url) {
  if (url.empty() || HasControl(url) || url.find("::") != std::string_view::npos) return false;
  for (const std::string_view scheme : {"https://", "ssh://", "file://"})
    if (url.starts_with(scheme)) return true;
  if (url.front() == '/') return true;
  if (url.find("://") != std::string_view::npos || url.front() == '-') return false;
  const std::size_t colon = url.find(':');
  const std::size_t slash = url.find('/');
  return colon != std::string_view::npos && colon > 0 &&
         (slash == std::string_view::npos || colon < slash);
}

Status CheckRemoteName(std::string_view name) {
  const bool ok =
      !name.empty() && name.size() <= kMaxRemoteNameBytes && name.front() != '-' &&
      name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (ok) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument,
               "remote \"" + BoundUtf8(name, 64).text +
                   "\" is not a remote name (letters, digits, '-', '_', '.'; at most 100 bytes)");
}

// The entries of `git status --porcelain=v1 -z`, as paths (a rename's new path), at most `max`.
std::vector<std::string> StatusPaths(std::string_view out, std::size_t max) {
  std::vector<std::string> paths;
  const std::vector<std::string> entries = SplitNul(out);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& entry = entries[i];
    if (entry.size() > 3 && paths.size() < max) paths.push_back(entry.substr(3));
    if (entry.size() > 1 && (entry[0] == 'R' || entry[0] == 'C')) ++i;  // the original path
  }
  return paths;
}

}  // namespace

Result<GitIdentity> ParseGitIdentity(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error(
        ErrorCode::kInvalidArgument,
        "\"" + BoundUtf8(text, 64).text + "\" is not \"Name <email>\": " + std::string(why));
  };
  if (text.size() > kMaxIdentityBytes) return bad("longer than 256 bytes");
  if (HasControl(text) || !IsValidUtf8(text)) return bad("a control character or invalid UTF-8");
  const std::size_t open = text.find('<');
  if (open == std::string_view::npos || text.back() != '>' ||
      text.find('<', open + 1) != text.npos || text.find('>') != text.size() - 1)
    return bad("no single <email> at its end");
  std::string_view name = text.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  const std::string_view email = text.substr(open + 1, text.size() - open - 2);
  if (name.empty()) return bad("an empty name");
  if (email.empty() || email.find(' ') != email.npos)
    return bad("an empty email or one with a space");
  return GitIdentity{std::string(name), std::string(email)};
}

GitActions::GitActions(const Worktrees& worktrees, GitActionOptions options)
    : worktrees_(worktrees), options_(std::move(options)) {}

Result<GitIdentity> GitActions::IdentityAt(const GitPlace& place) const {
  if (options_.identity) return *options_.identity;
  const Git& git = worktrees_.git();
  AS_ASSIGN_OR_RETURN(GitOutput name, git.Run(place, {"config", "--get", "user.name"}, 1024));
  AS_ASSIGN_OR_RETURN(GitOutput email, git.Run(place, {"config", "--get", "user.email"}, 1024));
  GitIdentity who{ValueOf(name), ValueOf(email)};
  if (who.name.empty() || who.email.empty() || HasControl(who.name) || HasControl(who.email))
    return GitIdentity{"agentstream", "agentstream@localhost"};
  return who;
}

Result<GitActionResult> GitActions::Commit(const Workspace& workspace,
                                           const std::string& message) const {
  if (message.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error(ErrorCode::kInvalidArgument, "the commit message is empty");
  if (message.size() > kMaxCommitMessageBytes)
    return Error(
        ErrorCode::kInvalidArgument,
        "the commit message is longer than " + std::to_string(kMaxCommitMessageBytes) + " bytes");
  if (!IsValidUtf8(message) || message.find('\0') != std::string::npos)
    return Error(ErrorCode::kInvalidArgument, "the commit message is not UTF-8 text");
  const Git& git = worktrees_.git();
  AS_ASSIGN_OR_RETURN(GitPlace place, worktrees_.PlaceOf(workspace));
  // Commits go on the worktree's own branch only.
  AS_ASSIGN_OR_RETURN(GitOutput head, git.Run(place, {"symbolic-ref", "-q", "HEAD"}, 4096));
  const std::string on = ValueOf(head);
  if (on != std::string(kHeads) + workspace.branch) {
    return Error(
        ErrorCode::kConflict,
        "the worktree " + workspace.path + " is not on its branch " + workspace.branch +
            (on.empty() ? std::string(" (a detached HEAD)") : " but on " + ShortBranch(on)) +
            "; nothing was committed");
  }
  AS_ASSIGN_OR_RETURN(bool dirty, worktrees_.HasChanges(workspace, nullptr));
  if (!dirty) return Error(ErrorCode::kConflict, "nothing to commit in " + workspace.path);
  AS_ASSIGN_OR_RETURN(GitIdentity who, IdentityAt(place));
  AS_RETURN_IF_ERROR(git.Check(place, {"add", "-A", "--", "."}, ErrorCode::kConflict).status());
  AS_RETURN_IF_ERROR(git.Check(place,
                               With(CommitSettings(who), {"commit", "-q", "--no-verify",
                                                          "--cleanup=strip", "-m", message}),
                               ErrorCode::kConflict)
                         .status());
  AS_ASSIGN_OR_RETURN(std::string commit,
                      git.Check(place, {"rev-parse", "--verify", "HEAD"}, ErrorCode::kInternal));
  GitActionResult result;
  result.action = "commit";
  result.outcome = "committed";
  result.branch = workspace.branch;
  result.commit = commit;
  result.message = FirstLine(message);
  return result;
}

Result<std::string> GitActions::MergeTarget(const Workspace& workspace, const GitPlace& repository,
                                            const std::optional<std::string>& into) const {
  std::string ref;
  if (into) {
    ref = into->starts_with(kHeads) ? *into : std::string(kHeads) + *into;
    AS_RETURN_IF_ERROR(CheckBranchName(ShortBranch(ref)));
  } else if (workspace.base.starts_with(kHeads)) {
    ref = workspace.base;  // a fork's base, or a base given as a full branch ref
  } else if (workspace.base != "HEAD" && !IsFullObjectId(workspace.base) &&
             !workspace.base.starts_with("refs/")) {
    ref = std::string(kHeads) + workspace.base;  // a base given as a branch name
  } else {
    // HEAD, a tag or a commit: the branch the repository is on.
    AS_ASSIGN_OR_RETURN(GitOutput head,
                        worktrees_.git().Run(repository, {"symbolic-ref", "-q", "HEAD"}, 4096));
    ref = ValueOf(head);
    if (!ref.starts_with(kHeads)) {
      return Error(ErrorCode::kInvalidArgument,
                   "the worktree's base " + workspace.base +
                       " is not a branch and the repository is on none; name one to merge into");
    }
  }
  if (ref == std::string(kHeads) + workspace.branch)
    return Error(ErrorCode::kInvalidArgument, "a branch cannot be merged into itself");
  return ref;
}

Result<GitActionResult> GitActions::Merge(const Workspace& workspace,
                                          const std::optional<std::string>& into,
                                          bool no_ff) const {
  const Git& git = worktrees_.git();
  AS_ASSIGN_OR_RETURN(GitPlace repository, RepositoryPlace(git, workspace.repository));
  AS_ASSIGN_OR_RETURN(const std::string target, MergeTarget(workspace, repository, into));
  AS_ASSIGN_OR_RETURN(const std::string old, ResolveCommit(git, repository, "into", target));
  AS_ASSIGN_OR_RETURN(const std::string tip, ResolveCommit(git, repository, "branch",
                                                           std::string(kHeads) + workspace.branch));
  GitActionResult result;
  result.action = "merge";
  result.branch = workspace.branch;
  result.target = ShortBranch(target);
  AS_ASSIGN_OR_RETURN(GitOutput contained,
                      git.Run(repository, {"merge-base", "--is-ancestor", tip, old}));
  if (contained.exit_code == 0) {
    result.outcome = "up-to-date";
    result.commit = old;
    return result;
  }
  AS_ASSIGN_OR_RETURN(GitOutput fast,
                      git.Run(repository, {"merge-base", "--is-ancestor", old, tip}));
  std::string next = tip;
  result.outcome = "fast-forward";
  if (fast.exit_code != 0 || no_ff) {
    // The merge, computed without a work tree: a conflict changes nothing.
    AS_ASSIGN_OR_RETURN(GitOutput merged,
                        git.Run(repository, {"merge-tree", "--write-tree", "-z", "--name-only",
                                             "--no-messages", old, tip}));
    if (merged.exit_code > 1)
      return Error(ErrorCode::kConflict, "git merge-tree failed: " + GitMessage(merged));
    std::vector<std::string> out = SplitNul(merged.out);
    if (out.empty()) return Error(ErrorCode::kInternal, "git merge-tree wrote no tree");
    if (merged.exit_code == 1) {
      result.outcome = "conflict";
      for (std::size_t i = 1; i < out.size() && result.files.size() < kMaxConflictFilesListed; ++i)
        if (std::find(result.files.begin(), result.files.end(), out[i]) == result.files.end())
          result.files.push_back(out[i]);
      result.message = std::to_string(result.files.size()) + " file(s) conflict; nothing merged";
      return result;
    }
    AS_ASSIGN_OR_RETURN(GitIdentity who, IdentityAt(repository));
    const std::string subject =
        "Merge branch '" + workspace.branch + "' into " + ShortBranch(target);
    AS_ASSIGN_OR_RETURN(next, git.Check(repository,
                                        With(CommitSettings(who), {"commit-tree", out[0], "-p", old,
                                                                   "-p", tip, "-m", subject}),
                                        ErrorCode::kConflict));
    result.outcome = "merged";
    result.message = subject;
  }
  result.commit = next;
  AS_RETURN_IF_ERROR(MoveBranch(workspace, repository, target, old, next));
  return result;
}

Status GitActions::MoveBranch(const Workspace& workspace, const GitPlace& repository,
                              const std::string& target, const std::string& old,
                              const std::string& next) const {
  const Git& git = worktrees_.git();
  // Move the target: in the worktree it is checked out in, by git's own fast-forward there (it
  // refuses as a whole when local changes are in the way), else by a compare-and-swap of the ref.
  AS_ASSIGN_OR_RETURN(GitOutput list,
                      git.Run(repository, {"worktree", "list", "--porcelain", "-z"}));
  std::string checked_out;
  std::string path;
  for (const std::string& field : SplitNul(list.out)) {
    if (field.starts_with("worktree ")) path = field.substr(9);
    if (field == "branch " + target) checked_out = path;
  }
  if (checked_out.empty()) {
    AS_ASSIGN_OR_RETURN(
        GitOutput moved,
        git.Run(repository,
                {"update-ref", "-m", "agentstream: merge " + workspace.branch, target, next, old}));
    if (moved.exit_code != 0) {
      return Error(ErrorCode::kConflict,
                   ShortBranch(target) +
                       " moved during the merge; nothing was merged: " + GitMessage(moved));
    }
    return Status::Ok();
  }
  Result<GitPlace> there = checked_out == workspace.repository
                               ? RepositoryPlace(git, workspace.repository)
                               : WorktreePlace(git, workspace.repository, checked_out);
  AS_RETURN_IF_ERROR(there.status());
  if (!there->filters.empty()) {
    return Error(ErrorCode::kConflict,
                 ShortBranch(target) + " is checked out at " + checked_out +
                     " and the repository configures filter drivers, which the daemon does not "
                     "run; nothing was merged (merge there by hand: git merge --ff-only " +
                     next + ")");
  }
  AS_ASSIGN_OR_RETURN(std::string head,
                      git.Check(*there, {"rev-parse", "--verify", "HEAD"}, ErrorCode::kConflict));
  if (head != old)
    return Error(ErrorCode::kConflict,
                 ShortBranch(target) + " moved during the merge; nothing was merged");
  AS_ASSIGN_OR_RETURN(GitOutput ff,
                      git.Run(*there, {"merge", "--ff-only", "-q", "--no-verify", next}));
  if (ff.exit_code != 0) {
    return Error(ErrorCode::kConflict, "git refused to update " + checked_out + " (where " +
                                           ShortBranch(target) +
                                           " is checked out); nothing was "
                                           "merged: " +
                                           GitMessage(ff));
  }
  return Status::Ok();
}

Result<GitActionResult> GitActions::Push(const Workspace& workspace,
                                         const std::string& remote) const {
  AS_RETURN_IF_ERROR(CheckRemoteName(remote));
  AS_ASSIGN_OR_RETURN(GitPlace place, worktrees_.PlaceOf(workspace));
  // The URL is read here and given to git itself, so that none of the remote's other settings
  // (receivepack, vcs, a helper) apply.
  AS_ASSIGN_OR_RETURN(const std::string url, RemoteUrl(place, remote, /*for_push=*/true));
  const Git& git = worktrees_.git();
  if (url.empty())
    return Error(ErrorCode::kInvalidArgument, "the repository has no remote \"" + remote + "\"");
  if (!PushableUrl(url)) {
    return Error(ErrorCode::kInvalidArgument,
                 "the URL of remote \"" + remote +
                     "\" is not a path, https://, ssh:// or host:path URL; the daemon pushes to "
                     "no other kind");
  }
  AS_ASSIGN_OR_RETURN(const std::string tip,
                      ResolveCommit(git, place, "branch", std::string(kHeads) + workspace.branch));
  GitOptions push_options = git.options();
  push_options.timeout = options_.push_timeout;
  const Git pusher(push_options);
  const std::string refspec =
      std::string(kHeads) + workspace.branch + ":" + std::string(kHeads) + workspace.branch;
  AS_ASSIGN_OR_RETURN(
      GitOutput pushed,
      pusher.Run(place, {"-c", "protocol.file.allow=always", "-c", "protocol.https.allow=always",
                         "-c", "protocol.ssh.allow=always", "-c", "core.sshCommand=ssh", "-c",
                         "core.askPass=", "-c", "push.gpgSign=false", "push", "--porcelain",
                         "--no-verify", "--receive-pack=git-receive-pack", "--", url, refspec}));
  GitActionResult result;
  result.action = "push";
  result.branch = workspace.branch;
  result.commit = tip;
  result.target = remote;
  if (pushed.exit_code == 0) {
    result.outcome = "pushed";
    return result;
  }
  // --porcelain: "!<TAB>from:to<TAB>[rejected] (why)" for a refused ref.
  std::string why;
  for (std::string_view rest = pushed.out; !rest.empty();) {
    const std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(std::min(rest.size(), line.size() + 1));
    if (line.starts_with("!\t")) why = std::string(line.substr(line.rfind('\t') + 1));
  }
  result.outcome = "refused";
  const std::string said = GitMessage(pushed);
  result.message = BoundUtf8(why.empty() ? said : why + ": " + said, 1024).text;
  return result;
}

Result<std::string> GitActions::RemoteUrl(const GitPlace& place, const std::string& remote,
                                          bool for_push) const {
  std::string url;  // pushurl wins over url for a push, as in git
  for (const char* key : {"pushurl", "url"}) {
    if (!for_push && std::string_view(key) == "pushurl") continue;
    AS_ASSIGN_OR_RETURN(
        GitOutput got,
        worktrees_.git().Run(place, {"config", "--get", "remote." + remote + "." + key}, 8192));
    if (url.empty()) url = ValueOf(got);
  }
  return url;
}

std::optional<std::string> GitHubRepository(std::string_view url) {
  if (HasControl(url)) return std::nullopt;
  std::string_view rest;
  std::string_view host;
  if (url.starts_with("https://") || url.starts_with("ssh://")) {
    rest = url.substr(url.find("://") + 3);
    const std::size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    host = rest.substr(0, slash);
    rest.remove_prefix(slash + 1);
    if (const std::size_t at = host.rfind('@'); at != std::string_view::npos)
      host.remove_prefix(at + 1);
    if (const std::size_t colon = host.find(':'); colon != std::string_view::npos)
      host = host.substr(0, colon);  // ssh://git@host:22/...
  } else if (url.find("://") == std::string_view::npos && !url.starts_with('/')) {
    const std::size_t colon = url.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = url.substr(0, colon);
    if (const std::size_t at = host.rfind('@'); at != std::string_view::npos)
      host.remove_prefix(at + 1);
    rest = url.substr(colon + 1);
  } else {
    return std::nullopt;
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.ends_with(".git")) rest.remove_suffix(4);
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos || rest.find('/', slash + 1) != std::string_view::npos)
    return std::nullopt;
  auto name_ok = [](std::string_view part) {
    return !part.empty() && part.front() != '-' && part != "." && part != ".." &&
           std::all_of(part.begin(), part.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
           });
  };
  if (!name_ok(host) || !name_ok(rest.substr(0, slash)) || !name_ok(rest.substr(slash + 1)))
    return std::nullopt;
  return std::string(host) + "/" + std::string(rest);
}

Result<GitActionResult> GitActions::PullRequest(const Workspace& workspace,
                                                const std::string& remote,
                                                const std::optional<std::string>& base,
                                                const std::string& title,
                                                const std::string& body) const {
  if (title.empty() || title.size() > kMaxPullRequestTitleBytes || HasControl(title) ||
      !IsValidUtf8(title)) {
    return Error(ErrorCode::kInvalidArgument,
                 "a pull request's title is one line of UTF-8 text, 1 to 256 bytes");
  }
  if (body.size() > kMaxPullRequestBodyBytes || !IsValidUtf8(body))
    return Error(ErrorCode::kInvalidArgument,
                 "a pull request's body is UTF-8 text of at most 64 KiB");
  AS_RETURN_IF_ERROR(CheckRemoteName(remote));
  AS_ASSIGN_OR_RETURN(GitPlace place, worktrees_.PlaceOf(workspace));
  AS_ASSIGN_OR_RETURN(const std::string url, RemoteUrl(place, remote, /*for_push=*/false));
  if (url.empty())
    return Error(ErrorCode::kInvalidArgument, "the repository has no remote \"" + remote + "\"");
  const std::optional<std::string> repository = GitHubRepository(url);
  if (!repository) {
    return Error(ErrorCode::kInvalidArgument,
                 "remote \"" + remote +
                     "\" is not a GitHub repository's URL (https://HOST/OWNER/REPO or "
                     "git@HOST:OWNER/REPO); a pull request is opened with gh on GitHub only");
  }
  const Git& git = worktrees_.git();
  AS_ASSIGN_OR_RETURN(GitPlace repo_place, RepositoryPlace(git, workspace.repository));
  AS_ASSIGN_OR_RETURN(const std::string target, MergeTarget(workspace, repo_place, base));
  AS_ASSIGN_OR_RETURN(GitActionResult result, Push(workspace, remote));
  result.action = "pr";
  result.target = ShortBranch(target);
  if (result.outcome != "pushed") return result;
  // Outside the worktree, with no GIT_* of the daemon's: gh reads nothing the agent wrote.
  process::SpawnOptions spawn;
  spawn.argv = {options_.gh_program,
                "pr",
                "create",
                "--repo",
                *repository,
                "--head",
                workspace.branch,
                "--base",
                ShortBranch(target),
                "--title",
                title,
                "--body",
                body};
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    if (!variable.starts_with("GIT_") && !variable.starts_with("GH_PROMPT"))
      spawn.env.emplace_back(variable);
  }
  for (const char* setting :
       {"GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_SPINNER_DISABLED=1"})
    spawn.env.emplace_back(setting);
  spawn.cwd = "/";
  auto ran = process::RunCommand(spawn, options_.gh_timeout, 64 << 10);
  if (!ran.ok() && ran.status().code() == ErrorCode::kNotFound) {
    return Error(ErrorCode::kUnavailable,
                 "the gh CLI is not installed or not in the daemon's PATH (the branch was pushed)");
  }
  if (!ran.ok()) return Error(ErrorCode::kUnavailable, "gh: " + ran.status().message());
  if (ran->exit.exit_code != 0) {
    result.outcome = "failed";
    result.message = BoundUtf8("gh pr create: " + ran->exit.Describe(), 1024).text;
    return result;
  }
  // gh prints the new pull request's URL as its last line.
  std::string_view out = ran->out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.remove_suffix(1);
  const std::string_view last =
      out.substr(out.rfind('\n') == std::string_view::npos ? 0 : out.rfind('\n') + 1);
  result.outcome = "opened";
  if (last.starts_with("https://") && !HasControl(last)) result.url = BoundUtf8(last, 1024).text;
  return result;
}

Result<GitActionResult> GitActions::Discard(const Workspace& workspace) const {
  const Git& git = worktrees_.git();
  AS_ASSIGN_OR_RETURN(GitPlace place, worktrees_.PlaceOf(workspace));
  AS_ASSIGN_OR_RETURN(GitOutput status,
                      git.Run(place, {"status", "--porcelain=v1", "-z", "--ignore-submodules=all"},
                              std::size_t{1} << 20));
  if (status.exit_code != 0)
    return Error(ErrorCode::kConflict,
                 "git status failed in " + workspace.path + ": " + GitMessage(status));
  if (status.out.empty() || status.out == "\n")
    return Error(ErrorCode::kConflict, "nothing to discard in " + workspace.path);
  GitActionResult result;
  result.action = "discard";
  result.outcome = "discarded";
  result.branch = workspace.branch;
  result.files = StatusPaths(status.out, kMaxConflictFilesListed);
  AS_RETURN_IF_ERROR(
      git.Check(place, {"reset", "-q", "--hard", "HEAD"}, ErrorCode::kConflict).status());
  AS_RETURN_IF_ERROR(git.Check(place, {"clean", "-q", "-f", "-d"}, ErrorCode::kConflict).status());
  AS_ASSIGN_OR_RETURN(std::string head,
                      git.Check(place, {"rev-parse", "--verify", "HEAD"}, ErrorCode::kInternal));
  result.commit = head;
  return result;
}

}  // namespace agentstream::workspace
