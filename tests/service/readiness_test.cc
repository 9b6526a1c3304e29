// The daemon under systemd's readiness protocol (Type=notify; src/cli/sd_notify.h): the real
// binary, started with NOTIFY_SOCKET naming a datagram socket this test holds, sends READY=1
// only once its port accepts connections, then STOPPING=1 on SIGTERM, and exits cleanly.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "testing/datagram_socket.h"
#include "testing/temp_dir.h"

namespace agentstream {
namespace {

using std::chrono::seconds;

// `agentstream ARGS...` with NOTIFY_SOCKET set and its stdout on a pipe; killed (SIGKILL) and
// reaped when the object goes away unless Wait() reaped it first.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& args, const std::string& notify_socket) {
    std::vector<std::string> words{AGENTSTREAM_BIN};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::setenv("NOTIFY_SOCKET", notify_socket.c_str(), 1);
      ::setenv("AGENTSTREAM_CONFIG", "/dev/null", 1);  // not the user's configuration file
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  pid_t pid() const { return pid_; }
  // What it has written to stdout so far, without waiting for more.
  std::string OutputSoFar() const {
    std::string out;
    char buffer[4096];
    pollfd p{out_, POLLIN, 0};
    while (::poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
      const ssize_t n = ::read(out_, buffer, sizeof buffer);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }
  // Its wait status once it exits.
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

bool Accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  ::close(fd);
  return connected;
}

TEST(ServiceReadiness, ReadyOnceThePortAcceptsStoppingOnSigterm) {
  test_support::TempDir dir("readiness");
  test_support::DatagramSocket manager(dir.File("notify"));
  ASSERT_TRUE(manager.bound());
  Daemon daemon({"--data", dir.File("data"), "serve", "--listen", "127.0.0.1:0"},
                dir.File("notify"));
  ASSERT_GT(daemon.pid(), 0);

  ASSERT_EQ(manager.Receive(seconds(60)), "READY=1");
  // The "serving on" line goes out before READY=1: it is in the pipe already, and the port it
  // names accepts connections.
  const std::string out = daemon.OutputSoFar();
  const std::string prefix = "agentstream: serving on http://127.0.0.1:";
  const std::size_t at = out.find(prefix);
  ASSERT_NE(at, std::string::npos) << "stdout: " << out;
  const int port = std::stoi(out.substr(at + prefix.size()));
  EXPECT_TRUE(Accepts(port)) << "port " << port;

  ASSERT_EQ(::kill(daemon.pid(), SIGTERM), 0);
  EXPECT_EQ(manager.Receive(seconds(60)), "STOPPING=1");
  const int status = daemon.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

}  // namespace
}  // namespace agentstream
