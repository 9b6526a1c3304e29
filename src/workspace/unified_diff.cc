#include "workspace/unified_diff.h"

#include <charconv>
#include <optional>

namespace agentstream::workspace {

namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// git's quoting of a path with unusual bytes: "a/caf\303\251" -> a/café.
std::string Unquote(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::string(text);
  std::string out;
  for (std::size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\' || i + 2 >= text.size()) {
      out += c;
      continue;
    }
    const char e = text[++i];
    if (e >= '0' && e <= '7') {
      int value = 0;
      std::size_t digits = 0;
      while (digits < 3 && i + 1 < text.size() && text[i] >= '0' && text[i] <= '7') {
        value = value * 8 + (text[i] - '0');
        ++i, ++digits;
      }
      --i;
      out += static_cast<char>(value);
      continue;
    }
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'r':
        out += '\r';
        break;
      case 'v':
        out += '\v';
        break;
      default:
        out += e;
        break;
    }
  }
  return out;
}

bool NeedsQuoting(std::string_view path) {
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') return true;
  }
  return false;
}

}  // namespace

std::string QuoteGitPath(std::string_view prefix, std::string_view path) {
  if (!NeedsQuoting(prefix) && !NeedsQuoting(path)) return std::string(prefix) + std::string(path);
  std::string out = "\"";
  for (const std::string_view part : {prefix, path}) {
    for (const char c : part) {
      const auto byte = static_cast<unsigned char>(c);
      constexpr std::string_view kNamed = "\a\b\t\n\v\f\r";
      constexpr std::string_view kLetters = "abtnvfr";
      if (const std::size_t named = kNamed.find(c); named != std::string_view::npos && c != 0) {
        out += '\\';
        out += kLetters[named];
      } else if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (byte < 0x20 || byte >= 0x7f) {
        out += '\\';
        out += static_cast<char>('0' + (byte >> 6));
        out += static_cast<char>('0' + ((byte >> 3) & 7));
        out += static_cast<char>('0' + (byte & 7));
      } else {
        out += c;
      }
    }
  }
  return out + '"';
}

namespace {

// A path of a ---/+++ line or a header: unquoted, its "a/" or "b/" prefix removed (and the tab
// git ends a ---/+++ path containing a space with).
std::string PathOf(std::string_view text) {
  if (!text.empty() && text.back() == '\t') text.remove_suffix(1);
  std::string path = Unquote(text);
  if (StartsWith(path, "a/") || StartsWith(path, "b/")) path.erase(0, 2);
  return path;
}

// "diff --git a/P b/P" for a change that prints no ---/+++ lines (a mode change, a binary file):
// the two halves are the same path, so the line splits in the middle.
std::string PathOfHeader(std::string_view rest) {
  if (!rest.empty() && rest.front() == '"') {
    const std::size_t end = rest.find("\" ");
    if (end != std::string_view::npos) return PathOf(rest.substr(0, end + 1));
  }
  if (rest.size() % 2 == 1) return PathOf(rest.substr(0, rest.size() / 2));
  return PathOf(rest.substr(0, rest.find(' ')));
}

int Number(std::string_view text, std::size_t* pos, int otherwise) {
  int value = 0;
  const char* begin = text.data() + *pos;
  auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc()) return otherwise;
  *pos += static_cast<std::size_t>(ptr - begin);
  return value;
}

// "@@ -A,B +C,D @@": B and D default to 1 when absent.
DiffHunk ParseHunkHeader(std::string_view line) {
  DiffHunk hunk;
  hunk.header = std::string(line);
  std::size_t pos = line.find('-');
  if (pos == std::string_view::npos) return hunk;
  ++pos;
  hunk.old_start = Number(line, &pos, 0);
  hunk.old_lines = 1;
  if (pos < line.size() && line[pos] == ',') ++pos, hunk.old_lines = Number(line, &pos, 0);
  pos = line.find('+', pos);
  if (pos == std::string_view::npos) return hunk;
  ++pos;
  hunk.new_start = Number(line, &pos, 0);
  hunk.new_lines = 1;
  if (pos < line.size() && line[pos] == ',') ++pos, hunk.new_lines = Number(line, &pos, 0);
  return hunk;
}

class Parser {
 public:
  void Line(std::string_view line) {
    if (StartsWith(line, "diff --git ")) {
      files_.emplace_back();
      file().path = file().old_path = PathOfHeader(line.substr(11));
      remaining_old_ = remaining_new_ = 0;
      return;
    }
    if (files_.empty()) return;
    if (remaining_old_ > 0 || remaining_new_ > 0) return HunkLine(line);
    if (StartsWith(line, "@@ ")) {
      file().hunks.push_back(ParseHunkHeader(line));
      remaining_old_ = file().hunks.back().old_lines;
      remaining_new_ = file().hunks.back().new_lines;
      return;
    }
    if (!file().hunks.empty() && StartsWith(line, "\\")) {
      file().hunks.back().lines.emplace_back(line);
      return;
    }
    Header(line);
  }

  std::vector<FileDiff> Take() { return std::move(files_); }

 private:
  FileDiff& file() { return files_.back(); }

  void HunkLine(std::string_view line) {
    DiffHunk& hunk = file().hunks.back();
    hunk.lines.emplace_back(line);
    const char c = line.empty() ? ' ' : line.front();
    if (c == '+') {
      ++file().additions, --remaining_new_;
    } else if (c == '-') {
      ++file().deletions, --remaining_old_;
    } else if (c != '\\') {
      --remaining_old_, --remaining_new_;
    }
  }

  void Header(std::string_view line) {
    FileDiff& f = file();
    if (StartsWith(line, "new file mode ")) {
      f.status = "added", f.new_mode = line.substr(14);
    } else if (StartsWith(line, "deleted file mode ")) {
      f.status = "deleted", f.old_mode = line.substr(18);
    } else if (StartsWith(line, "old mode ")) {
      f.old_mode = line.substr(9);
    } else if (StartsWith(line, "new mode ")) {
      f.new_mode = line.substr(9);
    } else if (StartsWith(line, "rename from ")) {
      f.status = "renamed", f.old_path = Unquote(line.substr(12));
    } else if (StartsWith(line, "rename to ")) {
      f.path = Unquote(line.substr(10));
    } else if (StartsWith(line, "copy from ")) {
      f.status = "copied", f.old_path = Unquote(line.substr(10));
    } else if (StartsWith(line, "copy to ")) {
      f.path = Unquote(line.substr(8));
    } else if (StartsWith(line, "--- ")) {
      if (line.substr(4) != "/dev/null") f.old_path = PathOf(line.substr(4));
    } else if (StartsWith(line, "+++ ")) {
      if (line.substr(4) != "/dev/null") f.path = PathOf(line.substr(4));
      if (f.status == "deleted") f.path = f.old_path;
    } else if (StartsWith(line, "Binary files ")) {
      f.binary = true;
    }
  }

  std::vector<FileDiff> files_;
  int remaining_old_ = 0, remaining_new_ = 0;  // lines of the current hunk still to come
};

}  // namespace

std::vector<FileDiff> ParseUnifiedDiff(std::string_view text) {
  Parser parser;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    parser.Line(text.substr(start, end - start));
    start = end + 1;
  }
  return parser.Take();
}

}  // namespace agentstream::workspace
