// The configuration file's reader (docs/cli.md, "The configuration file"): the TOML subset it
// may use, parsed into typed entries. Pure: no CLI11; config_cli.h applies the entries to the
// command line's options.
#pragma once

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

// Parses the subset of TOML a configuration file may use: comments (#), `[table]` headers and
// `key = value` lines, where a key is bare (letters, digits, `-`, `_`) and a value is a basic
// string ("...", escapes \" \\ \n \t \r), a literal string ('...'), a decimal integer, true or
// false, or an array of one kind of those (it may span lines; a trailing comma is fine). A key or
// table given twice is an error. Errors are kInvalidArgument "line N: ...".
Result<ConfigFile> ParseConfig(std::string_view text);

// $XDG_CONFIG_HOME/agentstream/config.toml, else ~/.config/agentstream/config.toml.
std::string DefaultConfigPath();

}  // namespace agentstream::cli
