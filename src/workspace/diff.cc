#include "workspace/diff.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "workspace/unified_diff.h"

namespace agentstream::workspace {

namespace {

// The options every diff runs with: the same text whatever the user's git configuration says
// about colors, external diff drivers, textconv, prefixes and abbreviations; submodules are not
// entered (git would run in them with their own configuration).
const std::vector<std::string> kDiffOptions{
    "--no-color",      "--no-ext-diff",   "--no-textconv",          "--full-index",
    "--src-prefix=a/", "--dst-prefix=b/", "--ignore-submodules=all"};

// Bytes git looks at to call a file binary (a NUL among them), as xdiff's buffer_is_binary.
constexpr std::size_t kBinaryProbeBytes = 8000;

// Untracked, not ignored files, as git lists them (NUL-separated).
Result<std::vector<std::string>> ListUntracked(const Git& git, const GitPlace& place) {
  AS_ASSIGN_OR_RETURN(GitOutput out,
                      git.Run(place, {"ls-files", "--others", "--exclude-standard", "-z"}));
  if (out.exit_code != 0)
    return Error(ErrorCode::kInvalidArgument, "git ls-files failed: " + GitMessage(out));
  std::vector<std::string> files;
  for (std::string& name : SplitNul(out.out)) {
    // A directory (a nested repository) is not a file to show.
    if (name.back() != '/') files.push_back(std::move(name));
  }
  return files;
}

// An open file descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// One untracked path as read: its mode for git ("100644", "100755", "120000") and content, or
// the reason it is skipped.
struct UntrackedFile {
  std::string mode;
  std::string content;
  std::string skipped;
};

// Reads `relative` under `root` without following any symbolic link on the way: each directory
// is opened with O_NOFOLLOW from the one before, and the last component is looked at, not
// through. A link's content is its target text.
UntrackedFile ReadBeneath(const std::string& root, const std::string& relative,
                          std::size_t max_bytes) {
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::size_t start = 0;
  for (std::size_t slash = relative.find('/'); dir.get() >= 0 && slash != std::string::npos;
       slash = relative.find('/', start)) {
    const std::string part = relative.substr(start, slash - start);
    dir = Fd(::openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    start = slash + 1;
  }
  const std::string name = relative.substr(start);
  struct stat st {};
  if (dir.get() < 0 || ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return {"", "", "unreadable"};
  if (S_ISLNK(st.st_mode)) {
    std::string target(4096, '\0');
    const ssize_t n = ::readlinkat(dir.get(), name.c_str(), target.data(), target.size());
    if (n < 0) return {"", "", "unreadable"};
    target.resize(static_cast<std::size_t>(n));
    return {"120000", std::move(target), ""};
  }
  if (S_ISFIFO(st.st_mode)) return {"", "", "fifo"};
  if (S_ISSOCK(st.st_mode)) return {"", "", "socket"};
  if (!S_ISREG(st.st_mode)) return {"", "", "device"};
  if (static_cast<std::size_t>(st.st_size) > max_bytes) return {"", "", "too large"};
  Fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat opened {};
  if (file.get() < 0 || ::fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode))
    return {"", "", "unreadable"};
  UntrackedFile read{(opened.st_mode & S_IXUSR) != 0 ? "100755" : "100644", "", ""};
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t n = ::read(file.get(), buffer.data(), buffer.size());
    if (n < 0) return {"", "", "unreadable"};
    if (n == 0) break;
    if (read.content.size() + static_cast<std::size_t>(n) > max_bytes) return {"", "", "too large"};
    read.content.append(buffer.data(), static_cast<std::size_t>(n));
  }
  return read;
}

// Git's object id of a blob holding `content`, in the repository's hash (SHA-1 for 40-digit
// ids, SHA-256 for 64), as hex.
std::string BlobId(std::string_view content, std::size_t id_digits) {
  const std::string header = "blob " + std::to_string(content.size()) + '\0';
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, id_digits == 64 ? EVP_sha256() : EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, header.data(), header.size());
  EVP_DigestUpdate(ctx, content.data(), content.size());
  EVP_DigestFinal_ex(ctx, digest.data(), &size);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

// The text `git diff --no-index --full-index /dev/null PATH` prints for the new file `path`.
std::string AddedFileDiff(const std::string& path, const UntrackedFile& file,
                          std::size_t id_digits) {
  const std::string b = QuoteGitPath("b/", path);
  std::string text = "diff --git " + QuoteGitPath("a/", path) + " " + b + "\n";
  text += "new file mode " + file.mode + "\n";
  text += "index " + std::string(id_digits, '0') + ".." + BlobId(file.content, id_digits) + "\n";
  const std::string_view content = file.content;
  if (content.empty()) return text;
  if (content.substr(0, kBinaryProbeBytes).find('\0') != std::string_view::npos)
    return text + "Binary files /dev/null and " + b + " differ\n";
  const std::size_t lines = static_cast<std::size_t>(
      std::count(content.begin(), content.end(), '\n') + (content.back() == '\n' ? 0 : 1));
  text += "--- /dev/null\n+++ " + b + (b.find(' ') != std::string::npos ? "\t\n" : "\n");
  text += lines == 1 ? "@@ -0,0 +1 @@\n" : "@@ -0,0 +1," + std::to_string(lines) + " @@\n";
  for (std::size_t start = 0; start < content.size();) {
    std::size_t end = content.find('\n', start);
    const bool last_without_newline = end == std::string_view::npos;
    if (last_without_newline) end = content.size();
    text += '+';
    text += content.substr(start, end - start);
    text += last_without_newline ? "\n\\ No newline at end of file\n" : "\n";
    start = end + 1;
  }
  return text;
}

// Appends the whole lines of `piece` that fit in `max_bytes`; false when some did not.
bool AppendBounded(std::string& text, std::string_view piece, std::size_t max_bytes) {
  if (text.size() + piece.size() <= max_bytes) {
    text += piece;
    return true;
  }
  const std::size_t room = max_bytes - std::min(max_bytes, text.size());
  const std::size_t cut = piece.substr(0, room).rfind('\n');
  if (cut != std::string_view::npos) text += piece.substr(0, cut + 1);
  return false;
}

// Why git cannot diff the tracked path `path`: it is now a FIFO, socket or device.
std::string SpecialKind(const std::string& root, const std::string& path) {
  struct stat st {};
  if (::lstat((root + "/" + path).c_str(), &st) != 0) return "unreadable";
  if (S_ISFIFO(st.st_mode)) return "fifo";
  if (S_ISSOCK(st.st_mode)) return "socket";
  return "device";
}

// `git diff COMMIT` of the tracked files. A tracked file replaced by a FIFO, socket or device
// makes git fail ("error: PATH: unsupported file type"): such a path is excluded, listed in
// `diff.skipped`, and the diff run again, at most kMaxSpecialFiles times.
Result<GitOutput> TrackedDiff(const Git& git, const GitPlace& place, WorktreeDiff& diff,
                              std::size_t max_bytes) {
  constexpr std::size_t kMaxSpecialFiles = 16;
  constexpr std::string_view kUnsupported = ": unsupported file type";
  std::vector<std::string> args{"diff"};
  args.insert(args.end(), kDiffOptions.begin(), kDiffOptions.end());
  args.insert(args.end(), {diff.against_commit, "--"});
  while (true) {
    AS_ASSIGN_OR_RETURN(GitOutput tracked, git.Run(place, args, max_bytes));
    if (tracked.exit_code == 0) return tracked;
    const std::string line = tracked.err.substr(0, tracked.err.find('\n'));
    const std::size_t end = line.rfind(kUnsupported);
    if (line.rfind("error: ", 0) != 0 || end == std::string::npos ||
        end + kUnsupported.size() != line.size() || diff.skipped.size() == kMaxSpecialFiles)
      return Error(ErrorCode::kInvalidArgument, "git diff failed: " + GitMessage(tracked));
    const std::string path = line.substr(7, end - 7);
    diff.skipped.push_back({path, SpecialKind(place.work_tree, path)});
    args.push_back(":(exclude,literal,top)" + path);
  }
}

}  // namespace

Result<WorktreeDiff> DiffWorktree(const Worktrees& worktrees, const Workspace& workspace,
                                  const std::optional<std::string>& against,
                                  const DiffLimits& limits) {
  if (worktrees.StateOf(workspace) == WorktreeState::kMissing)
    return Error(ErrorCode::kNotFound, "the worktree " + workspace.path + " is missing");
  const Git& git = worktrees.git();
  AS_ASSIGN_OR_RETURN(GitPlace place, worktrees.PlaceOf(workspace));
  WorktreeDiff diff;
  diff.against = against.value_or(workspace.base);
  if (against) {
    AS_ASSIGN_OR_RETURN(diff.against_commit, ResolveCommit(git, place, "against", *against));
  } else {
    diff.against_commit = workspace.base_commit;
  }
  AS_ASSIGN_OR_RETURN(GitOutput tracked, TrackedDiff(git, place, diff, limits.max_bytes));
  diff.text = std::move(tracked.out);
  diff.truncated = tracked.truncated;
  if (diff.truncated) return diff;
  AS_ASSIGN_OR_RETURN(std::vector<std::string> untracked, ListUntracked(git, place));
  std::size_t shown = 0;
  for (const std::string& path : untracked) {
    if (shown == limits.max_untracked_files || diff.text.size() >= limits.max_bytes) {
      diff.truncated = true;
      break;
    }
    const UntrackedFile file = ReadBeneath(workspace.path, path, limits.max_untracked_file_bytes);
    if (!file.skipped.empty()) {
      diff.skipped.push_back({path, file.skipped});
      continue;
    }
    ++shown;
    if (!AppendBounded(diff.text, AddedFileDiff(path, file, diff.against_commit.size()),
                       limits.max_bytes)) {
      diff.truncated = true;
      break;
    }
  }
  return diff;
}

}  // namespace agentstream::workspace
