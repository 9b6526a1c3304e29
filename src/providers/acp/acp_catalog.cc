#include "providers/acp/acp_catalog.h"

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <utility>

#include "core/ascii.h"
#include "core/utf8.h"
#include "providers/acp/acp_catalog_data.h"
#include "providers/acp/acp_protocol.h"
#include "providers/wire_fields.h"

namespace agentstream::providers::acp {

namespace json = boost::json;

namespace {

using wire::Obj;
using wire::Str;

constexpr std::size_t kMaxIdBytes = 64;
constexpr std::size_t kMaxTextBytes = 512;  // a name, description, version or license

// The registry's platform name of this build's host.
constexpr std::string_view kPlatform =
#if defined(__x86_64__)
    "linux-x86_64";
#elif defined(__aarch64__)
    "linux-aarch64";
#else
    "";
#endif

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes || id[0] < 'a' || id[0] > 'z') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// A name, description, version or license, cut on a character boundary.
std::string Cut(std::string_view text) { return BoundUtf8(text, kMaxTextBytes).text; }

// The registry's reserved environment names (its builder drops them from entries): what would
// change how any program, not only the agent, runs or where its secrets come from.
bool ReservedEnvName(std::string_view raw) {
  const std::string name = AsciiUppered(raw);
  static constexpr std::array<std::string_view, 12> kNames = {"PATH",
                                                              "HOME",
                                                              "TMPDIR",
                                                              "TMP",
                                                              "TEMP",
                                                              "SHELL",
                                                              "NODE_OPTIONS",
                                                              "GITHUB_TOKEN",
                                                              "NPM_TOKEN",
                                                              "USER",
                                                              "AGENTSTREAM_AGENT_ID",
                                                              "IFS"};
  static constexpr std::array<std::string_view, 16> kPrefixes = {
      "ACTIONS_", "AWS_", "AZURE_", "DYLD_",   "GCLOUD_", "GITHUB_", "GOOGLE_", "LD_",
      "NODE_",    "NPM_", "PIP_",   "PYTHON_", "RUNNER_", "SSH_",    "UV_",     "XDG_"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view prefix) { return name.starts_with(prefix); });
}

bool ValidEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A string free of NUL bytes, which no argv or environment entry can hold.
bool Plain(std::string_view text) { return text.find('\0') == std::string_view::npos; }

// The strings of `o[key]` when it is an array of NUL-free strings; false otherwise.
bool Strings(const json::object& o, std::string_view key, std::vector<std::string>* out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return true;
  if (!v->is_array()) return false;
  for (const json::value& item : v->as_array()) {
    if (!item.is_string() || !Plain(item.as_string())) return false;
    out->emplace_back(item.as_string());
  }
  return true;
}

std::vector<std::string> EnvOf(const json::object& o) {
  std::vector<std::string> env;
  const json::object* entries = Obj(o, "env");
  if (entries == nullptr) return env;
  for (const auto& [name, value] : *entries) {
    if (!value.is_string() || !ValidEnvName(name) || ReservedEnvName(name) ||
        !Plain(value.as_string()))
      continue;
    env.push_back(std::string(name) + "=" + std::string(value.as_string()));
  }
  return env;
}

// The program a package installs, by the registry's convention when the entry names no `cmd`:
// "@scope/name@1.2.3" -> "name", "name==1.2.3" -> "name".
std::string PackageProgram(std::string_view package) {
  if (package.starts_with('@')) {
    const std::size_t slash = package.find('/');
    package.remove_prefix(slash == std::string_view::npos ? package.size() : slash + 1);
  }
  return std::string(package.substr(0, package.find_first_of("@=<>~![ ;")));
}

// The last path component of an archive's `cmd` ("./dist/goose" -> "goose").
std::string BaseName(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path);
}

// How `distribution` starts on this host: the npx, then uvx, then binary form (an installed
// package's program is found on PATH; an archive must be put there by hand). False when none
// applies (a binary for other platforms only) or its fields are bad.
bool ReadDistribution(const json::object& distribution, CatalogEntry* entry) {
  const json::object* target = nullptr;
  std::string program;
  for (const char* kind : {"npx", "uvx"}) {
    const json::object* package = Obj(distribution, kind);
    if (package == nullptr) continue;
    entry->distribution = kind;
    entry->package = Str(*package, "package");
    program = Str(*package, "cmd");
    if (program.empty()) program = PackageProgram(entry->package);
    target = package;
    break;
  }
  if (target == nullptr) {
    const json::object* binaries = Obj(distribution, "binary");
    target = binaries != nullptr ? Obj(*binaries, kPlatform) : nullptr;
    if (target == nullptr) return false;
    entry->distribution = "binary";
    entry->package = Str(*target, "archive");
    program = BaseName(Str(*target, "cmd"));
  }
  if (entry->package.empty() || !Plain(entry->package) || !Plain(program) || program.empty() ||
      program == "." || program == "..")
    return false;
  entry->command = {program};
  if (!Strings(*target, "args", &entry->command)) return false;
  entry->env = EnvOf(*target);
  return true;
}

