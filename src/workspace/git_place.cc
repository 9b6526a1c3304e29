#include "workspace/git_place.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <utility>

namespace agentstream::workspace {

namespace fs = std::filesystem;

namespace {

// Longest `.git`, `gitdir` or `commondir` file read: one path.
constexpr std::streamsize kMaxPointerBytes = 4096;

enum class Kind { kNone, kDirectory, kFile, kOther };

// What `path` itself is, never following a symbolic link.
Kind KindOf(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Kind::kNone;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  if (S_ISREG(st.st_mode)) return Kind::kFile;
  return Kind::kOther;
}

// The first line of a small file (`.git`, `gitdir`, `commondir`), or nullopt when it cannot be
// read or is too long to be one path.
std::optional<std::string> FirstLine(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(static_cast<std::size_t>(kMaxPointerBytes) + 1, '\0');
  in.read(text.data(), kMaxPointerBytes + 1);
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > static_cast<std::size_t>(kMaxPointerBytes)) return std::nullopt;
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

// The directory a `.git` file names ("gitdir: PATH", relative to the file's directory), made
// lexically normal.
std::optional<fs::path> GitdirOf(const fs::path& dot_git) {
  std::optional<std::string> line = FirstLine(dot_git);
  constexpr std::string_view kPrefix = "gitdir: ";
  if (!line || line->rfind(kPrefix, 0) != 0 || line->size() == kPrefix.size()) return std::nullopt;
  fs::path target = line->substr(kPrefix.size());
  if (target.is_relative()) target = dot_git.parent_path() / target;
  return target.lexically_normal();
}

fs::path Canonical(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  return ec ? path.lexically_normal() : canonical;
}

// The filter drivers named in the repository's configuration.
Result<std::vector<std::string>> FilterDrivers(const Git& git, const GitPlace& place) {
  AS_ASSIGN_OR_RETURN(GitOutput out, git.Run(place, {"config", "--null", "--name-only",
                                                     "--get-regexp", "^filter\\..*\\.[^.]*$"}));
  // Exit 1: no such setting.
  if (out.exit_code != 0 && out.exit_code != 1)
    return Error(ErrorCode::kInvalidArgument, "git config failed: " + GitMessage(out));
  std::vector<std::string> drivers;
  for (const std::string& key : SplitNul(out.out)) {  // filter.NAME.KEY
    const std::size_t last_dot = key.rfind('.');
    if (last_dot == std::string::npos || last_dot <= 7) continue;
    std::string name = key.substr(7, last_dot - 7);
    if (std::find(drivers.begin(), drivers.end(), name) == drivers.end())
      drivers.push_back(std::move(name));
  }
  return drivers;
}

Status Tampered(const std::string& path, const std::string& why) {
  return Error(ErrorCode::kConflict, "the worktree " + path + " " + why +
                                         "; the daemon will not run git there (remove the "
                                         "directory by hand and run `git worktree prune`)");
}

}  // namespace

Result<std::string> FindRepositoryTop(const std::string& cwd) {
  std::error_code ec;
  fs::path dir = fs::canonical(cwd, ec);
  if (ec) return Error(ErrorCode::kInvalidArgument, "cwd " + cwd + " is not a directory");
  while (true) {
    const Kind kind = KindOf(dir / ".git");
    if (kind == Kind::kDirectory || kind == Kind::kFile) return dir.string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return Error(ErrorCode::kInvalidArgument, "cwd " + cwd + " is not in a git repository");
}

Result<GitPlace> RepositoryPlace(const Git& git, const std::string& top) {
  const fs::path dot_git = fs::path(top) / ".git";
  GitPlace place;
  place.work_tree = top;
  switch (KindOf(dot_git)) {
    case Kind::kDirectory:
      place.git_dir = dot_git.string();
      break;
    case Kind::kFile: {
      std::optional<fs::path> gitdir = GitdirOf(dot_git);
      if (!gitdir || KindOf(*gitdir) != Kind::kDirectory)
        return Error(ErrorCode::kInvalidArgument,
                     "the .git file of " + top + " does not name a git directory");
      place.git_dir = gitdir->string();
      break;
    }
    default:
      return Error(ErrorCode::kInvalidArgument, top + " is not a git repository");
  }
  place.common_dir = place.git_dir;
  if (std::optional<std::string> common = FirstLine(fs::path(place.git_dir) / "commondir")) {
    fs::path dir = *common;
    if (dir.is_relative()) dir = fs::path(place.git_dir) / dir;
    place.common_dir = dir.lexically_normal().string();
  }
  place.common_dir = Canonical(place.common_dir).string();
  AS_ASSIGN_OR_RETURN(place.filters, FilterDrivers(git, place));
  return place;
}

Result<GitPlace> WorktreePlace(const Git& git, const std::string& top, const std::string& path) {
  const fs::path dot_git = fs::path(path) / ".git";
  const Kind kind = KindOf(dot_git);
  if (kind == Kind::kNone)
    return Error(ErrorCode::kNotFound, "the worktree " + path + " is missing");
  if (kind != Kind::kFile) return Tampered(path, "has a .git that is not a plain file");
  AS_ASSIGN_OR_RETURN(GitPlace place, RepositoryPlace(git, top));
  std::optional<fs::path> entry = GitdirOf(dot_git);
  const fs::path worktrees = fs::path(place.common_dir) / "worktrees";
  if (!entry || entry->parent_path() != worktrees || entry->filename().empty() ||
      entry->filename() == "." || entry->filename() == "..")
    return Tampered(path, "has a .git file that does not name its repository's worktree entry");
  if (KindOf(*entry) != Kind::kDirectory)
    return Tampered(path, "names the worktree entry " + entry->string() + ", which is missing");
  std::optional<std::string> back = FirstLine(*entry / "gitdir");
  fs::path named = back ? fs::path(*back) : fs::path();
  if (named.is_relative()) named = *entry / named;
  if (!back || back->empty() || Canonical(named) != Canonical(dot_git))
    return Tampered(path, "is not the worktree its entry " + entry->string() + " names");
  place.git_dir = entry->string();
  place.work_tree = path;
  return place;
}

}  // namespace agentstream::workspace
