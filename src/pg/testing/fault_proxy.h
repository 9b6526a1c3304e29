// Test support (header-only, for tests only): a proxy between a store and the PostgreSQL server
// of a Unix-socket conninfo, which can cut the connection of the next COMMIT of a writer batch
// (a connection that sent a statement on a stamp table of pg/commit_outcome.h since its last
// COMMIT: any table whose name ends in `commit_stamps`, the session log's `commit_stamps` or the
// generic streams' `ds_commit_stamps`) in one of two ways: before the server has the COMMIT (the
// transaction rolls back when the server sees the connection end), or after the server answered it
// (the transaction committed; the answer never reaches the store). Either way the store sees its
// connection die during COMMIT, with an outcome it cannot know by itself. The COMMIT may come as a
// simple query or in a pipeline (Conn::ExecPipeline). New connections through the proxy work as
// before.
#pragma once

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"
#include "pg/testing/scratch_schema.h"
#include "testing/temp_dir.h"

namespace agentstream::pg::testing {

class FaultProxy {
 public:
  enum class Cut { kNone, kBeforeCommit, kAfterCommit };

  // A proxy of `conninfo` (whose host must be a socket directory) listening in `dir`. kUnavailable
  // when the conninfo names a TCP host or the socket cannot be made.
  static Result<std::unique_ptr<FaultProxy>> Start(const std::string& conninfo,
                                                   const std::string& dir) {
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
    if (options == nullptr) {
      if (error != nullptr) PQfreemem(error);
      return Error(ErrorCode::kInvalidArgument, "an unreadable conninfo");
    }
    std::string host, port = "5432", user, dbname;
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (o->val == nullptr) continue;
      const std::string_view k(o->keyword);
      if (k == "host") host = o->val;
      if (k == "port") port = o->val;
      if (k == "user") user = o->val;
      if (k == "dbname") dbname = o->val;
    }
    PQconninfoFree(options);
    if (host.empty() || host[0] != '/')
      return Error(ErrorCode::kUnavailable, "the proxy needs a Unix-socket server");
    auto proxy = std::unique_ptr<FaultProxy>(new FaultProxy(host + "/.s.PGSQL." + port));
    const std::string path = dir + "/.s.PGSQL." + port;
    proxy->conninfo_ = "host=" + dir + " port=" + port + " user=" + user + " dbname=" + dbname;
    ::unlink(path.c_str());
    proxy->listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = Address(path);
    if (::bind(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(proxy->listen_fd_, 64) != 0)
      return Error(ErrorCode::kUnavailable, "cannot listen on " + path);
    proxy->accepting_ = std::thread([p = proxy.get()] { p->Accept(); });
    return proxy;
  }

  ~FaultProxy() {
    running_ = false;
    if (accepting_.joinable()) accepting_.join();
    std::lock_guard lock(mu_);
    for (std::thread& t : pumps_) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Keyword conninfo of the proxy (host, port, user, dbname).
  const std::string& conninfo() const { return conninfo_; }
  // Arms a cut of the next writer COMMIT.
  void CutNextCommit(Cut how) { armed_ = how; }
  // How many cuts were made.
  int cuts() const { return cuts_.load(); }

 private:
  explicit FaultProxy(std::string upstream) : upstream_(std::move(upstream)) {}

  static sockaddr_un Address(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    return addr;
  }

  void Accept() {
    while (running_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr = Address(upstream_);
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      std::lock_guard lock(mu_);
      pumps_.emplace_back([this, client, server] { Pump(client, server); });
    }
  }

  static bool WriteAll(int fd, const char* data, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, data, n);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  // Reads the server's answers until its ReadyForQuery, and drops them.
  static void SwallowAnswer(int server) {
    std::string seen;
    char buf[4096];
    while (seen.find(std::string_view("Z\0\0\0\x05", 5)) == std::string::npos) {
      pollfd p{server, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return;
      const ssize_t n = ::read(server, buf, sizeof buf);
      if (n <= 0) return;
      seen.append(buf, static_cast<std::size_t>(n));
    }
  }

  void Pump(int client, int server) {
    // COMMIT as a simple query, or as the Parse message of a pipeline (extended protocol: an
    // unnamed statement, no parameter types).
    static constexpr std::string_view kCommit(
        "Q\0\0\0\x0b"
        "COMMIT\0",
        12);
    static constexpr std::string_view kParsedCommit(
        "P\0\0\0\x0e\0"
        "COMMIT\0\0\0",
        15);
    bool stamped = false;  // a statement on a stamp table since the last COMMIT
    char buf[65536];
    while (running_) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0) continue;
      if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
        const ssize_t n = ::read(server, buf, sizeof buf);
        if (n <= 0 || !WriteAll(client, buf, static_cast<std::size_t>(n))) break;
      }
      if ((p[0].revents & (POLLIN | POLLHUP)) == 0) continue;
      const ssize_t n = ::read(client, buf, sizeof buf);
      if (n <= 0) break;
      const std::string_view chunk(buf, static_cast<std::size_t>(n));
      if (chunk.find("commit_stamps") != std::string_view::npos) stamped = true;
      const std::size_t at = std::min(chunk.find(kCommit), chunk.find(kParsedCommit));
      const Cut how = armed_.load();
      if (at != std::string_view::npos && stamped && how != Cut::kNone) {
        armed_ = Cut::kNone;
        ++cuts_;
        if (how == Cut::kBeforeCommit) {
          (void)WriteAll(server, buf, at);
        } else {
          (void)WriteAll(server, buf, chunk.size());
          SwallowAnswer(server);
        }
        break;
      }
      if (at != std::string_view::npos) stamped = false;
      if (!WriteAll(server, buf, chunk.size())) break;
    }
    ::close(client);
    ::close(server);
  }

  const std::string upstream_;
  std::string conninfo_;
  int listen_fd_ = -1;
  std::atomic<bool> running_{true};
  std::atomic<Cut> armed_{Cut::kNone};
  std::atomic<int> cuts_{0};
  std::thread accepting_;
  std::mutex mu_;  // guards pumps_
  std::vector<std::thread> pumps_;
};

// The fixture of the tests of a lost COMMIT answer: a scratch schema of its own on the server
// AGENTSTREAM_TEST_PG names, reached through a FaultProxy listening in a directory of its own.
// Start fails with kNotFound without a server and kUnavailable when the proxy cannot start (a
// test skips on either). On destruction the proxy goes first, then the directory, then the
// schema: close the store first.
struct ProxiedScratch {
  static Result<std::unique_ptr<ProxiedScratch>> Start(std::string_view prefix) {
    const std::optional<std::string> server = ScratchSchema::Server();
    if (!server)
      return Error(ErrorCode::kNotFound, "AGENTSTREAM_TEST_PG names no PostgreSQL server");
    auto out = std::make_unique<ProxiedScratch>();
    auto schema = ScratchSchema::Create(*server, prefix);
    if (!schema.ok())  // a named server that fails fails the test
      return Error(ErrorCode::kInternal, "scratch schema: " + schema.status().ToString());
    out->schema = std::move(schema).value();
    AS_ASSIGN_OR_RETURN(out->proxy, FaultProxy::Start(out->schema->conninfo(), out->dir.path()));
    return out;
  }
  static bool Skips(const Status& status) {
    return status.code() == ErrorCode::kNotFound || status.code() == ErrorCode::kUnavailable;
  }

  std::unique_ptr<ScratchSchema> schema;
  test_support::TempDir dir{"proxy"};
  std::unique_ptr<FaultProxy> proxy;
};

}  // namespace agentstream::pg::testing