Status Invalid(const std::string& source, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "ACP catalog " + source + ": " + why);
}

}  // namespace

std::string InstallHint(const CatalogEntry& entry) {
  if (entry.distribution == "npx") return "npm install -g " + entry.package;
  if (entry.distribution == "uvx") return "uv tool install " + entry.package;
  return "download " + entry.package + " and put its " + entry.command.front() + " on PATH";
}

std::string PresetOfRegistryId(std::string_view id) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kPresets = {{
      {"claude-acp", "claude-agent"},
      {"claude-code-acp", "claude"},
      {"codex-acp", "codex"},
      {"gemini", "gemini"},
      {"opencode", "opencode"},
      {"qwen-code", "qwen"},
  }};
  for (const auto& [registry_id, preset] : kPresets)
    if (registry_id == id) return std::string(preset);
  return {};
}

Catalog Catalog::BuiltIn() {
  Catalog catalog;
  const Status merged = catalog.Merge(kBuiltInCatalogJson, "built-in");
  (void)merged;  // the built-in file is checked by a test (acp_catalog_test.cc)
  return catalog;
}

Status Catalog::Merge(std::string_view text, const std::string& source) {
  if (text.size() > kMaxCatalogBytes)
    return Invalid(source, "over " + std::to_string(kMaxCatalogBytes) + " bytes");
  boost::system::error_code ec;
  const json::value root = json::parse(text, ec);
  if (ec) return Invalid(source, "not JSON: " + ec.message());
  const json::value* agents = root.is_object() ? root.as_object().if_contains("agents") : nullptr;
  if (agents == nullptr || !agents->is_array())
    return Invalid(source, "no \"agents\" list (the ACP registry's format)");
  if (agents->as_array().size() > kMaxCatalogAgents)
    return Invalid(source, "more than " + std::to_string(kMaxCatalogAgents) + " agents");
  std::vector<CatalogEntry> read;
  for (const json::value& item : agents->as_array()) {
    if (!item.is_object()) return Invalid(source, "an agent that is not an object");
    const json::object& o = item.as_object();
    CatalogEntry entry;
    entry.id = Str(o, "id");
    if (!ValidId(entry.id))
      return Invalid(source, "agent id \"" + Cut(entry.id) + "\" is not [a-z][a-z0-9-]*");
    entry.name = Cut(Str(o, "name"));
    if (entry.name.empty()) return Invalid(source, "agent " + entry.id + " has no name");
    entry.version = Cut(Str(o, "version"));
    entry.description = Cut(Str(o, "description"));
    entry.repository = Cut(Str(o, "repository"));
    entry.license = Cut(Str(o, "license"));
    entry.source = source;
    const json::object* distribution = Obj(o, "distribution");
    if (distribution == nullptr)
      return Invalid(source, "agent " + entry.id + " has no distribution");
    if (!ReadDistribution(*distribution, &entry)) continue;  // not startable on this host
    entry.preset = PresetOfRegistryId(entry.id);
    if (!entry.preset.empty()) {
      Result<AgentCommand> preset = Preset(entry.preset, std::nullopt);
      if (preset.ok()) entry.command = preset->argv;
    }
    read.push_back(std::move(entry));
  }
  for (CatalogEntry& entry : read) {
    auto same = std::find_if(entries_.begin(), entries_.end(),
                             [&](const CatalogEntry& e) { return e.id == entry.id; });
    if (same != entries_.end()) {
      *same = std::move(entry);
    } else {
      entries_.push_back(std::move(entry));
    }
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const CatalogEntry& a, const CatalogEntry& b) { return a.id < b.id; });
  return Status::Ok();
}

const CatalogEntry* Catalog::Find(std::string_view id) const {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const CatalogEntry& e) { return e.id == id; });
  return it == entries_.end() ? nullptr : &*it;
}

}  // namespace agentstream::providers::acp
