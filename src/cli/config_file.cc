#include "cli/config_file.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "core/utf8.h"
#include "system/bounded_file.h"

namespace agentstream::cli {
namespace {

std::string TooLarge() {
  return "larger than 1 MiB (" + std::to_string(kMaxConfigBytes) + " bytes)";
}

// The 1-based line holding the first byte of `text` that is not part of well-formed UTF-8; 0 when
// there is none. Line by line: a line end is never inside a multi-byte sequence.
int FirstLineNotUtf8(std::string_view text) {
  int line = 1;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (!IsValidUtf8(text.substr(0, end))) return line;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
    ++line;
  }
  return 0;
}

using Kind = ConfigEntry::Kind;

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte order mark
  }

  Result<ConfigFile> Parse() {
    ConfigFile file;
    std::string table;
    std::set<std::string> tables, keys;
    for (SkipSpace(); pos_ < text_.size(); SkipSpace()) {
      if (Peek() == '[') {
        ++pos_;
        if (Peek() == '[') return Fail("arrays of tables ([[...]]) are not supported");
        SkipBlanks();
        AS_ASSIGN_OR_RETURN(table, Key());
        SkipBlanks();
        if (Peek() != ']') return Fail("expected ] after the table name");
        ++pos_;
        if (!tables.insert(table).second) return Fail("table [" + table + "] given twice");
        file.tables.emplace_back(table, line_);
        AS_RETURN_IF_ERROR(EndOfLine());
        continue;
      }
      ConfigEntry entry;
      entry.table = table;
      entry.line = line_;
      AS_ASSIGN_OR_RETURN(entry.key, Key());
      SkipBlanks();
      if (Peek() == '.') return Fail("dotted keys are not supported: put the key in a [table]");
      if (Peek() != '=') return Fail("expected = after the key " + entry.key);
      const std::string full = table.empty() ? entry.key : table + "." + entry.key;
      if (!keys.insert(full).second) return Fail("key " + full + " given twice");
      ++pos_;
      SkipBlanks();
      AS_RETURN_IF_ERROR(Value(&entry));
      AS_RETURN_IF_ERROR(EndOfLine());
      file.entries.push_back(std::move(entry));
    }
    return file;
  }

 private:
  char Peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  Status Fail(const std::string& message) const {
    return Error(ErrorCode::kInvalidArgument, "line " + std::to_string(line_) + ": " + message);
  }
  // Spaces and tabs.
  void SkipBlanks() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }
  void SkipComment() {
    if (Peek() != '#') return;
    while (pos_ < text_.size() && Peek() != '\n') ++pos_;
  }
  // Blanks, comments and line ends (between lines, and inside an array).
  void SkipSpace() {
    for (;;) {
      SkipBlanks();
      SkipComment();
      if (Peek() == '\r' && Peek(1) == '\n') ++pos_;
      if (Peek() != '\n') return;
      ++pos_;
      ++line_;
    }
  }
  // Only blanks and a comment may follow a value or a table header on its line.
  Status EndOfLine() {
    SkipBlanks();
    SkipComment();
    if (Peek() == '\r' && Peek(1) == '\n') ++pos_;
    if (pos_ < text_.size() && Peek() != '\n')
      return Fail(std::string("unexpected '") + Peek() + "' after the value");
    return Status::Ok();
  }

  Result<std::string> Key() {
    const std::size_t start = pos_;
    while (IsKeyChar(Peek())) ++pos_;
    if (pos_ == start) {
      return Fail("expected a key (letters, digits, - and _), got '" + std::string(1, Peek()) +
                  "'");
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  Status Value(ConfigEntry* entry) {
    if (Peek() != '[') {
      AS_ASSIGN_OR_RETURN(auto scalar, Scalar());
      entry->kind = scalar.first;
      entry->values.push_back(std::move(scalar.second));
      return Status::Ok();
    }
    ++pos_;
    entry->array = true;
    for (SkipSpace(); Peek() != ']'; SkipSpace()) {
      AS_ASSIGN_OR_RETURN(auto scalar, Scalar());
      if (!entry->values.empty() && scalar.first != entry->kind)
        return Fail("an array's elements must be of one kind");
      entry->kind = scalar.first;
      entry->values.push_back(std::move(scalar.second));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ']') {
        return Fail("expected , or ] in the array");
      }
    }
    ++pos_;
    return Status::Ok();
  }

  Result<std::pair<Kind, std::string>> Scalar() {
    const char quote = Peek();
    if (quote == '"' || quote == '\'') return String(quote);
    if (quote == '{') return Fail("inline tables are not supported");
    if (quote == '[') return Fail("nested arrays are not supported");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::string_view(" \t,]#\r\n").find(Peek()) == kNpos) ++pos_;
    const std::string word(text_.substr(start, pos_ - start));
    if (word == "true" || word == "false") return std::pair{Kind::kBoolean, word};
    if (std::string digits; Integer(word, &digits)) return std::pair{Kind::kInteger, digits};
    return Fail("expected a value (a \"string\", an integer, true, false or an [array]), got " +
                (word.empty() ? std::string("nothing") : word));
  }

  // A basic ("...") or literal ('...') string, on one line.
  Result<std::pair<Kind, std::string>> String(char quote) {
    if (Peek(1) == quote && Peek(2) == quote) return Fail("multi-line strings are not supported");
    ++pos_;
    std::string out;
    for (char c = Peek(); c != quote; c = Peek()) {
      if (pos_ >= text_.size() || c == '\n') return Fail("unterminated string");
      ++pos_;
      if (quote == '"' && c == '\\') {
        if (pos_ >= text_.size()) return Fail("unterminated string");
        const char escape = text_[pos_++];
        static constexpr std::string_view kFrom = "\"\\ntr", kTo = "\"\\\n\t\r";
        const std::size_t at = kFrom.find(escape);
        if (at == kNpos)
          return Fail(std::string("unsupported escape \\") + escape + " in a string");
        c = kTo[at];
      }
      out.push_back(c);
    }
    ++pos_;
    return std::pair{Kind::kString, std::move(out)};
  }

  // [+-]digits, with single underscores between digits (1_000); `digits` without them.
  static bool Integer(const std::string& word, std::string* digits) {
    std::size_t i = word.size() > 1 && (word[0] == '+' || word[0] == '-') ? 1 : 0;
    if (i == 1 && word[0] == '-') digits->push_back('-');
    for (; i < word.size(); ++i) {
      const bool between = word[i] == '_' && i > 0 && IsDigit(word[i - 1]) && i + 1 < word.size() &&
                           IsDigit(word[i + 1]);
      if (!between && !IsDigit(word[i])) return false;
      if (!between) digits->push_back(word[i]);
    }
    return !word.empty() && IsDigit(word.back());
  }

  static constexpr std::size_t kNpos = std::string_view::npos;
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

Result<std::string> ReadConfigFile(const std::string& path) {
  Result<std::string> text = system::ReadBoundedFile(path, kMaxConfigBytes);
  if (!text.ok() && text.status().code() == ErrorCode::kTooLarge)
    return Error(ErrorCode::kTooLarge, TooLarge());
  return text;
}

Result<ConfigFile> ParseConfig(std::string_view text) {
  if (text.size() > kMaxConfigBytes) return Error(ErrorCode::kTooLarge, TooLarge());
  if (const int line = FirstLineNotUtf8(text); line > 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "line " + std::to_string(line) + ": not UTF-8 text (the file must be UTF-8)");
  }
  return Parser(text).Parse();
}

std::string DefaultConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return std::string(xdg) + "/agentstream/config.toml";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/agentstream/config.toml";
}

}  // namespace agentstream::cli
