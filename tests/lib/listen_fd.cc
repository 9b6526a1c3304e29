// listen_fd: runs a server that cannot report the port it bound on a listening socket this tool
// made on 127.0.0.1:0, so that tests never guess a free port (HAProxy takes it as `bind fd@N`).
//   listen_fd PORT_FILE FD COMMAND [ARG...]
// Binds and listens, writes the port to PORT_FILE, puts the socket on descriptor FD and replaces
// itself with COMMAND. Exit 2 for bad arguments, 1 when the socket cannot be made or COMMAND run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: listen_fd PORT_FILE FD COMMAND [ARG...]\n");
    return 2;
  }
  const int target = std::atoi(argv[2]);
  if (target < 3) {
    std::fprintf(stderr, "listen_fd: FD must be 3 or more\n");
    return 2;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    std::fprintf(stderr, "listen_fd: cannot listen on 127.0.0.1: %s\n", std::strerror(errno));
    return 1;
  }
  {
    std::ofstream out(argv[1]);
    out << ntohs(address.sin_port) << "\n";
    if (!out.flush()) {
      std::fprintf(stderr, "listen_fd: cannot write %s\n", argv[1]);
      return 1;
    }
  }
  if (fd != target && (::dup2(fd, target) < 0 || ::close(fd) != 0)) {
    std::fprintf(stderr, "listen_fd: cannot move the socket to %d: %s\n", target,
                 std::strerror(errno));
    return 1;
  }
  ::execvp(argv[3], argv + 3);
  std::fprintf(stderr, "listen_fd: cannot run %s: %s\n", argv[3], std::strerror(errno));
  return 1;
}
