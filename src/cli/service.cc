#include "cli/service.h"

#include <fmt/core.h>
#include <pwd.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/serve.h"
#include "core/status.h"
#include "net/http_url.h"
#include "process/run_command.h"
#include "server/forwarded.h"
#include "service_units.h"  // generated from packaging/ (src/cli/CMakeLists.txt)

namespace agentstream::cli {

// Named, not anonymous: ServiceCommands::State, which has external linkage, holds the options.
namespace service_internal {

// The options of the `service` commands.
struct Options {
  bool user = false;  // the default; --user only says so
  bool system = false;
  std::string unit_dir;  // "": the manager's directory for local units
  std::string listen = ServeOptions{}.listen;
  // serve's --tls-cert and --tls-key on the ExecStart line (made absolute) when given.
  std::string tls_cert;
  std::string tls_key;
  // serve's --trusted-proxy entries, each on the ExecStart line (checked first).
  std::vector<std::string> trusted_proxies;
  std::string public_url;  // serve's --public-url on the ExecStart line when given
  bool no_enable = false;
  bool no_disable = false;
};

}  // namespace service_internal

namespace {

namespace fs = std::filesystem;
using service_internal::Options;

constexpr const char* kUnitName = "agentstream.service";
// The system unit's data directory (its StateDirectory) and user (packaging/agentstream.sysusers).
constexpr const char* kSystemDataDir = "/var/lib/agentstream";
constexpr const char* kSystemUser = "agentstream";
// `enable --now` waits for the daemon's READY=1, which follows the recovery of its sessions.
constexpr process::Millis kSystemctlTimeout{180000};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// $XDG_CONFIG_HOME, else ~/.config: the user's manager reads units from its systemd/user.
std::string ConfigHome() {
  if (std::string xdg = Env("XDG_CONFIG_HOME"); !xdg.empty()) return xdg;
  const std::string home = Env("HOME");
  return (home.empty() ? "." : home) + "/.config";
}

std::string UnitPath(const Options& o) {
  if (!o.unit_dir.empty()) return o.unit_dir + "/" + kUnitName;
  return (o.system ? std::string("/etc/systemd/system") : ConfigHome() + "/systemd/user") + "/" +
         kUnitName;
}

// " --user" or "": the systemctl (and journalctl) flag of the manager.
const char* ManagerFlag(const Options& o) { return o.system ? "" : " --user"; }

// One word of an ExecStart line: '%' doubled (systemd expands specifiers), '$' too in an
// argument (systemd expands variables there, not in the program's path), quoted when it holds a
// space, a quote, a backslash or a ';'.
Result<std::string> ExecWord(std::string_view word, bool program) {
  std::string out;
  bool quote = word.empty();
  for (const char c : word) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return Error(ErrorCode::kInvalidArgument,
                   "a unit cannot hold a control character: " + std::string(word));
    if (c == '%' || (c == '$' && !program)) out += c;
    if (c == '"' || c == '\\') out += '\\';
    if (c == ' ' || c == '"' || c == '\\' || c == '\'' || c == ';') quote = true;
    out += c;
  }
  return quote ? '"' + out + '"' : out;
}

// The unit the package ships for this manager, with the ExecStart of this binary.
Result<std::string> UnitText(const Options& o, const std::string& data) {
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return Error(ErrorCode::kUnavailable, "cannot find this binary: " + ec.message());
  AS_ASSIGN_OR_RETURN(std::string exec_start, ExecWord(binary.string(), true));
  std::vector<std::string> words = {"--data", data, "serve", "--listen", o.listen};
  if (!o.tls_cert.empty() || !o.tls_key.empty()) {
    words.insert(words.end(), {"--tls-cert", fs::absolute(o.tls_cert, ec).string(), "--tls-key",
                               fs::absolute(o.tls_key, ec).string()});
  }
  if (auto proxies = server::TrustedProxies::Parse(o.trusted_proxies); !proxies.ok())
    return Error(ErrorCode::kInvalidArgument, "--trusted-proxy: " + proxies.status().message());
  for (const std::string& proxy : o.trusted_proxies)
    words.insert(words.end(), {"--trusted-proxy", proxy});
  if (!o.public_url.empty()) {
    if (auto url = net::ParseHttpUrl(o.public_url); !url.ok())
      return Error(ErrorCode::kInvalidArgument, "--public-url: " + url.status().message());
    words.insert(words.end(), {"--public-url", o.public_url});
  }
  for (const std::string& word : words) {
    AS_ASSIGN_OR_RETURN(std::string quoted, ExecWord(word, false));
    exec_start += " " + quoted;
  }
  const std::string_view unit = o.system ? kSystemUnitTemplate : kUserUnitTemplate;
  const std::size_t line = unit.find("\nExecStart=");
  const std::size_t end = unit.find('\n', line + 1);
  if (line == std::string_view::npos || end == std::string_view::npos)
    return Error(ErrorCode::kInternal, "the unit template has no ExecStart line");
  return fmt::format(
      "# Written by `agentstream service install{0}`; `agentstream service uninstall{0}` removes "
      "it.\n{1}\nExecStart={2}{3}",
      o.system ? " --system" : "", unit.substr(0, line), exec_start, unit.substr(end));
}

// Writes `text` to `path` through a temporary file, so that a reader never sees half a unit.
Status WriteUnit(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Error(ErrorCode::kIoError, "cannot write " + temporary);
  }
  fs::rename(temporary, path, ec);
  if (ec) return Error(ErrorCode::kIoError, "cannot write " + path + ": " + ec.message());
  return Status::Ok();
}

