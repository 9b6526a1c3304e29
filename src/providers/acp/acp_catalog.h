// The catalog of known ACP agents (docs/providers.md, "The catalog"): files in the format of the
// ACP registry (github.com/agentclientprotocol/registry, `{"version","agents":[...]}`), the
// built-in one (acp_catalog.json beside this header, compiled in) first, then those the
// configuration names, an entry of a later file replacing the one with its id. Each entry becomes
// the provider `acp:ID`; how it is started is derived here, whether it is installed is the
// provider factory's question (runtime/provider_factory.h). Plain values, no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::providers::acp {

// One agent of the catalog, as this host would start it.
struct CatalogEntry {
  std::string id;  // ^[a-z][a-z0-9-]*$, at most 64 bytes; the provider is "acp:" + id
  std::string name;
  std::string version;
  std::string description;
  std::string repository;  // "" when the entry names none
  std::string license;
  // How the registry distributes it: "npx" (an npm package), "uvx" (a PyPI package) or "binary"
  // (an archive for this host's platform); `package` is the package spec or the archive's URL.
  std::string distribution;
  std::string package;
  // The command once installed: the program (a PATH name) and its arguments. A known agent's is
  // its preset's (`preset`); otherwise the distribution's `cmd` (an archive's without its
  // directory), else the package's name without scope and version, then the entry's `args`.
  std::vector<std::string> command;
  std::vector<std::string> env;  // "KEY=value" from the entry, reserved names dropped
  std::string preset;            // the acp_protocol.h preset this id runs as; "" for none
  std::string source;            // "built-in", or the path of the file it came from
};

// The shell command that installs `entry` ("npm install -g PACKAGE", "uv tool install PACKAGE",
// or the archive's URL with the program to put on PATH).
std::string InstallHint(const CatalogEntry& entry);

// The preset a registry id runs as ("codex-acp" -> "codex"); "" for an id with no preset. The
// presets are the agents this project drives end to end in its tests.
std::string PresetOfRegistryId(std::string_view id);

// Bounds of a catalog file: its size, and its agents.
inline constexpr std::size_t kMaxCatalogBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxCatalogAgents = 1000;

class Catalog {
 public:
  // The built-in catalog alone.
  static Catalog BuiltIn();

  // Merges the registry-format JSON `text` read from `source` (a path, for messages and the
  // entries' `source`): each agent replaces the one with its id, or is added. kInvalidArgument,
  // naming `source`, for a file over kMaxCatalogBytes, text that is not JSON of that shape, more
  // than kMaxCatalogAgents agents, or an agent without a valid id, a name or a distribution this
  // host can start (npx, uvx, or a binary for this platform); nothing is merged then. Unknown
  // members are ignored, as newer registry files have more.
  Status Merge(std::string_view text, const std::string& source);

  // The entry of `id`; null when none.
  const CatalogEntry* Find(std::string_view id) const;
  // By id.
  const std::vector<CatalogEntry>& entries() const { return entries_; }

 private:
  std::vector<CatalogEntry> entries_;
};

}  // namespace agentstream::providers::acp
