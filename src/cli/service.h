// `agentstream service install|status|uninstall`: the daemon as a systemd service (docs/cli.md;
// docs/operations.md, "Running as a service"). `install` writes the unit the package ships
// (packaging/agentstream-user.service, or packaging/agentstream.service with --system) with an
// ExecStart naming this binary, its data directory and listen address, then runs `systemctl
// daemon-reload` and `enable --now`; `uninstall` disables the service and removes the file. The
// only file of the command that includes CLI11.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace agentstream::cli {

class ServiceCommands {
 public:
  // Registers `service` on `app`, which must outlive this object and be parsed before Run().
  explicit ServiceCommands(CLI::App& app);
  ~ServiceCommands();
  ServiceCommands(const ServiceCommands&) = delete;
  ServiceCommands& operator=(const ServiceCommands&) = delete;

  // Runs the `service` command that was parsed, `data` being the global --data (a system unit
  // keeps /var/lib/agentstream unless --data was given), and returns its exit code: 0 done, 1 a
  // file or systemctl failed, else systemctl's own for `status`. nullopt for another command.
  std::optional<int> Run(const std::string& data) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace agentstream::cli
