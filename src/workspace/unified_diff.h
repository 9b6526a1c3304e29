// The unified diff git prints (`git diff`, `git diff --no-index`) split into files and hunks, for
// the JSON form of GET /v1/agents/{id}/diff (docs/workspaces.md). Pure: text in, values out; no
// I/O. Never fails: lines it does not recognise are skipped, and a diff cut short (the output
// bound) yields the files and hunks seen so far.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agentstream::workspace {

struct DiffHunk {
  std::string header;  // "@@ -1,3 +1,4 @@ context"
  int old_start = 0, old_lines = 0, new_start = 0, new_lines = 0;
  // The hunk's lines as git printed them, each starting with ' ', '+', '-' or '\'.
  std::vector<std::string> lines;
};

struct FileDiff {
  std::string path;      // the path after the change (before it, for a deletion)
  std::string old_path;  // the path before the change; differs from `path` for a rename or copy
  std::string status = "modified";  // added, deleted, modified, renamed, copied
  bool binary = false;              // git printed "Binary files ... differ"
  std::string old_mode, new_mode;   // when git printed them ("100644", "100755", ...)
  int additions = 0, deletions = 0;
  std::vector<DiffHunk> hunks;
};

// git's quoting of a path in a diff (core.quotePath=true): the path as it is when it has no
// byte below 0x20, no 0x7f or above, no '"' and no '\\'; else C-style in double quotes, with
// \a \b \t \n \v \f \r \" \\ and octal escapes ("caf\303\251"). `prefix` ("a/", "b/") goes
// inside the quotes, as git puts it.
std::string QuoteGitPath(std::string_view prefix, std::string_view path);

// Parses git's unified diff output. Paths are unquoted (git's C-style quoting of unusual names)
// and taken without their "a/" and "b/" prefixes.
std::vector<FileDiff> ParseUnifiedDiff(std::string_view text);

}  // namespace agentstream::workspace
