// libFuzzer target: the configuration file's reader (cli/config_file.h: ReadConfigFile and
// ParseConfig; docs/cli.md, "The configuration file"). The input is the file's bytes, written to
// a file of this process's own and read back.
//
// Checked (std::abort on a violation):
// - ReadConfigFile gives back exactly the bytes written, or kTooLarge past kMaxConfigBytes;
// - ParseConfig accepts the text or answers kInvalidArgument "line N: ..." with N a line of the
//   text; text that is not UTF-8 is never accepted;
// - what it accepts is well-formed: keys and table names are non-empty runs of letters, digits,
//   `-` and `_`; no key is given twice; lines ascend within the text; every value is valid
//   UTF-8 (config show --json prints it as it is), a boolean is true or false, an integer is
//   decimal digits with an optional '-', and an array's values are of one kind;
// - the entries written back as TOML (every string a basic string with its escapes) parse to the
//   same entries.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "cli/config_file.h"
#include "core/utf8.h"
#include "fuzz_check.h"

namespace agentstream::cli {
namespace {

using fuzzing::Check;
using Kind = ConfigEntry::Kind;

// A file of this process's own, removed at exit.
struct File {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("agentstream-fuzz-config-" + std::to_string(::getpid()) + ".toml"))
                         .string();
  ~File() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

bool IsName(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool IsInteger(std::string_view value) {
  if (!value.empty() && value.front() == '-') value.remove_prefix(1);
  if (value.empty()) return false;
  for (const char c : value)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string Quoted(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
  return out + "\"";
}

// The entries as a file ParseConfig reads back (every table header, in order, before its keys).
std::string Write(const ConfigFile& file) {
  std::string out;
  std::string table;
  std::set<std::string> written;
  const auto header = [&](const std::string& name) {
    if (!written.insert(name).second) return;
    out += "[" + name + "]\n";
  };
  for (const ConfigEntry& entry : file.entries) {
    if (entry.table != table) {
      table = entry.table;
      Check(!table.empty());  // top-level keys come before any table
      header(table);
    }
    out += entry.key + " = ";
    std::string values;
    for (const std::string& v : entry.values) {
      if (!values.empty()) values += ", ";
      values += entry.kind == Kind::kString ? Quoted(v) : v;
    }
    out += entry.array ? "[" + values + "]" : values;
    out += "\n";
  }
  for (const auto& [name, line] : file.tables) header(name);  // empty tables
  return out;
}

int Lines(std::string_view text) {
  int lines = 1;
  for (const char c : text) lines += c == '\n';
  return lines;
}

void CheckAccepted(const ConfigFile& file, std::string_view text) {
  Check(IsValidUtf8(text));
  std::set<std::string> keys;
  int last = 0;
  for (const auto& [name, line] : file.tables) Check(IsName(name) && line <= Lines(text));
  for (const ConfigEntry& entry : file.entries) {
    Check(IsName(entry.key) && (entry.table.empty() || IsName(entry.table)));
    Check(keys.insert(entry.table + "." + entry.key).second);
    Check(entry.line >= last && entry.line >= 1 && entry.line <= Lines(text));
    last = entry.line;
    Check(entry.array || entry.values.size() == 1);
    for (const std::string& v : entry.values) {
      Check(IsValidUtf8(v));
      if (entry.kind == Kind::kBoolean) Check(v == "true" || v == "false");
      if (entry.kind == Kind::kInteger) Check(IsInteger(v));
    }
  }
}

void CheckSame(const ConfigFile& a, const ConfigFile& b) {
  Check(a.entries.size() == b.entries.size());
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const ConfigEntry& x = a.entries[i];
    const ConfigEntry& y = b.entries[i];
    Check(x.table == y.table && x.key == y.key && x.array == y.array && x.values == y.values);
    Check(x.kind == y.kind || x.values.empty());
  }
  std::set<std::string> ta, tb;
  for (const auto& t : a.tables) ta.insert(t.first);
  for (const auto& t : b.tables) tb.insert(t.first);
  Check(ta == tb);
}

void RunOne(std::string_view text) {
  static File file;
  {
    std::ofstream out(file.path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  const Result<std::string> read = ReadConfigFile(file.path);
  if (text.size() > kMaxConfigBytes) {  // only without -max_len
    Check(read.status().code() == ErrorCode::kTooLarge);
    Check(ParseConfig(text).status().code() == ErrorCode::kTooLarge);
    return;
  }
  Check(read.ok() && *read == text);

  const Result<ConfigFile> parsed = ParseConfig(text);
  if (!parsed.ok()) {
    Check(parsed.status().code() == ErrorCode::kInvalidArgument);
    const std::string& message = parsed.status().message();
    Check(message.rfind("line ", 0) == 0);
    const int line = std::atoi(message.c_str() + 5);
    Check(line >= 1 && line <= Lines(text));
    return;
  }
  CheckAccepted(*parsed, text);
  const std::string written = Write(*parsed);
  const Result<ConfigFile> again = ParseConfig(written);
  Check(again.ok());
  CheckSame(*parsed, *again);
}

}  // namespace
}  // namespace agentstream::cli

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentstream::cli::RunOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
