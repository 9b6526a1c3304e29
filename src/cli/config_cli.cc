#include "cli/config_cli.h"

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "cli/config_file.h"

namespace agentstream::cli {

// Named, not anonymous: ConfigLayer::State, which has external linkage, holds settings.
namespace config_cli_internal {

// An option and where its value came from: "flag", "env NAME", "config PATH" or "default".
struct Setting {
  std::string key;  // in the file: "data", "serve.listen"
  CLI::Option* option = nullptr;
  std::string source = "default";
};

}  // namespace config_cli_internal

namespace {

using Kind = ConfigEntry::Kind;
using config_cli_internal::Setting;

Kind KindOf(const CLI::Option& option) {
  if (option.get_expected_max() == 0) return Kind::kBoolean;  // a flag
  const std::string type = option.get_type_name();
  if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) return Kind::kInteger;
  return Kind::kString;
}

bool IsArray(const CLI::Option& option) { return option.get_expected_max() > 1; }

// Its value is never printed.
bool IsSecret(const Setting& setting) {
  const std::size_t dot = setting.key.rfind('.');
  return setting.key.substr(dot == std::string::npos ? 0 : dot + 1) == "token";
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kInteger:
      return "an integer";
    case Kind::kBoolean:
      return "true or false";
  }
  return "";
}

// Gives `option` `values` as the command line would; a value it refuses (a validator, a failed
// conversion) throws a ConfigError that starts with `where`.
void Apply(CLI::Option* option, const std::vector<std::string>& values, const std::string& where) {
  try {
    option->clear();
    option->add_result(values);
    option->run_callback();
  } catch (const CLI::Error& e) {
    std::string why = e.what();
    if (const std::string name = option->get_name() + ": "; why.rfind(name, 0) == 0)
      why.erase(0, name.size());
    throw CLI::ConfigError(where + ": " + why);
  }
}

// The options of `app` a file may set, keyed by `prefix` and their long name.
void Collect(CLI::App* app, const std::string& prefix, const CLI::Option* skip,
             std::vector<Setting>* out) {
  for (CLI::Option* option : app->get_options()) {
    if (option == skip || !option->get_configurable() || option->get_lnames().empty()) continue;
    out->push_back({prefix + option->get_lnames().front(), option});
  }
}

// Clears the environment variable names of some options for the life of this object, so that
// CLI11's parse sees the command line alone.
class HiddenEnvironment {
 public:
  explicit HiddenEnvironment(const std::vector<Setting*>& settings) {
    for (Setting* setting : settings) {
      if (setting->option->get_envname().empty()) continue;
      saved_.emplace_back(setting->option, setting->option->get_envname());
      setting->option->envname("");
    }
  }
  ~HiddenEnvironment() {
    for (auto& [option, name] : saved_) option->envname(name);
  }
  HiddenEnvironment(const HiddenEnvironment&) = delete;
  HiddenEnvironment& operator=(const HiddenEnvironment&) = delete;

 private:
  std::vector<std::pair<CLI::Option*, std::string>> saved_;
};

// What an option holds now, as text: its results, else its default.
std::vector<std::string> Values(const CLI::Option& option) {
  if (option.count() > 0) return option.results();
  if (!option.get_default_str().empty()) return {option.get_default_str()};
  if (KindOf(option) == Kind::kBoolean) return {"false"};
  return {};
}

boost::json::value JsonValue(Kind kind, const std::string& text) {
  if (kind == Kind::kBoolean) return text == "true" || text == "1";
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  if (kind == Kind::kInteger && std::from_chars(text.data(), end, number).ptr == end &&
      end != text.data())
    return number;
  return boost::json::string(text);
}

std::string TextValue(Kind kind, const std::string& text) {
  return kind == Kind::kString ? boost::json::serialize(boost::json::string(text)) : text;
}

}  // namespace

struct ConfigLayer::State {
  using Setting = config_cli_internal::Setting;
  CLI::App* app = nullptr;
  std::vector<CLI::App*> tables;
  std::string path;  // --config's variable, then the file read (or not found)
  Setting config;    // --config
  bool found = false;
  std::vector<Setting> settings;
  CLI::App* command = nullptr;  // `config`, the same as `config show`
  CLI::App* show = nullptr;
  bool json = false;

  void ReadFile();
  void Print() const;
};

ConfigLayer::ConfigLayer(CLI::App& app, std::vector<CLI::App*> tables)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.app = &app;
  s.tables = std::move(tables);
  s.config.key = "config";
  s.config.option =
      app.add_option("--config", s.path,
                     "configuration file (default: " + DefaultConfigPath() +
                         ", if it exists); flags and environment variables override it")
          ->envname("AGENTSTREAM_CONFIG");
  s.command = app.add_subcommand("config", "the configuration file (default: show)");
  s.command->fallthrough();
  s.command->require_subcommand(0, 1);
  s.show = s.command->add_subcommand(
      "show",
      "print every setting's effective value and where it came from: flag, env VAR, "
      "config FILE or default");
  s.show->fallthrough();
  s.command->add_flag("--json", s.json, "print JSON");
  s.show->add_flag("--json", s.json, "print JSON");
}

ConfigLayer::~ConfigLayer() = default;

