// Test support (header-only, for tests only): a bound Unix datagram socket, as a service manager
// holds the one it names in $NOTIFY_SOCKET (src/cli/sd_notify.h), and what arrives on it.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>

namespace agentstream::test_support {

class DatagramSocket {
 public:
  // Binds `address`: a path, or "@name" for an abstract socket. bound() tells whether it could.
  explicit DatagramSocket(const std::string& address)
      : fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un at{};
    at.sun_family = AF_UNIX;
    if (fd_ < 0 || address.empty() || address.size() >= sizeof(at.sun_path)) return;
    std::memcpy(at.sun_path, address.data(), address.size());
    if (address.front() == '@') at.sun_path[0] = '\0';
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size());
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&at), length) == 0;
  }
  ~DatagramSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  DatagramSocket(const DatagramSocket&) = delete;
  DatagramSocket& operator=(const DatagramSocket&) = delete;

  bool bound() const { return bound_; }
  // The next datagram, or "" when none arrives within `timeout`.
  std::string Receive(std::chrono::milliseconds timeout) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  int fd_;
  bool bound_ = false;
};

}  // namespace agentstream::test_support