// What to do when systemctl failed, from what it printed.
std::string Hint(const Options& o, const std::string& errors) {
  if (errors.find("not been booted with systemd") != std::string::npos)
    return "; systemd does not run this machine, so no service manager can run the unit";
  if (!o.system && errors.find("bus") != std::string::npos)
    return "; no user service manager is reachable: one runs while the user is logged in "
           "(`loginctl enable-linger` keeps it without a login), or install with --system";
  return "";
}

// Runs `systemctl [--user] ARGS`, saying so first, and passes its output on. Its exit code;
// kUnavailable when it cannot run, or fails when `must_succeed`, naming what to do.
Result<int> Systemctl(const Options& o, const std::vector<std::string>& args, bool must_succeed) {
  process::SpawnOptions spawn;
  spawn.argv = {"systemctl"};
  if (!o.system) spawn.argv.emplace_back("--user");
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  std::string command;
  for (const std::string& word : spawn.argv) command += (command.empty() ? "" : " ") + word;
  fmt::print("agentstream: running {}\n", command);
  std::fflush(stdout);
  auto ran = process::RunCommand(spawn, kSystemctlTimeout);
  if (!ran.ok())
    return Error(ErrorCode::kUnavailable, "cannot run systemctl: " + ran.status().message());
  fmt::print("{}", ran->out);
  std::fflush(stdout);
  fmt::print(stderr, "{}", ran->exit.stderr_tail);
  const int code = ran->exit.signal != 0 ? 128 + ran->exit.signal : ran->exit.exit_code;
  if (must_succeed && code != 0) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("`{}` failed ({}){}", command,
                             ran->exit.signal != 0 ? "signal " + std::to_string(code - 128)
                                                   : "exit code " + std::to_string(code),
                             Hint(o, ran->exit.stderr_tail)));
  }
  return code;
}

int Fail(const std::string& message) {
  fmt::print(stderr, "agentstream: {}\n", message);
  return 1;
}

int Install(const Options& o, const std::string& data) {
  auto unit = UnitText(o, data);
  if (!unit.ok()) return Fail(unit.status().message());
  const std::string path = UnitPath(o);
  if (Status written = WriteUnit(path, *unit); !written.ok())
    return Fail(written.message() + (o.system && ::geteuid() != 0 ? " (--system needs root)" : ""));
  fmt::print("agentstream: wrote {}\n", path);
  const std::string env_file =
      (o.system ? std::string("/etc") : ConfigHome()) + "/agentstream/service.env";
  fmt::print("agentstream: the token, if any, goes in {} (AGENTSTREAM_TOKEN=..., mode 0600)\n",
             env_file);
  if (o.no_enable) {
    fmt::print(
        "agentstream: start it with `systemctl{0} daemon-reload && systemctl{0} enable --now "
        "agentstream`\n",
        ManagerFlag(o));
    return 0;
  }
  if (o.system && ::getpwnam(kSystemUser) == nullptr) {
    return Fail(fmt::format(
        "the system unit runs as the user {0}, which does not exist: create it with `useradd "
        "--system --home-dir {1} --shell /usr/sbin/nologin {0}` (the package does)",
        kSystemUser, kSystemDataDir));
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"daemon-reload"}, {"enable", "--now", kUnitName}}) {
    if (auto ran = Systemctl(o, args, true); !ran.ok())
      return Fail(ran.status().message() + "; the unit stays written at " + path);
  }
  fmt::print(
      "agentstream: the service runs: `agentstream service status{0}` shows it, "
      "`journalctl{0} -u agentstream` its log\n",
      o.system ? " --system" : "", ManagerFlag(o));
  return 0;
}

