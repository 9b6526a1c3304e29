// The configuration file on the command line (docs/cli.md, "The configuration file"): the
// global `--config PATH` (AGENTSTREAM_CONFIG; default config_file.h's DefaultConfigPath()), the
// `config show` command, and the parse that gives each option of the app and of the
// configurable subcommands its value from the command line, else its environment variable,
// else the file, else its default.
//
// CLI11 2.1.2's own file support (App::set_config) is not used: it ranks the file above the
// environment, keeps no types (`listen = 5` would be the string "5") and records no origin. So
// the environment variables of these options are read here, not by CLI11, and the file
// (config_file.h) is applied here, after CLI11 has parsed the command line.
#pragma once

#include <memory>
#include <optional>
#include <vector>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace agentstream::cli {

class ConfigLayer {
 public:
  // Adds `--config` and `config show` to `app`. The file's top-level keys set `app`'s own
  // options (by long name, without the dashes); a [NAME] table sets those of the subcommand NAME
  // among `tables`. `app` and `tables` must outlive this object.
  ConfigLayer(CLI::App& app, std::vector<CLI::App*> tables);
  ~ConfigLayer();
  ConfigLayer(const ConfigLayer&) = delete;
  ConfigLayer& operator=(const ConfigLayer&) = delete;

  // Use instead of app.parse(). Throws CLI::ParseError: CLI11's usage errors, and a
  // CLI::ConfigError naming the file and line for an unreadable file (the default path may be
  // missing, an explicit one may not), an unknown table or key, or a bad value.
  void Parse(int argc, char** argv);

  // Runs `config show` when it was parsed and returns its exit code; nullopt otherwise.
  std::optional<int> Run() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace agentstream::cli
