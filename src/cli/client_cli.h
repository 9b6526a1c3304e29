// The client commands' command-line surface (docs/cli.md): registers them and the global
// `--url` / `--token` options on the `agentstream` CLI11 app, and runs the one that was parsed.
// The only client file that includes CLI11.
#pragma once

#include <memory>
#include <optional>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace agentstream::cli {

class ClientCommands {
 public:
  // Registers on `app`, which must outlive this object and be parsed before Run().
  explicit ClientCommands(CLI::App& app);
  ~ClientCommands();
  ClientCommands(const ClientCommands&) = delete;
  ClientCommands& operator=(const ClientCommands&) = delete;

  // Runs the client command that was parsed and returns its exit code (0 ok, 1 error from the
  // daemon or the connection, 2 usage); nullopt when the parsed command is not a client command.
  std::optional<int> Run() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace agentstream::cli
