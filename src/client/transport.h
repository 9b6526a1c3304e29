// Transport: the command-line client's HTTP/1.1 transport to the daemon, over the project's one
// HTTP client (net/http_client.h): synchronous (the calling thread does the I/O), one connection
// per request (`Connection: close`), JSON bodies, an optional bearer token, time limits on every
// step, and https when the URL says so (a TLS-terminating proxy in front of the daemon; its
// certificate must chain to the system's trust store, or to SSL_CERT_FILE / SSL_CERT_DIR).
//
// Errors are values: kUnavailable when the daemon cannot be reached or the connection breaks
// ("cannot reach the daemon at URL: ... (is `agentstream serve` running?)"), also for a step
// that exceeds its time limit; kTooLarge when a reply body exceeds `max_body_bytes`; kInternal
// for anything unexpected. An HTTP error status is not an error here: the caller reads it.
//
// Threading: an Transport may be used by one thread at a time; use one per thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/endpoint.h"
#include "core/status.h"
#include "net/http_client.h"

namespace agentstream::client {

struct TransportOptions {
  std::string url = "http://127.0.0.1:7600";  // the daemon (see ParseEndpoint)
  std::string token;                          // sent as `Authorization: Bearer` when not empty
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{60000};  // a whole request and its reply
  // A stream that delivers nothing for this long is treated as broken (the daemon sends
  // keep-alives more often than this, so silence means a dead peer).
  std::chrono::milliseconds stream_idle_timeout{60000};
  std::size_t max_body_bytes = 64u << 20;  // 64 MiB: a reply body larger than this is refused
};

// The status, headers and (for Request) body of a reply.
using HttpResponse = net::HttpReply;

// Receives a stream: `on_head` once with the status and headers, then `on_data` with body bytes
// as they arrive (chunk framing removed). Each returns true to keep reading, false to end the
// stream (Stream then returns OK), or an error, which Stream returns.
struct StreamHandler {
  std::function<Result<bool>(const HttpResponse& head)> on_head;
  std::function<Result<bool>(std::string_view bytes)> on_data;
};

class Transport {
 public:
  // kInvalidArgument for a bad URL (see ParseEndpoint).
  static Result<std::unique_ptr<Transport>> Create(TransportOptions options);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Sends `method target` (the target is appended to the URL's path prefix) with `json_body`
  // when not empty, asking for `accept`, and reads the whole reply.
  Result<HttpResponse> Request(std::string_view method, std::string_view target,
                               std::string_view json_body = {},
                               std::string_view accept = "application/json");

  // GETs `target` with `accept` and feeds the reply to `handler` until the body ends (OK), the
  // handler ends it (OK) or fails (its error), or the connection breaks or stays silent for
  // stream_idle_timeout (kUnavailable), or `stop` (when given) becomes true (OK; checked at least
  // every 100 ms, from any thread).
  Status Stream(std::string_view target, std::string_view accept, const StreamHandler& handler,
                const std::atomic<bool>* stop = nullptr);

  const Endpoint& endpoint() const;

 private:
  Transport(TransportOptions options, Endpoint endpoint);
  // The request for `target` with the client's headers, limits and wording.
  net::HttpRequest For(std::string_view method, std::string_view target,
                       std::string_view accept) const;

  TransportOptions options_;
  Endpoint endpoint_;
};

}  // namespace agentstream::client
