#include "cli/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace agentstream::cli {

Status Notify(std::string_view state) {
  const char* variable = std::getenv("NOTIFY_SOCKET");
  if (variable == nullptr || *variable == '\0') return Status::Ok();
  const std::string_view address(variable);
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  if ((address.front() != '/' && address.front() != '@') || address.size() < 2 ||
      address.size() >= sizeof(to.sun_path)) {
    return Error(
        ErrorCode::kInvalidArgument,
        "NOTIFY_SOCKET must be a socket path or an @abstract name, got " + std::string(address));
  }
  std::memcpy(to.sun_path, address.data(), address.size());
  if (address.front() == '@') to.sun_path[0] = '\0';  // abstract: no terminating NUL counted
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size() +
                                             (address.front() == '/' ? 1 : 0));
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error(ErrorCode::kUnavailable, std::string("socket: ") + std::strerror(errno));
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&to), length);
  const int error = errno;
  ::close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return Error(ErrorCode::kUnavailable, "cannot notify the service manager at " +
                                              std::string(address) + ": " +
                                              (sent < 0 ? std::strerror(error) : "short write"));
  }
  return Status::Ok();
}

}  // namespace agentstream::cli