int PrintStatus(const Options& o) {
  const std::string path = UnitPath(o);
  std::error_code ec;
  fmt::print("unit file: {} ({})\n", path, fs::exists(path, ec) ? "present" : "absent");
  std::fflush(stdout);
  auto ran = Systemctl(o, {"status", "--no-pager", kUnitName}, false);
  if (!ran.ok()) return Fail(ran.status().message());
  return *ran;
}

int Uninstall(const Options& o) {
  const std::string path = UnitPath(o);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Fail("no unit at " + path + (o.system ? "" : " (a system unit: --system)"));
  if (!o.no_disable) {
    if (auto ran = Systemctl(o, {"disable", "--now", kUnitName}, true); !ran.ok())
      return Fail(ran.status().message() + "; --no-disable removes the file alone");
  }
  if (!fs::remove(path, ec) || ec)
    return Fail("cannot remove " + path + ": " + (ec ? ec.message() : "gone"));
  fmt::print("agentstream: removed {}\n", path);
  if (!o.no_disable) {
    if (auto ran = Systemctl(o, {"daemon-reload"}, true); !ran.ok())
      return Fail(ran.status().message());
  }
  return 0;
}

}  // namespace

struct ServiceCommands::State {
  using Options = service_internal::Options;
  CLI::App* app = nullptr;
  CLI::App* install = nullptr;
  CLI::App* status = nullptr;
  CLI::App* uninstall = nullptr;
  Options options;
};

ServiceCommands::ServiceCommands(CLI::App& app) : state_(std::make_unique<State>()) {
  state_->app = &app;
  Options& o = state_->options;
  CLI::App* service =
      app.add_subcommand("service", "run the daemon as a systemd service (a user unit by default)");
  service->require_subcommand(1);
  const auto manager = [&o](CLI::App* command) {
    CLI::Option* user = command->add_flag(
        "--user", o.user, "the user's service manager (systemctl --user; the default)");
    command
        ->add_flag("--system", o.system,
                   "the system's service manager: a system unit, run as the user agentstream")
        ->excludes(user);
    command->add_option("--unit-dir", o.unit_dir,
                        "directory of the unit file (default: ~/.config/systemd/user, with "
                        "--system /etc/systemd/system)");
    return command;
  };
  CLI::App* install = state_->install = manager(service->add_subcommand(
      "install",
      "write the unit (ExecStart: this binary), then systemctl daemon-reload and "
      "enable --now; --data names its data directory"));
  install->add_option("--listen", o.listen, "HOST:PORT the service listens on")
      ->capture_default_str();
  install->add_option("--tls-cert", o.tls_cert,
                      "serve TLS with this PEM certificate chain (with --tls-key)");
  install->add_option("--tls-key", o.tls_key, "the PEM private key of --tls-cert");
  install->add_option("--trusted-proxy", o.trusted_proxies,
                      "serve behind this reverse proxy: its address or CIDR (repeatable)");
  install->add_option("--public-url", o.public_url,
                      "the base URL of pairing links (serve --public-url)");
  install->add_flag("--no-enable", o.no_enable, "only write the unit file");
  state_->status = manager(
      service->add_subcommand("status", "show the unit file and systemctl status agentstream"));
  CLI::App* uninstall = state_->uninstall = manager(service->add_subcommand(
      "uninstall", "systemctl disable --now agentstream, then remove the unit file"));
  uninstall->add_flag("--no-disable", o.no_disable, "only remove the unit file");
}

ServiceCommands::~ServiceCommands() = default;

std::optional<int> ServiceCommands::Run(const std::string& data) const {
  const Options& o = state_->options;
  if (*state_->install) {
    const bool data_given = state_->app->get_option("--data")->count() > 0;
    std::error_code ec;
    const fs::path absolute = fs::absolute(data, ec).lexically_normal();
    return Install(o, o.system && !data_given ? kSystemDataDir : absolute.string());
  }
  if (*state_->status) return PrintStatus(o);
  if (*state_->uninstall) return Uninstall(o);
  return std::nullopt;
}

}  // namespace agentstream::cli
