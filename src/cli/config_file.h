// The configuration file's reader (docs/cli.md, "The configuration file"): the file read with a
// bound, and the TOML subset it may use parsed into typed entries. No CLI11; config_cli.h applies
// the entries to the command line's options. ParseConfig is pure; ReadConfigFile is the one read
// of the disk.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace agentstream::cli {

// One `key = value` of a configuration file.
struct ConfigEntry {
  enum class Kind { kString, kInteger, kBoolean };
  std::string table;  // "" at the top level, else the name of its [table]
  std::string key;
  int line = 0;                     // 1-based, of the key
  bool array = false;               // `key = [...]`
  Kind kind = Kind::kString;        // of the value, or of every element (an empty array: kString)
  std::vector<std::string> values;  // one, or the array's elements; strings unquoted, unescaped
};

// A parsed file: its entries in order, and every [table] header (an empty table has no entry).
struct ConfigFile {
  std::vector<std::pair<std::string, int>> tables;  // name, line
  std::vector<ConfigEntry> entries;
};

// The largest configuration file: a larger one (or an endless device such as /dev/zero) is
// refused, never read whole.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// The bytes of the file at `path`, reading at most kMaxConfigBytes + 1 of them. kTooLarge when it
// holds more than kMaxConfigBytes; kIoError with the system's reason when it cannot be opened or
// read.
Result<std::string> ReadConfigFile(const std::string& path);

// Parses the subset of TOML a configuration file may use: comments (#), `[table]` headers and
// `key = value` lines, where a key is bare (letters, digits, `-`, `_`) and a value is a basic
// string ("...", escapes \" \\ \n \t \r), a literal string ('...'), a decimal integer, true or
// false, or an array of one kind of those (it may span lines; a trailing comma is fine). A key or
// table given twice is an error. The text must be UTF-8 (a byte order mark is skipped) of at
// most kMaxConfigBytes. Errors are kInvalidArgument "line N: ..." (the first line holding a byte
// that is not part of well-formed UTF-8 for a text that is not UTF-8), or kTooLarge.
Result<ConfigFile> ParseConfig(std::string_view text);

// $XDG_CONFIG_HOME/agentstream/config.toml, else ~/.config/agentstream/config.toml.
std::string DefaultConfigPath();

}  // namespace agentstream::cli