void ConfigLayer::Parse(int argc, char** argv) {
  State& s = *state_;
  s.settings.clear();
  Collect(s.app, "", s.config.option, &s.settings);
  for (CLI::App* table : s.tables) Collect(table, table->get_name() + ".", nullptr, &s.settings);
  std::vector<Setting*> all = {&s.config};
  for (Setting& setting : s.settings) all.push_back(&setting);
  {
    HiddenEnvironment hidden(all);
    s.app->parse(argc, argv);
  }
  for (Setting* setting : all) {
    if (setting->option->count() > 0) {
      setting->source = "flag";
      continue;
    }
    const std::string name = setting->option->get_envname();
    const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
    if (value == nullptr || *value == '\0') continue;
    Apply(setting->option, {value}, "agentstream: " + name);
    setting->source = "env " + name;
  }
  s.ReadFile();
}

void ConfigLayer::State::ReadFile() {
  const bool given = config.source != "default";  // then it must exist
  if (!given) path = DefaultConfigPath();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (given) throw CLI::ConfigError("agentstream: config file " + path + " does not exist");
    return;
  }
  const std::string cannot = "agentstream: cannot read config file " + path + ": ";
  if (std::filesystem::is_directory(path, ec)) throw CLI::ConfigError(cannot + "a directory");
  Result<std::string> text = ReadConfigFile(path);
  if (!text.ok()) throw CLI::ConfigError(cannot + text.status().message());
  found = true;
  Result<ConfigFile> file = ParseConfig(*text);
  if (!file.ok()) throw CLI::ConfigError("agentstream: " + path + ": " + file.status().message());

  std::string known_tables;
  for (const CLI::App* table : tables) known_tables += " [" + table->get_name() + "]";
  for (const auto& [name, line] : file->tables) {
    if (std::none_of(tables.begin(), tables.end(),
                     [&name = name](const CLI::App* t) { return t->get_name() == name; })) {
      throw CLI::ConfigError(fmt::format("agentstream: {}: line {}: unknown table [{}] (tables:{})",
                                         path, line, name, known_tables));
    }
  }
  for (const ConfigEntry& entry : file->entries) {
    const std::string key = entry.table.empty() ? entry.key : entry.table + "." + entry.key;
    const std::string where = fmt::format("agentstream: {}: line {}: {}", path, entry.line, key);
    auto setting = std::find_if(settings.begin(), settings.end(),
                                [&](const Setting& s) { return s.key == key; });
    if (setting == settings.end())
      throw CLI::ConfigError(where + ": unknown key (`agentstream config show` lists them)");
    const CLI::Option& option = *setting->option;
    if (entry.array && !IsArray(option))
      throw CLI::ConfigError(where + ": takes one value, not an array");
    if (!entry.values.empty() && entry.kind != KindOf(option)) {
      throw CLI::ConfigError(where + ": expected " + KindName(KindOf(option)) +
                             (IsArray(option) ? " or an array of them" : "") + ", got " +
                             KindName(entry.kind));
    }
    if (setting->source != "default") continue;  // the command line or the environment set it
    // (CLI11 takes no empty list; `[]` leaves a repeatable option as it is: empty)
    if (!entry.values.empty()) Apply(setting->option, entry.values, where);
    setting->source = "config " + path;
  }
}

std::optional<int> ConfigLayer::Run() const {
  const State& s = *state_;
  if (!*s.command) return std::nullopt;
  s.Print();
  return 0;
}

void ConfigLayer::State::Print() const {
  boost::json::object out;
  std::vector<std::array<std::string, 3>> rows;  // key, value, source
  out["config"] = {{"value", path}, {"source", config.source}, {"found", found}};
  rows.push_back(
      {"config", TextValue(Kind::kString, path) + (found ? "" : " (not found)"), config.source});
  for (const Setting& setting : settings) {
    const CLI::Option& option = *setting.option;
    const std::vector<std::string> values = Values(option);
    const Kind kind = KindOf(option);
    boost::json::object item;
    std::string text;
    if (IsSecret(setting)) {
      const bool set = !values.empty() && !values.front().empty();
      item["set"] = set;
      text = set ? "(set)" : "(unset)";
    } else if (IsArray(option)) {
      boost::json::array array;
      text = "[";
      for (const std::string& value : values) {
        array.push_back(JsonValue(kind, value));
        text += (array.size() > 1 ? ", " : "") + TextValue(kind, value);
      }
      item["value"] = std::move(array);
      text += "]";
    } else {
      const std::string value = values.empty() ? "" : values.back();
      item["value"] = JsonValue(kind, value);
      text = TextValue(kind, value);
    }
    item["source"] = setting.source;
    out[setting.key] = std::move(item);
    rows.push_back({setting.key, text, setting.source});
  }
  if (json) {
    fmt::print("{}\n", boost::json::serialize(out));
    return;
  }
  std::size_t key_width = 0, value_width = 0;
  for (const auto& row : rows) {
    key_width = std::max(key_width, row[0].size());
    value_width = std::max(value_width, std::min<std::size_t>(row[1].size(), 40));
  }
  for (const auto& [key, value, source] : rows)
    fmt::print("{:<{}}  {:<{}}  {}\n", key, key_width, value, value_width, source);
}

}  // namespace agentstream::cli
