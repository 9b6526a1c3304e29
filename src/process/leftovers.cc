#include "process/leftovers.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

namespace agentstream::process {

namespace {

// The value of `name` in /proc/PID/environ, or nullopt (no such variable, or unreadable).
std::optional<std::string> EnvironValue(const std::filesystem::path& proc,
                                        const std::string& name) {
  std::ifstream in(proc / "environ", std::ios::binary);
  if (!in) return std::nullopt;
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = name + "=";
  std::size_t at = 0;
  while (at < all.size()) {
    const std::size_t end = all.find('\0', at);
    const std::string_view entry(all.data() + at,
                                 (end == std::string::npos ? all.size() : end) - at);
    if (entry.substr(0, key.size()) == key) return std::string(entry.substr(key.size()));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::size_t KillLeftovers(const std::string& daemon_id, const std::string& run) {
  const std::string prefix = daemon_id + "/";
  const pid_t self = ::getpid();
  std::size_t killed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self) continue;
    const std::optional<std::string> marker = EnvironValue(entry.path(), kDaemonMarker);
    if (!marker || marker->rfind(prefix, 0) != 0 || marker->substr(prefix.size()) == run) continue;
    if (::getpgid(pid) == pid) (void)::kill(-pid, SIGKILL);
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace agentstream::process
