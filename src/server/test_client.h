// Small blocking clients for the server's tests: one HTTP exchange, a server-sent events reader
// and a WebSocket client, each on a private io_context with a deadline on every operation.
// Not thread-safe; for tests only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace agentstream::server::testing {

using std::chrono::milliseconds;

struct TestResponse {
  int status = 0;                              // 0: no response (connection failed or timed out)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

// One request on a new connection to 127.0.0.1:port.
TestResponse HttpCall(std::uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body = "",
                      const std::map<std::string, std::string>& headers = {},
                      milliseconds timeout = milliseconds(10000));

struct SseEvent {
  std::string event;  // "data", "control"
  std::string data;
};

// GET target with live=sse; Next() returns the next event (comments skipped).
class SseClient {
 public:
  SseClient();
  ~SseClient();
  // The response status (200 on success).
  int Open(std::uint16_t port, const std::string& target);
  std::optional<SseEvent> Next(milliseconds timeout = milliseconds(10000));
  // True once the server closed the stream.
  bool Closed(milliseconds timeout = milliseconds(10000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A raw TCP connection to 127.0.0.1:port, for partial or malformed requests. Its local address
// may be any loopback address ("127.0.0.2"), so that a test can act as another client address.
class RawConnection {
 public:
  RawConnection();
  ~RawConnection();
  bool Connect(std::uint16_t port, const std::string& local_address = "127.0.0.1");
  bool Send(const std::string& bytes);
  // Reads until the server closes the connection or `timeout` passes; what arrived since the
  // last read. `closed()` then says whether the server closed it.
  std::string ReadUntilClosed(milliseconds timeout = milliseconds(10000));
  // Reads until `marker` arrived after the end of the marker the previous call found (true), the
  // server closed, or `timeout` passed.
  bool ReadUntil(const std::string& marker, milliseconds timeout = milliseconds(10000));
  const std::string& received() const;
  bool closed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class WsClient {
 public:
  WsClient();
  ~WsClient();
  // Upgrades at `target`; the HTTP status of the handshake (101 on success, 403, 401, ...).
  int Connect(std::uint16_t port, const std::string& target = "/ws",
              const std::map<std::string, std::string>& headers = {});
  bool Send(const std::string& text);
  // The next text message; nullopt on timeout or close (then close_reason() says why).
  std::optional<std::string> Read(milliseconds timeout = milliseconds(10000));
  // Stops reading from the socket (to make this client slow).
  const std::string& close_reason() const;
  bool closed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::server::testing
