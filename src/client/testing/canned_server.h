// CannedServer: a loopback TCP server for client tests that answers each accepted connection
// with the next canned byte string, then closes it, and records the request head it received.
// POSIX sockets on one thread; no Beast. Test-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace agentstream::client {

// A TCP socket listening on 127.0.0.1 at a port the kernel picks, with room for `backlog`
// connections that nobody accepts; its port in `*port`. The caller closes it.
inline int ListenOnLoopback(int backlog, std::uint16_t* port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(listener, backlog);
  socklen_t size = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  *port = ntohs(address.sin_port);
  return listener;
}

class CannedServer {
 public:
  // Serves `replies` in order, one per connection; later connections are closed at once.
  explicit CannedServer(std::vector<std::string> replies) : replies_(std::move(replies)) {
    listener_ = ListenOnLoopback(16, &port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The request heads received so far ("GET /v1/... HTTP/1.1\r\nHost: ...").
  std::vector<std::string> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    std::size_t next = 0;
    while (!stop_) {
      pollfd pfd{listener_, POLLIN, 0};
      if (::poll(&pfd, 1, 20) <= 0) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      std::string head = ReadHead(fd);
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(head);
      }
      if (next < replies_.size()) {
        const std::string& reply = replies_[next++];
        for (std::size_t sent = 0; sent < reply.size();) {
          const ssize_t n = ::send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
          if (n <= 0) break;
          sent += static_cast<std::size_t>(n);
        }
      }
      // Half-close, then drain what the client still sends, so that closing with unread bytes
      // does not reset the connection before the client read the reply.
      ::shutdown(fd, SHUT_WR);
      char sink[4096];
      pollfd drain{fd, POLLIN, 0};
      while (::poll(&drain, 1, 1000) > 0 && ::recv(fd, sink, sizeof sink, 0) > 0) {
      }
      ::close(fd);
    }
  }

  static std::string ReadHead(int fd) {
    std::string head;
    char c = 0;
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 2000) <= 0 || ::recv(fd, &c, 1, 0) != 1) break;
      head.push_back(c);
    }
    return head;
  }

  std::vector<std::string> replies_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards requests_
  std::vector<std::string> requests_;
};

// An HTTP/1.1 200 reply streaming `body` as server-sent events (chunked, then cut off when
// `complete` is false, as a crashing daemon would).
inline std::string SseReply(const std::string& body, bool complete) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx", body.size());
  std::string reply =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      std::string(size) + "\r\n" + body + "\r\n";
  if (complete) reply += "0\r\n\r\n";
  return reply;
}

// An HTTP/1.1 reply with a JSON body.
inline std::string JsonReply(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

}  // namespace agentstream::client
